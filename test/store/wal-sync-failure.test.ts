/**
 * Review of branch pace35 (store/wal-sync.ts, dispatch/intent-group.ts): what a failed fdatasync of
 * the write-ahead log leaves behind.
 *
 * Linux reports a write-back error to fdatasync once per open file (errseq): the next call on the
 * same descriptor returns 0 although the pages that failed were never written (they are marked
 * clean, or dropped; see fsync(2) and the PostgreSQL "fsyncgate" thread). SQLite's own FULL commit
 * survives that: a failed sync fails the commit before it is published in the wal-index, and the
 * next transaction writes its frames over the same offsets again. WalSync's commits are published
 * before their sync, so every later transaction's frames are chained (the log's cumulative
 * checksums) onto frames the disk may not hold, and recovery after a power cut stops at the first
 * bad frame: every intent after it is gone, though its sync "succeeded" and its request left.
 */
import { copyFileSync, mkdtempSync, openSync, closeSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { IntentGroup, INTENT_GROUP_MS } from '../../src/dispatch/intent-group.js';
import { systemClock } from '../../src/kernel/clock.js';
import type { Runtime } from '../../src/runtime.js';
import type { SendIntent } from '../../src/store/rows.js';
import { WalSync } from '../../src/store/wal-sync.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

const world = (n: number): Promise<Runtime> => supplierWorld(() => {}, Array.from({ length: n }, (_, i) => pubgRow(i)));
const intent = (rt: Runtime, idx: number) => (now: number): SendIntent => ({
  batchId: 'b1', idx, a: { owner: rt.owner, now }, busyUntil: now + 15_000, sent: { trxid: `tu-row-${idx}`, account: 'default', ...rt.identityOf('default') },
});

describe('a failed sync of the write-ahead log', () => {
  it('is not forgotten: after one fdatasync failed, a later sync that returns 0 does not let a send leave', async () => {
    const rt = await world(2);
    let calls = 0;
    // The kernel's answers: EIO once (the failed write-back), then 0 (the error was reported already).
    const wal = new WalSync(rt.config.dbPath, (_fd, done) => {
      calls++;
      done(calls === 1 ? Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }) : null);
    });
    const group = new IntentGroup(rt.rows, systemClock, INTENT_GROUP_MS, wal);
    const [first] = await Promise.allSettled([group.write(intent(rt, 0))]);
    expect(first!.status).toBe('rejected');
    // Row 1's intent is committed after row 0's unsynced frames and chained onto them: its own
    // sync returning 0 says nothing of row 0's frames, without which recovery drops row 1's too.
    const [later] = await Promise.allSettled([group.write(intent(rt, 1))]);
    expect(later!.status).toBe('rejected');
    await wal.close();
  });

  it('(SQLite, for the argument above) recovery drops every commit after a frame the disk does not hold', () => {
    const dir = mkdtempSync(join(tmpdir(), 'walsync-'));
    const path = join(dir, 'a.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec(`CREATE TABLE rows (idx INTEGER PRIMARY KEY, state TEXT, pad TEXT);`);
    // One row per page, so each commit writes its own frames.
    const insert = db.prepare(`INSERT INTO rows VALUES (?, 'pending', ?)`);
    for (let i = 0; i < 3; i++) insert.run(i, 'x'.repeat(3000));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma('synchronous = NORMAL');
    const set = db.prepare(`UPDATE rows SET state = 'sending' WHERE idx = ?`);
    const walPath = `${path}-wal`;
    const size = (): number => statSync(walPath).size;
    set.run(0); // the group whose fdatasync failed: its frames
    const failedFrom = 32; // after the log's header, the first commit since the TRUNCATE
    const failedTo = size();
    set.run(1); // a later group: its sync "succeeded", its request left
    // The disk as a power cut finds it: everything written, except the frames whose write-back failed.
    const disk = mkdtempSync(join(tmpdir(), 'walsync-disk-'));
    copyFileSync(path, join(disk, 'a.db'));
    copyFileSync(walPath, join(disk, 'a.db-wal'));
    // The control: the same disk with every frame written finds both intents.
    const whole = mkdtempSync(join(tmpdir(), 'walsync-whole-'));
    copyFileSync(path, join(whole, 'a.db'));
    copyFileSync(walPath, join(whole, 'a.db-wal'));
    const fd = openSync(join(disk, 'a.db-wal'), 'r+');
    writeSync(fd, Buffer.alloc(failedTo - failedFrom), 0, failedTo - failedFrom, failedFrom);
    closeSync(fd);
    db.close();
    const statesIn = (file: string): string[] => {
      const after = new Database(file);
      try {
        return after.prepare('SELECT state FROM rows ORDER BY idx').pluck().all() as string[];
      } finally {
        after.close();
      }
    };
    expect(statesIn(join(whole, 'a.db'))).toEqual(['sending', 'sending', 'pending']);
    const states = statesIn(join(disk, 'a.db'));
    // Row 1's intent, though its own frames are on disk whole, is not recovered.
    expect(states).toEqual(['pending', 'pending', 'pending']);
  });
});
