/** store/event-ids.ts: the floor rises with time, never lowers a sequence, and stays a cursor the feed reads. */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { EVENT_ID_EPOCH_MS, eventIdFloor, raiseEventIds } from '../../src/store/event-ids.js';

describe('the event id floor', () => {
  it('fits the feed cursor (evt_ and at most 15 digits) until 2050, and rises with time', () => {
    expect(String(eventIdFloor(Date.UTC(2050, 0, 1))).length).toBeLessThanOrEqual(15);
    expect(eventIdFloor(EVENT_ID_EPOCH_MS + 1)).toBeGreaterThan(eventIdFloor(EVENT_ID_EPOCH_MS));
  });
  it('raises the next id of a table with and without events, and never lowers it', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE order_events (id INTEGER PRIMARY KEY AUTOINCREMENT, x TEXT)');
    const now = Date.UTC(2026, 10, 28);
    raiseEventIds(db, now);
    db.prepare('INSERT INTO order_events (x) VALUES (?)').run('a');
    const first = (db.prepare('SELECT max(id) AS id FROM order_events').get() as { id: number }).id;
    expect(first).toBe(eventIdFloor(now) + 1);
    // An earlier clock never takes the sequence back.
    raiseEventIds(db, now - 60_000);
    db.prepare('INSERT INTO order_events (x) VALUES (?)').run('b');
    expect((db.prepare('SELECT max(id) AS id FROM order_events').get() as { id: number }).id).toBe(first + 1);
  });
});
