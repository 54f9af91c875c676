/**
 * Review of issue 34 (src/store/upkeep.ts startBusyCheckpoints, src/store/checkpoint-worker.ts): a
 * checkpoint the worker could not make was logged at debug only, without its code. A disk failing
 * the checkpoint's syncs (SQLITE_IOERR_FSYNC), a full disk, a log that can never be folded in and
 * grows: nothing said, while the worker tried every 100 ms. Now a warning with the code, at most
 * one a minute, counting the failures since the one before.
 *
 * Fails on main: the built worker's failed checkpoints give no warning (debug lines only, no code),
 * and a worker that cannot start is a warning without its code.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

  // A real failed checkpoint: the worker copies a page near the end of a 1.2 MB database file in a
  // process whose file size limit is 600 KB (ulimit -f; Node ignores SIGXFSZ, so the write fails
  // with EFBIG): SQLite's SQLITE_IOERR_WRITE, at every try (one every 100 ms). The built code (dist/),
  // as the daemon runs it, in a bounded child process.
  it('the built worker\'s checkpoint that the disk refuses: one warning with SQLITE_IOERR_WRITE, not one per try', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ckpt-fail-')), 'topup.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)');
    const ins = db.prepare('INSERT INTO t (x) VALUES (?)');
    for (let i = 0; i < 300; i++) ins.run('x'.repeat(3000)); // one row a page: about 1.2 MB
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    // A module file, not -e: a worker inherits the process's flags, and --input-type refuses it.
    const script = `
      import { createRequire } from 'node:module';
      const Database = createRequire(${JSON.stringify(join(ROOT, 'package.json'))})('better-sqlite3');
      const { startBusyCheckpoints } = await import(${JSON.stringify(join(ROOT, 'dist', 'store', 'upkeep.js'))});
      const path = ${JSON.stringify(path)};
      const db = new Database(path);
      const lines = [];
      const at = (level) => (fields, msg) => lines.push({ level, fields, msg });
      const log = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
      const c = startBusyCheckpoints(db, path, log, () => true, 5000);
      for (let i = 0; i < 250 && db.pragma('wal_autocheckpoint', { simple: true }) !== 10000; i++) await new Promise((r) => setTimeout(r, 20));
      db.prepare('UPDATE t SET x = ? WHERE id = 300').run('y'.repeat(3000)); // a page past 600 KB, in the log
      await new Promise((r) => setTimeout(r, 1500)); // about 15 tries
      await c.stop();
      try { db.close(); } catch {}
      console.log(JSON.stringify(lines));`;
    const file = join(dirname(path), 'child.mjs');
    writeFileSync(file, script);
    const run = spawnSync('bash', ['-c', 'ulimit -f 600; exec "$0" "$1"', process.execPath, file], { cwd: ROOT, timeout: 30_000, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const lines = JSON.parse(run.stdout.trim().split('\n').pop()!) as Line[];
    const warns = lines.filter((l) => l.level === 'warn');
    expect(warns, run.stdout).toHaveLength(1);
    expect(warns[0]!.fields).toMatchObject({ code: 'SQLITE_IOERR_WRITE', failed: 1 });
    expect(warns[0]!.msg).toMatch(/checkpoint of the store failed \(SQLITE_IOERR_WRITE/);
    // Nothing else said it at debug instead.
    expect(lines.filter((l) => l.level === 'debug' && /checkpoint/.test(l.msg))).toEqual([]);
  }, 40_000);

  it('a worker that cannot start (another connection holds the store exclusively) is a warning with the code too', async () => {
    const { startBusyCheckpoints } = (await import(join(ROOT, 'dist', 'store', 'upkeep.js'))) as typeof Upkeep;
    const path = join(mkdtempSync(join(tmpdir(), 'ckpt-fail-')), 'topup.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (x TEXT)');
    db.pragma('locking_mode = EXCLUSIVE');
    db.prepare('INSERT INTO t VALUES (?)').run('x');
    const { lines, log } = logs();
    const checkpoints = startBusyCheckpoints(db, path, log, () => true, 5_000);
    try {
      for (let i = 0; i < 100 && !lines.some((l) => l.level === 'warn'); i++) await sleep(50);
      const warns = lines.filter((l) => l.level === 'warn');
      expect(warns, JSON.stringify(lines)).toHaveLength(1);
      // The error crosses the thread as a plain object: its code was lost (the line said `{}`).
      expect(warns[0]!.fields).toMatchObject({ code: 'SQLITE_BUSY' });
      expect(warns[0]!.msg).toMatch(/checkpoint worker failed.*SQLITE_BUSY/);
    } finally {
      await checkpoints.stop();
      db.close();
    }
  });
});
