/**
 * A full disk is over when the store's file system has room again, not when one write happens to
 * fit (dispatch/store-health.ts blocked()). The write-ahead log restarts over its own file after
 * each checkpoint (the checkpoint worker folds it every 100 ms while rows move), so on a full disk
 * an intent could fit in the space the log already held while the answer after it did not: the
 * daemon said store-down, store-up, store-down (test/dispatch/store-down-surfaces.test.ts failed
 * two runs of three on it, with two store-down notifications, or /metrics writable again right
 * after the "disk is full" line). A real tmpfs, filled.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { StoreFile, StoreHealth, type StoreDown } from '../../src/dispatch/store-health.js';
import { silentLogger } from '../../src/kernel/log.js';

const dir = mkdtempSync(join(tmpdir(), 'topup-room-'));
let cannot: string | null = null;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
  execFileSync('umount', [dir]);
} catch (err) {
  cannot = String((err as { stderr?: Buffer }).stderr ?? err).trim();
}
let mounted = false;
afterEach(() => {
  if (mounted) execFileSync('umount', ['-l', dir]);
  mounted = false;
});

it.skipIf(cannot !== null)(`after SQLITE_FULL, no send is tried and no write that fits ends it while the disk has no room, whatever the back-off; once it has, the next write that succeeds ends it${cannot ? ` (skipped: mount -t tmpfs failed: ${cannot})` : ''}`, () => {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
  mounted = true;
  const db = join(dir, 'topup.db');
  writeFileSync(db, 'x');
  const changes: (StoreDown | null)[] = [];
  const health = new StoreHealth(silentLogger(), (d) => changes.push(d), new StoreFile(db));
  const filler = join(dir, 'filler');
  const fd = openSync(filler, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(64 * 1024, 1));
  } catch (err) {
    expect((err as { code?: string }).code).toBe('ENOSPC');
  } finally {
    closeSync(fd);
  }
  health.failed(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), 1_000, 0);
  expect(health.blocked(500)).toBe(true);
  // A write that fitted (an intent of a send admitted before the failure) does not end it either.
  health.ok(1_500);
  expect(health.down?.code).toBe('SQLITE_FULL');
  // Past any back-off: still no room, so still stopped (before: the next send was tried, and its intent fitted).
  expect(health.blocked(60_000)).toBe(true);
  expect(health.blocked(120_000)).toBe(true);
  rmSync(filler);
  // Room again: the next look (a back-off step later) lets a send be tried; its write ends it.
  expect(health.blocked(121_500)).toBe(false);
  health.ok(2_000);
  expect(health.down).toBeNull();
  expect(changes.map((c) => c?.code ?? null)).toEqual(['SQLITE_FULL', null]);
});
