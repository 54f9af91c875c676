/**
 * Issue 30 (a new-user trial): during a second pause, `topup doctor` and the console quoted the
 * previous pause's read probe ("last probed 07:03:53 … answered: orders are tried again") as if it
 * were this pause's. A probe older than the pause in force is not quoted for it. A real SQLite store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { MetaStore } from '../../src/store/meta.js';
import { Pauses, pauseView } from '../../src/account/pauses.js';
import { systemClock, type Clock } from '../../src/kernel/clock.js';

class StepClock implements Clock {
  wall = Date.UTC(2026, 10, 28, 7, 3, 0);
  monoMs = 5_000_000;
  now = (): number => this.wall;
  mono = (): number => this.monoMs;
  sleep = systemClock.sleep;
  yield = systemClock.yield;
  every = systemClock.every;
  pass(ms: number): void {
    this.wall += ms;
    this.monoMs += ms;
  }
}

let dir = '';
let db: Db | undefined;
afterEach(() => {
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the pause line during a second pause', () => {
  it('does not quote the read probe of the pause before; a probe of this pause is quoted', () => {
    dir = mkdtempSync(join(tmpdir(), 'pause-view-'));
    db = openDb(join(dir, 'topup.db'));
    const meta = new MetaStore(db);
    const clock = new StepClock();
    const p = new Pauses(meta, 30_000, clock, 'supa');

    // First pause, probed and lifted by a read, then ended by an order placed.
    p.pause('maintenance', 'MAINTENANCE', 'MAINTENANCE');
    clock.pass(53_000);
    p.probed(true, 'answered (balance 100 USD): orders are tried again; the next order tells whether MAINTENANCE is over');
    expect(pauseView(meta, 'supa', clock).text).toMatch(/last probed 2026-11-28T07:03:53Z/);
    p.clear();

    // A second pause, minutes later, not probed yet.
    clock.pass(4 * 60_000);
    p.pause('maintenance', 'MAINTENANCE', 'MAINTENANCE');
    const second = pauseView(meta, 'supa', clock);
    expect(second.text).toMatch(/^maintenance MAINTENANCE: orders paused by the API since 2026-11-28T07:07:53Z/);
    expect(second.text).not.toMatch(/07:03:53|orders are tried again/);
    expect(second.text).toMatch(/not probed yet/);
    expect(second.lastProbe).toBe(null);

    // Its own probe is quoted.
    clock.pass(30_000);
    p.probed(true, 'answered (balance 100 USD), but an order met MAINTENANCE 30 s ago: still paused');
    const probed = pauseView(meta, 'supa', clock);
    expect(probed.text).toMatch(/last probed 2026-11-28T07:08:23Z \(GET \/balance\): answered .*still paused/);
    expect(probed.lastProbe?.at).toBe(clock.wall);
  });
});
