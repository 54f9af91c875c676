/**
 * The whole-home aggregates of /metrics are read in a worker thread with its own read-only
 * connection (metrics/read-worker.ts), so a scrape of a home with millions of rows never holds
 * the daemon's event loop. Built code (dist/) runs the worker; a source run falls back to the
 * daemon's connection, with the same answer.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { SlowReads as SourceSlowReads } from '../../src/metrics/slow-reads.js';
import { ROOT } from '../e2e/harness.js';

function home(rows: number): { db: ReturnType<typeof openDb>; path: string } {
  const path = join(mkdtempSync(join(tmpdir(), 'slow-reads-')), 'topup.db');
  const db = openDb(path);
  db.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at) VALUES ('b1', 1, 'b', 'b.csv', 'x', 'h', 'inbox', 'open', 1, 0)`).run();
  const ins = db.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, updated_at) VALUES ('b1', ?, ?, '[]', ?, 0)`);
  db.transaction(() => {
    for (let i = 0; i < rows; i++) ins.run(i, i + 2, i % 4 === 0 ? 'pending' : 'completed');
  })();
  return { db, path };
}

describe('aggregates off the daemon thread', () => {
  it('the built worker answers rows by state from its own connection, and the event loop runs meanwhile', async () => {
    const { SlowReads } = (await import(join(ROOT, 'dist', 'metrics', 'slow-reads.js'))) as { SlowReads: typeof SourceSlowReads };
    const { db, path } = home(400_000);
    const slow = new SlowReads(db, path);
    await slow.query('rowsByState'); // starts the worker
    expect(slow.usesWorker).toBe(true);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const started = performance.now();
    const rows = await slow.query<{ state: string; n: number }>('rowsByState');
    const took = performance.now() - started;
    clearInterval(timer);
    expect(Object.fromEntries(rows.map((r) => [r.state, r.n]))).toEqual({ pending: 100_000, completed: 300_000 });
    // Timers fired while the count ran: it did not run on this thread.
    expect(ticks).toBeGreaterThan(Math.min(5, took / 4));
    await slow.close();
    db.close();
  });

  it('without a built worker (a source run) the same query runs on the given connection', async () => {
    const { db, path } = home(10);
    const slow = new SourceSlowReads(db, path);
    const rows = await slow.query<{ state: string; n: number }>('rowsByState');
    expect(slow.usesWorker).toBe(false);
    expect(Object.fromEntries(rows.map((r) => [r.state, r.n]))).toEqual({ pending: 3, completed: 7 });
    await slow.close();
    db.close();
  });
});
