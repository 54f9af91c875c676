/**
 * Review of issue 34 (src/store/wal-sync.ts): the log sync opened its descriptor on the log lazily,
 * at the first send. Linux reports a write-back error to the descriptors open when it happened
 * (errseq): one opened later does not see an error another descriptor (SQLite's own FULL commit, the
 * checkpoint worker's) consumed before it, and its first fdatasync answers 0 over frames the disk
 * lacks. So it is opened when the store opens (runtime.ts makes it right after openStore: the log
 * exists), and it is that file, the one the store opened, that every sync names.
 *
 * Fails on main: no descriptor on the log is held before the first durable(); and a log file
 * replaced at its path before the first send is the one synced.
 */
import { fstatSync, readdirSync, readlinkSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime.js';
import { WalSync } from '../../src/store/wal-sync.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

/** How many of this process's descriptors name `path`. */
const descriptorsOn = (path: string): number =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  }).length;

const closing: WalSync[] = [];
afterEach(async () => {
  for (const w of closing.splice(0)) await w.close();
});

describe.runIf(process.platform === 'linux')('the log sync\'s descriptor', () => {
  it('is opened when the log sync is made (with the store), not at the first send', async () => {
    const rt: Runtime = await supplierWorld(() => {}, [pubgRow(0)]);
    // As /proc names it (the temp folder may sit behind a symlink).
    const log = realpathSync(`${rt.config.dbPath}-wal`);
    // The runtime's own log sync holds one already (openRuntime makes it with the store).
    expect(rt.walSync).toBeDefined();
    const before = descriptorsOn(log);
    const wal = new WalSync(rt.config.dbPath, (_fd, done) => done(null));
    closing.push(wal);
    expect(descriptorsOn(log)).toBe(before + 1);
    await wal.close();
    expect(descriptorsOn(log)).toBe(before);
  });

  it('syncs the log the store opened, even when another file is put at its path before the first send', async () => {
    const rt: Runtime = await supplierWorld(() => {}, [pubgRow(0)]);
    const log = `${rt.config.dbPath}-wal`;
    const opened = statSync(log).ino;
    let synced = -1;
    const wal = new WalSync(rt.config.dbPath, (fd, done) => {
      synced = fstatSync(fd).ino;
      done(null);
    });
    closing.push(wal);
    // Another file at the log's path (a stray copy put back by hand, a tool's rename): the store's
    // connection keeps the file it opened, and so must the sync.
    renameSync(log, `${log}.moved`);
    writeFileSync(log, '');
    try {
      await wal.durable();
      expect(synced).toBe(opened);
    } finally {
      renameSync(`${log}.moved`, log);
    }
  });

  it('a log not there when the sync is made is opened by the first durable(), as before', async () => {
    const wal = new WalSync('/nonexistent-dir-for-wal-sync/none.db', (_fd, done) => done(null));
    closing.push(wal);
    await expect(wal.durable()).rejects.toMatchObject({ code: 'ENOENT' });
    expect(wal.failed).toBeNull();
  });
});
