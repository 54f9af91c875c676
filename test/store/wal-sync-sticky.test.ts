/**
 * What a failed sync of the store leaves stopped (review of issue 34, findings 1 and 4): the log
 * sync's first error is sticky, the store's health holds sending until a restart on it (and on
 * SQLite's own SQLITE_IOERR_FSYNC / SQLITE_IOERR_WRITE), the next start checks the store before it
 * sends, and WalSync.close() never closes the descriptor under a running sync.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StoreHealth, storeDownAdvice, storeDownSentence } from '../../src/dispatch/store-health.js';
import type { Logger } from '../../src/kernel/log.js';
import { checkStoreAtStart } from '../../src/store/start-check.js';
import { WAL_SYNC_FAILED, WalSync, type SyncFile } from '../../src/store/wal-sync.js';
import { ROOT } from '../e2e/harness.js';

const eio = (): NodeJS.ErrnoException => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

/** A database in WAL mode with one commit, so its log exists. */
function walDb(): { path: string; db: Database.Database } {
  const path = join(mkdtempSync(join(tmpdir(), 'walsticky-')), 'a.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x INTEGER)');
  db.prepare('INSERT INTO t VALUES (1)').run();
  return { path, db };
}

type TestLog = Pick<Logger, 'debug' | 'error' | 'info' | 'warn'>;
const logs = (): { lines: { level: string; msg: string }[]; log: TestLog } => {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_fields: object, msg?: string): void => void lines.push({ level, msg: msg ?? '' });
  return { lines, log: { debug: at('debug'), error: at('error'), info: at('info'), warn: at('warn') } as unknown as TestLog };
};

describe('WalSync after a failed sync', () => {
  it('rejects every later durable() with the first error (code SQLITE_IOERR_FSYNC, the errno as its cause), without syncing again', async () => {
    const { path, db } = walDb();
    let calls = 0;
    const wal = new WalSync(path, (_fd, done) => {
      calls++;
      done(calls === 1 ? eio() : null);
    });
    const first = await wal.durable().then(() => null, (err: unknown) => err as Error & { code: string; cause: { code: string } });
    expect(first?.code).toBe(WAL_SYNC_FAILED);
    expect(first?.cause.code).toBe('EIO');
    for (let i = 0; i < 3; i++) await expect(wal.durable()).rejects.toBe(first);
    expect(calls).toBe(1);
    expect(wal.failed).toBe(first);
    await wal.close();
    db.close();
  });

  it('a sync queued behind the one that fails is not started: its callers get the same error', async () => {
    const { path, db } = walDb();
    let finish: ((err: NodeJS.ErrnoException | null) => void) | null = null;
    let calls = 0;
    const wal = new WalSync(path, (_fd, done) => {
      calls++;
      finish = done;
    });
    const a = wal.durable();
    const b = wal.durable(); // queued: starts after a
    finish!(eio());
    await expect(a).rejects.toMatchObject({ code: WAL_SYNC_FAILED });
    await expect(b).rejects.toMatchObject({ code: WAL_SYNC_FAILED });
    expect(calls).toBe(1);
    await wal.close();
    db.close();
  });
});

describe('WalSync.close()', () => {
  // A sync that calls back before it returns (a test's, a fault injector's) once left WalSync holding
  // it as the running sync for ever: close() then awaited that settled promise in a loop, a chain of
  // microtasks that never lets the event loop turn, so no timer (not even the test runner's
  // timeout) could end it. Run in a child process the parent kills after 20 s, so a hang fails
  // here instead of holding the test worker; the built code (dist/, the global setup's build).
  it('returns after a sync that called back at once, failed or not (a bounded child process)', () => {
    const script = `
      import Database from 'better-sqlite3';
      import { mkdtempSync } from 'node:fs';
      import { join } from 'node:path';
      import { tmpdir } from 'node:os';
      import { WalSync } from ${JSON.stringify(join(ROOT, 'dist', 'store', 'wal-sync.js'))};
      for (const fails of [false, true]) {
        const path = join(mkdtempSync(join(tmpdir(), 'walsticky-')), 'a.db');
        const db = new Database(path);
        db.pragma('journal_mode = WAL');
        db.exec('CREATE TABLE t (x INTEGER)');
        const wal = new WalSync(path, (_fd, done) => done(fails ? Object.assign(new Error('EIO'), { code: 'EIO' }) : null));
        const first = await wal.durable().then(() => 'ok', (e) => e.code);
        const second = await wal.durable().then(() => 'ok', (e) => e.code);
        await wal.close();
        db.close();
        console.log(first + ' ' + second + ' closed');
      }`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, timeout: 20_000, encoding: 'utf8' });
    expect(run.signal, `the child hung and was killed; stderr: ${run.stderr}`).toBeNull();
    expect(run.stdout.trim().split('\n')).toEqual(['ok ok closed', `${WAL_SYNC_FAILED} ${WAL_SYNC_FAILED} closed`]);
    expect(run.status).toBe(0);
  }, 30_000);

  it('waits for the running sync before closing its descriptor, and durable() rejects once closed', async () => {
    const { path, db } = walDb();
    let finish: ((err: NodeJS.ErrnoException | null) => void) | null = null;
    let fdSynced = -1;
    const sync: SyncFile = (fd, done) => {
      fdSynced = fd;
      finish = done;
    };
    const wal = new WalSync(path, sync);
    const running = wal.durable();
    let closed = false;
    const closing = wal.close().then(() => void (closed = true));
    await new Promise((r) => setTimeout(r, 20));
    // The sync is still on the pool: its descriptor must still be open (fstat would fail with EBADF).
    expect(closed).toBe(false);
    expect(() => fstatSync(fdSynced)).not.toThrow();
    await expect(wal.durable()).rejects.toMatchObject({ code: 'SQLITE_MISUSE' });
    finish!(null);
    await running;
    await closing;
    expect(closed).toBe(true);
    expect(() => fstatSync(fdSynced)).toThrow(/EBADF/);
    db.close();
  });

  it('a log that cannot be opened rejects that call only: the next one tries again', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'walsticky-')), 'none.db');
    let calls = 0;
    const wal = new WalSync(path, (_fd, done) => {
      calls++;
      done(null);
    });
    await expect(wal.durable()).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(wal.durable()).rejects.toMatchObject({ code: 'ENOENT' });
    expect(calls).toBe(0);
    expect(wal.failed).toBeNull();
    await wal.close();
  });
});

