/**
 * Trial s35, defect 1: after a restore, a two-account home whose other supplier's history shows no
 * trxid at all (the real-world style) sent every new file's rows to review for the 8-day window,
 * retries too, though nothing had been bought since the copy. Such a history still lists every
 * order with its player: a row none of whose listed orders is for its player was not bought there.
 * That is trusted only where the history is proven to echo players as this home sent them (its own
 * earlier orders there, found by order id); a row whose player is listed there is still held.
 * Two real sandboxes as two accounts, a real backup and restore, the real daemon.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();

async function scenario(opts: { ownOrderAtSecond: boolean }): Promise<{ byTrxid: Record<string, string>; mainTrxids: string[]; secondTrxids: string[]; review: string }> {
  const { home, a, b, env } = await twoAccounts('routing = "priority"');
  // The supplier behind `second` answers in the real-world style from the start: its history shows no trxids.
  b.admin.setAnswers({ style: 'real-world' });
  const first = startDaemon(env);
  await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
  if (opts.ownOrderAtSecond) {
    // This home's own earlier order at `second` (pinned there), for player 5300000009.
    home.drop('before.csv', csv([['pid', 'userId', 'trxid', 'account'], ['PUBG-60', '5300000009', 'OLD-1', 'second']]));
    await waitForResult(home, 'before', 60_000);
  }
  const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
  expect(bk.code, bk.stderr).toBe(0);
  await first.stop();
  const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
  expect(rs.code, rs.stderr).toBe(0);
  const d = startDaemon(env);
  await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
  // Two players never seen at `second`, and the player of the order listed there.
  home.drop('new.csv', csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5200000001', 'NEW-1'], ['PUBG-60', '5200000002', 'NEW-2'], ['PUBG-60', '5300000009', 'NEW-3']]));
  await waitForResult(home, 'new', 90_000);
  await d.stop();
  const review = await runCli(['review', '--json'], env);
  const byTrxid = Object.fromEntries(storedRows(home).filter((x) => x.trxid?.startsWith('NEW-')).map((x) => [x.trxid!, x.state]));
  return { byTrxid, mainTrxids: ledgerTrxids(a).sort(), secondTrxids: ledgerTrxids(b).sort(), review: review.stdout };
}

describe('after a restore, a history that shows no trxid', () => {
  it('proven to echo players: rows for players it does not list are sent; the row whose player it lists is held for a person', async () => {
    const r = await scenario({ ownOrderAtSecond: true });
    expect(r.mainTrxids).toEqual(['NEW-1', 'NEW-2']);
    expect(r.byTrxid['NEW-1']).toBe('completed');
    expect(r.byTrxid['NEW-2']).toBe('completed');
    expect(r.byTrxid['NEW-3']).toBe('review');
    expect(r.review).toMatch(/cannot be looked up at second \(none of the orders in its history shows a trxid\)/);
    // Nothing bought twice anywhere: the one order at `second` is the one made before the copy.
    expect(r.secondTrxids.filter((t) => t !== 'undefined')).toEqual(['OLD-1']); // besides the sandbox's own website order (no trxid)
  }, 300_000);

  it('no order of this home there to prove the echo: every row is held, never sent blind', async () => {
    const r = await scenario({ ownOrderAtSecond: false });
    expect(r.mainTrxids).toEqual([]);
    expect(Object.values(r.byTrxid)).toEqual(['review', 'review', 'review']);
  }, 300_000);
});
