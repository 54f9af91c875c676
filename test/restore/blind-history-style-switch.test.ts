/**
 * Trial s36, D2: after a restore, with one account's sandbox switched to the real-world answers
 * (its history shows no trxids), every new row of a fresh file, on both accounts, went to review,
 * though that history (this home's own orders) listed none of their players. The home's own
 * orders there had been placed while the sandbox answered in the spec style, so the store holds
 * them as `ORD…`, and the real-world history lists the same orders under other ids (digits): no
 * own order was found, the echo of players was never proven, and every row was held.
 * Two real sandboxes as two accounts, a real backup, orders after it, the store deleted, a real
 * restore, the real daemon.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();

describe('after a restore, one account switched to the real-world answers (its history shows no trxid)', () => {
  it('rows for players its history does not list are sent, on both accounts; a row whose player it lists after the copy is held', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"');
    const first = startDaemon(env);
    await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
    // This home's own orders at `second` (pinned there) and at `main`, in the spec style.
    home.drop('before.csv', csv([['pid', 'userId', 'trxid', 'account'], ['PUBG-60', '5300000009', 'OLD-1', 'second'], ['PUBG-60', '5300000008', 'OLD-2', 'second'], ['PUBG-60', '5300000007', 'OLD-3', 'main']]));
    await waitForResult(home, 'before', 60_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // Bought after the copy: the restored store will not know it.
    home.drop('after.csv', csv([['pid', 'userId', 'trxid', 'account'], ['PUBG-60', '5300000011', 'AFTER-1', 'second']]));
    await waitForResult(home, 'after', 60_000);
    await first.stop();
    for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    // The supplier behind `second` now answers in the real-world style: no trxids, other order ids.
    b.admin.setAnswers({ style: 'real-world' });
    const d = startDaemon(env);
    await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
    home.drop('fresh.csv', csv([
      ['pid', 'userId', 'trxid', 'account'],
      ['PUBG-60', '5200000001', 'NEW-1', ''],
      ['PUBG-60', '5200000002', 'NEW-2', 'second'],
      ['PUBG-60', '5200000004', 'NEW-4', ''],
      // The player of AFTER-1, bought at `second` after the copy: that history lists it, so held.
      ['PUBG-60', '5300000011', 'NEW-3', ''],
    ]));
    await waitForResult(home, 'fresh', 120_000);
    await d.stop();
    const review = await runCli(['review', '--json'], env);
    const byTrxid = Object.fromEntries(storedRows(home).filter((x) => x.trxid?.startsWith('NEW-')).map((x) => [x.trxid!, x.state]));
    expect(byTrxid, review.stdout).toEqual({ 'NEW-1': 'completed', 'NEW-2': 'completed', 'NEW-4': 'completed', 'NEW-3': 'review' });
    expect(review.stdout).toMatch(/cannot be looked up at second \(none of the orders in its history shows a trxid\)/);
    // Nothing bought twice: each trxid once across both ledgers.
    const all = [...ledgerTrxids(a), ...ledgerTrxids(b)].filter((t) => t !== 'undefined');
    expect(new Set(all).size).toBe(all.length);
    expect(ledgerTrxids(a).sort()).toEqual(['NEW-1', 'NEW-4', 'OLD-3']);
    expect(ledgerTrxids(b).filter((t) => t !== 'undefined').sort()).toEqual(['AFTER-1', 'NEW-2', 'OLD-1', 'OLD-2']);
  }, 300_000);
});
