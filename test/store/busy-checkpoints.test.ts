/**
 * Checkpoints off the event loop while the daemon works (store/upkeep.ts startBusyCheckpoints,
 * store/checkpoint-worker.ts; issue 34): a worker thread's own connection folds the write-ahead
 * log into the database file, while the writer's connection checkpoints only past
 * BUSY_AUTOCHECKPOINT_PAGES. Built code (dist/) runs the worker, as the daemon does; a source run
 * has no worker file and leaves SQLite's default.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import type * as Upkeep from '../../src/store/upkeep.js';
import { ROOT } from '../e2e/harness.js';

const autocheckpoint = (db: ReturnType<typeof openDb>): unknown => db.pragma('wal_autocheckpoint', { simple: true });

async function until(what: () => boolean, ms = 5_000): Promise<boolean> {
  for (let t = 0; t < ms && !what(); t += 50) await sleep(50);
  return what();
}

describe('checkpoints off the event loop', () => {
  it('while busy, the built worker folds the log into the database as the writer commits; the writer\'s own checkpoint waits for 10,000 pages; idle, the worker ends and SQLite\'s default is back', async () => {
    const { startBusyCheckpoints, BUSY_AUTOCHECKPOINT_PAGES } = (await import(join(ROOT, 'dist', 'store', 'upkeep.js'))) as typeof Upkeep;
    const path = join(mkdtempSync(join(tmpdir(), 'busy-ckpt-')), 'topup.db');
    const db = openDb(path);
    db.pragma('wal_checkpoint(TRUNCATE)');
    let busy = false;
    const checkpoints = startBusyCheckpoints(db, path, undefined, () => busy, 400);
    // Not busy: no worker, SQLite's own checkpoints.
    await sleep(300);
    expect(autocheckpoint(db)).toBe(1_000);
    busy = true;
    expect(await until(() => autocheckpoint(db) === BUSY_AUTOCHECKPOINT_PAGES)).toBe(true);
    const before = statSync(path).size;
    // About 2,000 pages of commits, each its own transaction: under the writer's threshold, so only
    // the worker can have put them into the database file.
    db.pragma('synchronous = OFF'); // 2,000 commits, not 2,000 fsyncs: the worker's part is what is tested
    const put = db.prepare(`INSERT INTO meta (key, value) VALUES (?, ?)`);
    for (let i = 0; i < 2_000; i++) put.run(`k${i}`, 'x'.repeat(3_000));
    expect(await until(() => statSync(path).size > before + 1_000_000)).toBe(true);
    // Idle past the linger: the worker ends, the writer checkpoints on its own again.
    busy = false;
    expect(await until(() => autocheckpoint(db) === 1_000)).toBe(true);
    await checkpoints.stop();
    expect(autocheckpoint(db)).toBe(1_000);
    expect(db.prepare(`SELECT count(*) FROM meta WHERE key LIKE 'k%'`).pluck().get()).toBe(2_000);
    db.close();
  });
});
