/**
 * Review of issue 34 (src/store/upkeep.ts startBusyCheckpoints, src/store/checkpoint-worker.ts): a
 * checkpoint the worker could not make was logged at debug only, without its code. A disk failing
 * the checkpoint's syncs (SQLITE_IOERR_FSYNC), a full disk, a log that can never be folded in and
 * grows: nothing said, while the worker tried every 100 ms. Now a warning with the code, at most
 * one a minute, counting the failures since the one before.
 *
 * Fails on main: the built worker's failures give no warning (debug lines only, no code).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/kernel/log.js';
import type * as Upkeep from '../../src/store/upkeep.js';
import { checkpointFailures, CHECKPOINT_WARN_EVERY_MS } from '../../src/store/upkeep.js';
import { ROOT } from '../e2e/harness.js';

type Line = { level: string; fields: Record<string, unknown>; msg: string };
const logs = (): { lines: Line[]; log: Logger } => {
  const lines: Line[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg?: string): void => void lines.push({ level, fields, msg: msg ?? '' });
  return { lines, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => ({}) } as unknown as Logger };
};

describe('failed checkpoints of the worker', () => {
  it('warn with the code, at most once a minute, counting the failures since the last warning', () => {
    const { lines, log } = logs();
    let t = 0;
    const failed = checkpointFailures(log, () => t);
    failed({ error: 'disk I/O error', code: 'SQLITE_IOERR_FSYNC' });
    for (let i = 0; i < 599; i++) {
      t += 100;
      failed({ error: 'disk I/O error', code: 'SQLITE_IOERR_FSYNC' });
    }
    // 600 failures in 59.9 s: one warning.
    expect(lines.map((l) => l.level)).toEqual(['warn']);
    expect(lines[0]!.fields).toMatchObject({ code: 'SQLITE_IOERR_FSYNC', failed: 1 });
    expect(lines[0]!.msg).toMatch(/SQLITE_IOERR_FSYNC/);
    t = CHECKPOINT_WARN_EVERY_MS;
    failed({ error: 'database or disk is full', code: 'SQLITE_FULL' });
    expect(lines).toHaveLength(2);
    expect(lines[1]!.fields).toMatchObject({ code: 'SQLITE_FULL', failed: 600 });
  });

  it('the built worker\'s failures reach the log as a warning with their code (a store it cannot read: another connection holds it exclusively)', async () => {
    const { startBusyCheckpoints } = (await import(join(ROOT, 'dist', 'store', 'upkeep.js'))) as typeof Upkeep;
    const path = join(mkdtempSync(join(tmpdir(), 'ckpt-fail-')), 'topup.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x TEXT)');
    // Exclusive locking: the wal-index lives in this connection's memory, and no other connection
    // (the worker's) can read the database at all: each of its checkpoints fails.
    db.pragma('locking_mode = EXCLUSIVE');
    db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(1000));
    const { lines, log } = logs();
    const checkpoints = startBusyCheckpoints(db, path, log, () => true, 5_000);
    try {
      for (let i = 0; i < 60 && !lines.some((l) => l.level === 'warn'); i++) await sleep(50);
      await sleep(600); // several more failures (one every 100 ms): still one warning
      const warns = lines.filter((l) => l.level === 'warn');
      expect(warns, JSON.stringify(lines)).toHaveLength(1);
      expect(warns[0]!.fields.code).toMatch(/^SQLITE_/);
      expect(warns[0]!.msg).toMatch(/checkpoint of the store failed/);
    } finally {
      await checkpoints.stop();
      db.close();
    }
  });
});
