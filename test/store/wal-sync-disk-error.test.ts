/**
 * Review of branch pace35: the kernel-level reproduction behind test/store/wal-sync-failure.test.ts.
 * A real write-back error under store/wal-sync.ts: an ext2 file system on a loop device whose
 * sparse backing file lives on a 40 MB tmpfs; filling the tmpfs makes the device fail writes.
 *
 *   1. group A's intents committed NORMAL (published), the disk failing: WalSync's fdatasync rejects;
 *   2. the disk works again; group B's intent committed after A: WalSync's fdatasync returns 0;
 *   3. the image of the disk at that instant (a power cut) recovers neither A nor B, though B's
 *      frames are on it whole: recovery stops at A's missing frames (the log's checksums chain).
 *
 * Needs root, /dev/loop-control and mount (it mounts and unmounts what it creates, under a temp
 * directory). Opt-in: TOPUP_DISK_FAULTS=1. On 541ea51 it fails at step 2 (B's sync answers ok).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { WalSync } from '../../src/store/wal-sync.js';

const can = process.env.TOPUP_DISK_FAULTS === '1' && process.getuid?.() === 0 && existsSync('/dev/loop-control');
const sh = (cmd: string, ...args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' }).trim();

describe.runIf(can)('a write-back error on the log, with a real disk (opt-in: TOPUP_DISK_FAULTS=1, root)', () => {
  it('after a failed fdatasync, the next one returning 0 does not make a later intent durable; WalSync must not answer ok', async () => {
    const root = mkdtempSync(join(tmpdir(), 'walsync-eio-'));
    const small = join(root, 'tmpfs');
    const mnt = join(root, 'mnt');
    const cut = join(root, 'cut');
    for (const d of [small, mnt, cut]) mkdirSync(d);
    const undo: (() => void)[] = [];
    // Closed before the undo below: its descriptor on the log would keep the file system busy (umount EBUSY).
    let wal: WalSync | undefined;
    try {
      sh('mount', '-t', 'tmpfs', '-o', 'size=40m', 'tmpfs', small);
      undo.unshift(() => sh('umount', small));
      const img = join(small, 'disk.img');
      sh('truncate', '-s', '300M', img);
      sh('mke2fs', '-q', '-t', 'ext2', '-b', '4096', img);
      const loop = sh('losetup', '-f', '--show', img);
      undo.unshift(() => sh('losetup', '-d', loop));
      sh('mount', '-t', 'ext2', loop, mnt);
      undo.unshift(() => sh('umount', mnt));

      const path = join(mnt, 'a.db');
      const db = new Database(path);
      undo.unshift(() => db.open && db.close());
      db.pragma('journal_mode = WAL');
      db.pragma('wal_autocheckpoint = 20'); // a short log while the rows are stored: its blocks are reused later
      db.exec('CREATE TABLE rows (idx INTEGER PRIMARY KEY, state TEXT, pad TEXT)');
      const ins = db.prepare(`INSERT INTO rows VALUES (?, 'pending', ?)`);
      for (let i = 0; i < 300; i++) ins.run(i, 'x'.repeat(3000)); // one row per page
      db.pragma('wal_autocheckpoint = 0');
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.pragma('synchronous = NORMAL'); // as store/rows.ts markSendingAll(…, false)
      db.prepare(`UPDATE rows SET pad = 'y' WHERE idx = 299`).run(); // the log's header, written and synced by SQLite
      sh('sync');
      wal = new WalSync(path);
      const walSync = wal;
      const set = db.prepare(`UPDATE rows SET state = 'sending' WHERE idx = ?`);
      const sync = (): Promise<string> => walSync.durable().then(() => 'ok', (e: NodeJS.ErrnoException) => e.code ?? 'error');

      const filler = join(small, 'filler');
      const fd = openSync(filler, 'w');
      try {
        for (;;) writeSync(fd, Buffer.alloc(1 << 20, 1));
      } catch {
        // ENOSPC: the tmpfs is full, the loop device fails the writes of new blocks
      }
      closeSync(fd);
      db.transaction(() => {
        for (let i = 0; i < 200; i++) set.run(i);
      })(); // group A
      const a = await sync();
      rmSync(filler); // the disk works again
      set.run(250); // group B, after A
      const b = await sync();
      // The disk as a power cut would leave it: the device's content now.
      sh('cp', '--sparse=always', img, join(root, 'cut.img'));
      const loop2 = sh('losetup', '-f', '--show', '-r', join(root, 'cut.img'));
      undo.unshift(() => sh('losetup', '-d', loop2));
      sh('mount', '-t', 'ext2', '-o', 'ro', loop2, cut);
      undo.unshift(() => sh('umount', cut));
      const copy = join(root, 'after');
      mkdirSync(copy);
      for (const f of ['a.db', 'a.db-wal']) execFileSync('cp', [join(cut, f), join(copy, f)]);
      const after = new Database(join(copy, 'a.db'));
      const recovered = { a: after.prepare('SELECT state FROM rows WHERE idx = 0').pluck().get(), b: after.prepare('SELECT state FROM rows WHERE idx = 250').pluck().get() };
      after.close();
      await wal.close();
      expect(a).not.toBe('ok'); // the failure was seen (ENOSPC or EIO)
      expect(readFileSync(join(copy, 'a.db')).length).toBeGreaterThan(0);
      // What a power cut finds after B's send had left: B is not there.
      expect(recovered.b).toBe('pending');
      // So WalSync must not have answered B ok.
      expect(b).not.toBe('ok');
    } finally {
      await wal?.close();
      for (const u of undo) {
        try {
          u();
        } catch {
          // already undone
        }
      }
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
