/**
 * Adversarial review of f7ff557 (stop 37, rev37b): in the window after a restore a file's rows are
 * validated without the price cap "because a row may have been bought already", and "a row not
 * bought meets the cap at its send". But a row that WAS bought meets it there too: with one account
 * no claim mark is set (markClaimInRestoreWindow: a re-drop's trxids "meet any purchase there as a
 * replay"), so the row goes to dispatch/sender.ts, whose priceStillOk refuses it ('invalid-price')
 * before the request that would have met the purchase as a replay ever leaves. The day's file given
 * again after a restore (docs/backup.md), its pack dearer than the row's cap since it was bought:
 * the row ends `invalid`, the order the reseller paid for held by no row.
 * Real sandbox, real daemon, a real backup and restore.
 *
 * Failed first (stop 37, rev37b); fixed by claim/held-refusals.ts: the row the catalog refuses now
 * is looked up before it is sent and found bought. Beside it a row refused for its cap from the
 * start (never bought) is looked up, found nowhere, and meets the cap at its send as before.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid', 'maxPriceUsd'], ['PUBG-60', '5300000601', 'CAP-1', '1.00'], ['PUBG-60', '5300000602', 'CAP-2', '0.50']]);

describe('one account: the day\'s file given again after a restore, its row bought before at a price now above its cap', () => {
  it('is met as the purchase it was, never refused for the price at its send', async () => {
    const home = tempHome('rev37b-window-cap-');
    const sb = await inProcessSandbox({ balanceUsd: 100 });
    const env = cliEnv(home, sb);
    const first = startDaemon(env);
    await waitFor('the store opened by the daemon', () => existsSync(join(home.dir, '.topup-store-mark')), 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    home.drop('cap.csv', FILE);
    await waitForResult(home, 'cap', 60_000);
    expect(readResult(home, 'cap').map((r) => r.status)).toEqual(['completed', 'invalid']);
    expect(await first.stop()).toBe(0);
    const bought = sb.admin.ledger().orders;
    expect(bought).toHaveLength(1);

    const restored = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(restored.code, restored.stderr).toBe(0);
    const second = startDaemon(env);
    try {
      await waitFor('the daemon sending again', () => /sending starts now|idle|watching/i.test(second.output()), 60_000).catch(() => undefined);
      // The pack is dearer now than the row's cap; the operator gives the day's file again.
      sb.admin.setProduct({ id: 'PUBG-60', price: 1.5 });
      rmSync(join(home.outbox, 'cap.result.csv'), { force: true });
      home.drop('cap.csv', FILE);
      await waitForResult(home, 'cap', 90_000);
      const rows = readResult(home, 'cap');
      // On main: [['invalid', '']] with "maxPriceUsd: the catalog price rose to 1.5 USD ... not sent".
      expect(rows.map((r) => [r.status, r.orderId]), JSON.stringify(rows)).toEqual([['completed', bought[0]!.orderId], ['invalid', '']]);
      expect(rows[1]!.error).toMatch(/maxPriceUsd/);
      expect(sb.admin.ledger().orders).toHaveLength(1);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 300_000);
});