describe('the store health after the disk failed a write or a sync', () => {
  for (const code of [WAL_SYNC_FAILED, 'SQLITE_IOERR_WRITE']) {
    it(`${code}: sending stays stopped until a restart, whatever succeeds later; said once, with what to do`, () => {
      const { lines, log } = logs();
      const changes: unknown[] = [];
      const health = new StoreHealth(log, (down) => changes.push(down));
      health.failed(Object.assign(new Error('disk I/O error'), { code }), 1_000, 0);
      expect(health.blocked(0)).toBe(true);
      health.ok(2_000);
      // Far past any back-off: still stopped.
      expect(health.blocked(10 * 60_000)).toBe(true);
      // A later, passing failure of another kind does not replace the cause.
      health.failed(Object.assign(new Error('full'), { code: 'SQLITE_FULL' }), 3_000, 5_000);
      health.ok(4_000);
      expect(health.down?.code).toBe(code);
      expect(health.blocked(20 * 60_000)).toBe(true);
      expect(changes).toHaveLength(1);
      const errors = lines.filter((l) => l.level === 'error');
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toMatch(/until the daemon is restarted/);
      expect(errors[0]!.msg).toMatch(/check the disk/);
      expect(lines.some((l) => /sending resumed/.test(l.msg))).toBe(false);
      expect(storeDownSentence(code)).toMatch(/disk failed a write or a sync/);
      expect(storeDownAdvice(code)).toMatch(/until the daemon is restarted/);
    });
  }

  it('a passing failure (SQLITE_FULL) still ends with the first write that succeeds', () => {
    const { log } = logs();
    const health = new StoreHealth(log);
    health.failed(Object.assign(new Error('full'), { code: 'SQLITE_FULL' }), 1_000, 0);
    expect(health.blocked(0)).toBe(true);
    health.ok(2_000);
    expect(health.blocked(0)).toBe(false);
    expect(storeDownAdvice('SQLITE_FULL')).toMatch(/resumes by itself/);
  });
});

describe('the store checked at start', () => {
  it('folds the log into the database and answers ok for a sound store', () => {
    const { path, db } = walDb();
    const { lines, log } = logs();
    checkStoreAtStart(db, log, { replicated: false });
    expect(lines).toEqual([{ level: 'debug', msg: 'store checked at start: ok' }]);
    // TRUNCATE: the log is empty.
    expect((db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log).toBe(0);
    db.close();
    void path;
  });

  it('refuses a store with a damaged page (E_STORE, naming quick_check and what to do)', () => {
    const { path, db } = walDb();
    db.exec('CREATE TABLE pad (v TEXT)');
    const ins = db.prepare('INSERT INTO pad VALUES (?)');
    for (let i = 0; i < 200; i++) ins.run('y'.repeat(500));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    // A b-tree page of the table overwritten with garbage (what a lost write-back can leave).
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 4096 * 3);
    closeSync(fd);
    const again = new Database(path);
    const { log } = logs();
    expect(() => checkStoreAtStart(again, log, { replicated: false })).toThrow(expect.objectContaining({ code: 'E_STORE', message: expect.stringMatching(/quick_check.*restore/) }));
    again.close();
  });
});
