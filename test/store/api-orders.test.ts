/**
 * What the store itself enforces for API orders (migration 12), whichever code path writes: an API
 * order goes only into the open API batch of a day, an API batch is never done with a live order,
 * and every change of an API order's public status is an order_events row written in the same
 * transaction, with the status src/orders/types.ts publicStatus gives (one mapping, said twice:
 * held equal here for every pair of states).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { ROW_STATES } from '../../src/store/row-states.js';
import { publicStatus } from '../../src/orders/types.js';
import { tempHome, type TempHome } from '../e2e/harness.js';
import { join } from 'node:path';
import { Listing } from '../../src/store/listing.js';
import { BatchStore } from '../../src/store/batches.js';

let homes: TempHome[] = [];
let dbs: Db[] = [];
afterEach(() => {
  for (const d of dbs.splice(0)) d.close();
  for (const h of homes.splice(0)) h.remove();
});

function db(): Db {
  const home = tempHome();
  homes.push(home);
  const d = openDb(join(home.dir, 'topup.db'));
  dbs.push(d);
  return d;
}

function batch(d: Db, id: string, state: string, apiDay: string | null): void {
  d.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at, api_day)
    VALUES (?, (SELECT coalesce(max(seq), 0) + 1 FROM batches), ?, ?, '', ?, 'submit', ?, 1, 0, ?)`).run(id, id, id, `h:${id}`, state, apiDay);
}

function apiRow(d: Db, batchId: string, idx: number, state = 'pending'): void {
  d.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, updated_at, api_body_hash) VALUES (?, ?, ?, '[]', ?, ?, 1000, 'h')`)
    .run(batchId, idx, idx + 2, state, `T-${batchId}-${idx}`);
}

describe('API orders in the store', () => {
  it('an API order is stored only in an open API batch: not in a file batch, a claimed or a done one', () => {
    const d = db();
    batch(d, 'b261126-aaaaaa', 'open', '2026-11-26');
    batch(d, 'b261126-bbbbbb', 'open', null);
    batch(d, 'b261125-cccccc', 'done', '2026-11-25');
    apiRow(d, 'b261126-aaaaaa', 0);
    expect(() => apiRow(d, 'b261126-bbbbbb', 0)).toThrow(/open API batch/);
    expect(() => apiRow(d, 'b261125-cccccc', 0)).toThrow(/open API batch/);
  });

  it('two API batches cannot share a day', () => {
    const d = db();
    batch(d, 'b261126-aaaaaa', 'open', '2026-11-26');
    expect(() => batch(d, 'b261126-dddddd', 'open', '2026-11-26')).toThrow(/UNIQUE/);
  });

  it('an API batch is done only when every order in it has ended', () => {
    const d = db();
    batch(d, 'b261126-aaaaaa', 'open', '2026-11-26');
    apiRow(d, 'b261126-aaaaaa', 0);
    apiRow(d, 'b261126-aaaaaa', 1, 'completed');
    expect(() => d.prepare(`UPDATE batches SET state = 'done' WHERE id = 'b261126-aaaaaa'`).run()).toThrow(/every order in it has ended/);
    d.prepare(`UPDATE rows SET state = 'rejected' WHERE idx = 0`).run();
    d.prepare(`UPDATE batches SET state = 'done' WHERE id = 'b261126-aaaaaa'`).run();
  });

  it('every change of public status is an event, in the same transaction, with the status publicStatus gives (every pair of states)', () => {
    const d = db();
    batch(d, 'b261126-aaaaaa', 'open', '2026-11-26');
    let idx = 0;
    for (const from of ROW_STATES) {
      for (const to of ROW_STATES) {
        apiRow(d, 'b261126-aaaaaa', idx, from);
        const before = (d.prepare('SELECT count(*) AS n FROM order_events').get() as { n: number }).n;
        d.prepare('UPDATE rows SET state = ? WHERE idx = ?').run(to, idx);
        const events = d.prepare('SELECT type, status, row_state FROM order_events WHERE id > (SELECT max(id) FROM order_events) - 1 AND idx = ? ORDER BY id').all(idx) as { type: string; status: string; row_state: string }[];
        const after = (d.prepare('SELECT count(*) AS n FROM order_events').get() as { n: number }).n;
        if (publicStatus(from) === publicStatus(to)) {
          expect(after - before, `${from} → ${to}`).toBe(0);
        } else {
          expect(after - before, `${from} → ${to}`).toBe(1);
          const last = events.at(-1)!;
          expect(last.status, `${from} → ${to}`).toBe(publicStatus(to));
          expect(last.type).toBe(from === 'review' ? 'order.resolved' : `order.${publicStatus(to)}`);
          expect(last.row_state).toBe(to);
        }
        idx++;
      }
    }
    // The insert's own event: every API order starts with one.
    expect((d.prepare(`SELECT count(*) AS n FROM order_events WHERE type = 'order.accepted' AND status = 'accepted'`).get() as { n: number }).n).toBeGreaterThanOrEqual(ROW_STATES.length);
  });

  it('a file row changes no event; an event is undone with its change', () => {
    const d = db();
    batch(d, 'b261126-bbbbbb', 'open', null);
    d.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, updated_at) VALUES ('b261126-bbbbbb', 0, 2, '[]', 'pending', 'F-1', 1)`).run();
    d.prepare(`UPDATE rows SET state = 'sending' WHERE trxid = 'F-1'`).run();
    expect(d.prepare('SELECT count(*) AS n FROM order_events').get()).toEqual({ n: 0 });
    batch(d, 'b261126-aaaaaa', 'open', '2026-11-26');
    apiRow(d, 'b261126-aaaaaa', 0);
    expect(() => d.transaction(() => {
      d.prepare(`UPDATE rows SET state = 'sending' WHERE batch_id = 'b261126-aaaaaa'`).run();
      throw new Error('crash before commit');
    })()).toThrow();
    expect((d.prepare('SELECT status FROM order_events ORDER BY id').all() as { status: string }[]).map((e) => e.status)).toEqual(['accepted']);
  });

  it('the console\'s batch list filters by source: the order API\'s day batches, or files', () => {
    const d = db();
    batch(d, 'b261126-aaaaaa', 'open', '2026-11-26');
    batch(d, 'b261126-bbbbbb', 'open', null);
    const listing = new Listing(d, new BatchStore(d));
    expect(listing.batches({ source: 'api', limit: 10 }).batches.map((b) => b.id)).toEqual(['b261126-aaaaaa']);
    expect(listing.batches({ source: 'file', limit: 10 }).batches.map((b) => b.id)).toEqual(['b261126-bbbbbb']);
    expect(listing.batches({ limit: 10 }).batches).toHaveLength(2);
  });
});
