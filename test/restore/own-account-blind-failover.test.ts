/**
 * Found by the simulator's `restore` operator action (seed 3 #44; replay in
 * test/sim/found/restore-own-account-blind-failover.json): a copy is taken, then a file is dropped
 * and its rows are bought on `main`, whose history shows no trxids (real suppliers' style). The copy
 * is restored, `main` goes into maintenance, and the day's file is dropped again. The lookup of the
 * re-dropped rows found nothing at `second` (which shows trxids) and let them be sent as they are on
 * `main`, their own account, "where a purchase is met as a replay". But `main` answered MAINTENANCE,
 * the failover read "nothing created" from that answer, and moved the rows to `second`, where they
 * were bought a second time as `<trxid>-second`.
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
  it('is kept on that account (pinned), never failed over and bought again elsewhere; met as a replay there once it answers', async () => {
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
      // Its rows looked up, then held on main while it is in maintenance (max_queue_delay 2 s:
      // before the fix they were moved to second and bought there within seconds).
      await waitFor('the re-dropped file looked up', () => /looked up 2 row\(s\) of file\(s\) claimed after a restore/.test(d.output()), 60_000);
      await new Promise((r) => setTimeout(r, 12_000));
      expect(ledgerTrxids(b)).toEqual([]);
      const held = storedRows(home).filter((r) => r.trxid?.startsWith('OB-') && LIVE.includes(r.state));
      expect(held.map((r) => [r.trxid, r.account])).toEqual([['OB-1', 'main'], ['OB-2', 'main']]);
      const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
      try {
        const pins = db.prepare(`SELECT pinned, note FROM rows WHERE trxid IN ('OB-1', 'OB-2')`).all() as { pinned: number; note: string }[];
        expect(pins.map((p) => p.pinned)).toEqual([1, 1]);
        expect(pins[0]!.note).toMatch(/kept on main, which cannot say whether it bought trxid OB-1 after the copy/);
      } finally {
        db.close();
      }
      // main answers again: each resend meets its purchase as a replay.
      a.admin.setFaults({ maintenance: null });
      await waitFor('the re-dropped rows ended', () => {
        const rows = storedRows(home).filter((r) => r.trxid?.startsWith('OB-'));
        return rows.length === 2 && rows.every((r) => !LIVE.includes(r.state)) && rows;
      }, 90_000);
    } finally {
      await d.stop();
    }
    expect(mainOrders()).toEqual(['OB-1', 'OB-2']);
    expect(ledgerTrxids(b)).toEqual([]);
    const rows = storedRows(home).filter((r) => r.trxid?.startsWith('OB-'));
    expect(rows.every((r) => r.account === 'main' && r.order_id !== null)).toBe(true);
  }, 240_000);
});
