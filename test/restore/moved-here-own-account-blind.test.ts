/**
 * Adversarial review of the restore lookup (issue 32; branches simrestore 0b2233d and ops35 f4d16ff):
 * "a row whose own account cannot say is sent under its own trxid on its own account, where a
 * purchase made after the copy is met as a replay" holds only for a purchase under its OWN trxid.
 * A row that failed over TO that account before the loss was bought there under the trxid the move
 * gave it (`<trxid>-second`); re-dropped after the restore and routed straight to `second` (main out
 * of money now), its own trxid is new to `second`: sent, it is bought a second time. The lookup
 * searches `<trxid>-<account>` at the row's own account (movedHere), but `second`'s history shows
 * no trxids (real suppliers' style), so it cannot see it, and the row was let go (pinned there on
 * simrestore, which changes nothing for this money).
 *
 * Two real sandboxes as two accounts, the real CLI's `topup backup` and `topup restore`, the daemon,
 * the suppliers' ledgers.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123458001', 'MH-1'], ['PUBG-60', '5123458002', 'MH-2']]);
const LIVE = ['pending', 'sending', 'resending', 'verifying', 'searching'];
/** A ledger's trxids, without the website order a real-world-style account holds (no trxid). */
const trxids = (sb: Parameters<typeof ledgerTrxids>[0]): string[] => ledgerTrxids(sb).filter((t) => t !== '' && t !== 'undefined').sort();

describe('after a restore, a re-dropped row routed to the account it had failed over to, whose history shows no trxids', () => {
  it('is not bought there a second time under its own trxid', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    // second answers as real suppliers do: its history lists orders without their trxids.
    b.admin.setAnswers({ style: 'real-world', htmlShare: 0 });
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const first = startDaemon(env);
    await waitFor('the store opened by the daemon', () => existsSync(join(home.dir, '.topup-store-mark')), 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // After the copy: main in maintenance, the rows fail over and are bought on second as <trxid>-second.
    home.drop('mh.csv', FILE);
    await waitForResult(home, 'mh', 60_000);
    await first.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(trxids(b)).toEqual(['MH-1-second', 'MH-2-second']);

    // The disk is lost; the copy is restored. main's maintenance is over but its money is gone:
    // the day's file dropped again is routed to second (priority, "balance left").
    a.admin.setFaults({ maintenance: null });
    a.admin.setBalance({ balanceUsd: 0 });
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    const d = startDaemon(env);
    try {
      await waitFor('the reconcile-first start done', () => /sending starts now/i.test(d.output()), 60_000);
      home.drop('mh.csv', FILE);
      await waitFor('the re-dropped rows decided', () => {
        const rows = storedRows(home).filter((r) => r.trxid?.startsWith('MH-'));
        return rows.length >= 2 && rows.every((r) => !LIVE.includes(r.state)) && rows;
      }, 90_000, 250).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      await d.stop();
    }
    // Each purchase once: nothing more on second (MH-1 and MH-2 there would be the same top-ups again).
    expect(trxids(b)).toEqual(['MH-1-second', 'MH-2-second']);
    expect(ledgerTrxids(a)).toEqual([]);
  }, 240_000);
});
