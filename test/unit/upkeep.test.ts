/**
 * SQLite upkeep on real database files: the write-ahead log's size limit, the checkpoint at a stop
 * and when idle (while another process keeps the database open, so SQLite does not do it by itself
 * on close), the call log pruned at every start, and the sizes the doctor reports.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { JOURNAL_SIZE_LIMIT, PAGE_CACHE_KIB, openDb, type Db } from '../../src/store/db.js';
import { checkpoint, databaseSize, describeSize, startUpkeep } from '../../src/store/upkeep.js';
import { RateScheduler } from '../../src/account/rate-gate.js';
import { loadConfig } from '../../src/config/config.js';
import { openRuntime } from '../../src/runtime.js';
import { silentLogger } from '../../src/kernel/log.js';
import { systemClock } from '../../src/kernel/clock.js';

const dirs: string[] = [];
const opened: Db[] = [];
afterEach(() => {
  for (const d of opened.splice(0)) if (d.open) d.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'upkeep-'));
  dirs.push(d);
  return d;
};
const size = (p: string): number => {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
};
/** Another process's connection: SQLite folds the log in by itself only when the LAST connection closes. */
const otherProcess = (path: string): Db => {
  const db = new Database(path);
  opened.push(db);
  db.prepare('SELECT count(*) FROM batches').get();
  return db;
};
const fill = (db: Db, n: number): void => {
  const ins = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = 0; i < n; i++) ins.run(`k${i}`, 'x'.repeat(500));
  })();
};

describe('the write-ahead log', () => {
  it('is cut back to 64 MiB after a checkpoint (journal_size_limit, on every connection the store opens)', () => {
    const db = openDb(join(tempDir(), 'topup.db'));
    opened.push(db);
    expect(db.pragma('journal_size_limit', { simple: true })).toBe(JOURNAL_SIZE_LIMIT);
  });

  it('the page cache of a store connection is 4,000 KiB, not better-sqlite3\'s 16,000 (a daemon kept filling it as its database grew)', () => {
    const path = join(tempDir(), 'topup.db');
    const db = openDb(path);
    opened.push(db);
    expect(PAGE_CACHE_KIB).toBe(4_000);
    expect(db.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KIB);
    expect(otherProcess(path).pragma('cache_size', { simple: true })).toBe(-16_000); // the library's own, for contrast
  });

  it('is emptied when a runtime closes, though another process still has the database open', async () => {
    const home = tempDir();
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home, TOPUP_API_KEY: 'upkeep-test-key', TOPUP_API_URL: 'http://127.0.0.1:9' }), silentLogger(), 'http://127.0.0.1:9');
    const other = otherProcess(rt.config.dbPath);
    fill(rt.db, 400);
    expect(size(`${rt.config.dbPath}-wal`)).toBeGreaterThan(100_000);
    await rt.close();
    expect(other.open).toBe(true);
    expect(size(`${rt.config.dbPath}-wal`)).toBe(0);
  });

  it('is folded into the database when the process is idle, and not while it is busy', async () => {
    const path = join(tempDir(), 'topup.db');
    const db = openDb(path);
    opened.push(db);
    otherProcess(path);
    checkpoint(db, undefined, 'idle');
    const before = size(path);
    fill(db, 400); // ~200 KB: below SQLite's own checkpoint threshold (1000 pages)
    let idle = false;
    let pruned = 0;
    const upkeep = startUpkeep(db, silentLogger(), () => idle, () => ++pruned, 30);
    try {
      await sleep(150);
      expect(size(path)).toBe(before); // busy: nothing done
      expect(pruned).toBe(0);
      idle = true;
      await sleep(150);
      expect(size(path)).toBeGreaterThan(before + 150_000);
      expect(pruned).toBeGreaterThan(0);
    } finally {
      upkeep.stop();
    }
  });
});

describe('the call log (api_calls)', () => {
  it('is pruned of calls no window needs when any process starts, even one that then makes no call', () => {
    const db = openDb(join(tempDir(), 'topup.db'));
    opened.push(db);
    const now = systemClock.mono();
    const ins = db.prepare('INSERT INTO api_calls (t, done) VALUES (?, ?)');
    for (let i = 0; i < 500; i++) ins.run(now - 3_600_000 - i, now - 3_600_000 - i + 50); // an hour ago
    ins.run(now - 2_000, now - 1_900); // still inside the 60 s window
    new RateScheduler(db, [{ limit: 200, windowMs: 60_000 }], 500, 15_000);
    expect((db.prepare('SELECT count(*) AS n FROM api_calls').get() as { n: number }).n).toBe(1);
  });

  it('prune() drops what has aged out since, and keeps calls a window still counts', async () => {
    const db = openDb(join(tempDir(), 'topup.db'));
    opened.push(db);
    const s = new RateScheduler(db, [{ limit: 100, windowMs: 100 }], 0, 100);
    for (let i = 0; i < 5; i++) (await s.acquire({ route: 'balance', priority: 0 } as never) as () => void)();
    expect(s.prune()).toBe(0);
    await sleep(1_300); // window 100 + timeout 100 + 1 s slack
    expect(s.prune()).toBe(5);
  });
});

describe('the sizes topup doctor shows', () => {
  it('names the database, its log, free pages and the call log; warns when the log outgrew its limit', () => {
    const path = join(tempDir(), 'topup.db');
    const db = openDb(path);
    opened.push(db);
    const s = databaseSize(db, path);
    expect(s.fileBytes).toBeGreaterThan(0);
    expect(describeSize(s)).toMatchObject({ ok: true, detail: expect.stringMatching(/^database \d+\.\d MB, write-ahead log \d+\.\d MB, \d+% free pages; call log 0 rows$/) });
    expect(describeSize({ ...s, walBytes: JOURNAL_SIZE_LIMIT + 1 })).toMatchObject({ ok: false, detail: expect.stringContaining('keeps a read open') });
  });
});
