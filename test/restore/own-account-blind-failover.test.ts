/**
 * Found by the simulator's `restore` operator action (seed 3 #44; replay in
 * test/sim/found/restore-own-account-blind-failover.json): a copy is taken, then a file is dropped
 * and its rows are bought on `main`, whose history shows no trxids (real suppliers' style). The copy
 * is restored, `main` goes into maintenance, and the day's file is dropped again. The lookup of the
 * re-dropped rows found nothing at `second` (which shows trxids) and let them be sent as they are on
 * `main`, their own account, "where a purchase is met as a replay". But `main` answered MAINTENANCE,
 * the failover read "nothing created" from that answer, and moved the rows to `second`, where they
 * were bought a second time as `<trxid>-second`. Nor may they be sent on `main`: with two accounts
 * a row could have been bought there as `<trxid>-main` after a move from `second`, which `main`'s
 * history cannot show either. They go to review.
 * Two real sandboxes as two accounts, the real CLI's `topup backup` and `topup restore`, the daemon.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123457001', 'OB-1'], ['PUBG-60', '5123457002', 'OB-2']]);
const LIVE = ['pending', 'sending', 'resending', 'verifying', 'searching'];

describe('after a restore, a row whose own account cannot say whether it bought it', () => {
  it('is held for a person, never failed over and bought again elsewhere, nor sent blind on its own account', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    // main answers as real suppliers do: its history shows no trxids (and it holds its one website order).
    a.admin.setAnswers({ style: 'real-world', htmlShare: 0 });
    const first = startDaemon(env);
    await waitFor('the store opened by the daemon', () => existsSync(join(home.dir, '.topup-store-mark')), 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // After the copy: the file is claimed and bought on main.
    home.drop('ob.csv', FILE);
    await waitForResult(home, 'ob', 60_000);
    await first.stop();
    const mainOrders = (): string[] => ledgerTrxids(a).filter((t) => t !== '' && t !== 'undefined').sort();
    expect(mainOrders()).toEqual(['OB-1', 'OB-2']);
    expect(ledgerTrxids(b)).toEqual([]);

    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const d = startDaemon(env);
    try {
      await waitFor('the reconcile-first start done', () => /sending starts now/i.test(d.output()), 60_000);
      home.drop('ob.csv', FILE);
      await waitFor('the re-dropped file looked up', () => /looked up 2 row\(s\) of file\(s\) claimed after a restore/.test(d.output()), 60_000);
      // main in maintenance longer than max_queue_delay (2 s): before the fix the rows were moved to
      // second within seconds and bought there.
      await new Promise((r) => setTimeout(r, 12_000));
      expect(ledgerTrxids(b)).toEqual([]);
      // main answers again: nothing of them is sent there either (OB-1 could have been bought on
      // main as OB-1, or as OB-1-main after a move from second: main's history cannot say which).
      a.admin.setFaults({ maintenance: null });
      await new Promise((r) => setTimeout(r, 5_000));
    } finally {
      await d.stop();
    }
    expect(mainOrders()).toEqual(['OB-1', 'OB-2']);
    expect(ledgerTrxids(b)).toEqual([]);
    const rows = storedRows(home).filter((r) => r.trxid?.startsWith('OB-') && !LIVE.includes(r.state));
    expect(rows.map((r) => [r.trxid, r.account, r.state])).toEqual([['OB-1', 'main', 'review'], ['OB-2', 'main', 'review']]);
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    try {
      const why = db.prepare(`SELECT error FROM rows WHERE trxid = 'OB-1' AND state = 'review'`).get() as { error: string };
      expect(why.error).toMatch(/cannot be looked up at main \(its own account, also under OB-1-main: none of the orders in its history shows a trxid\)/);
    } finally {
      db.close();
    }
  }, 240_000);
});
