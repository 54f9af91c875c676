/**
 * Found by the simulator (seed 20261127 #27, `restore` with `late-lines`; test/sim/found/
 * restore-bought-last-stock.json): a card row bought after the backup was taken took the last
 * stock. After the restore its batch folder, unknown to the restored store, was claimed again from
 * jobs/ and loaded against the catalog as it is now: "out of stock", the row born `invalid`, never
 * looked up, so its order (the codes the reseller paid for) was held by no row and reported
 * nowhere (invariant 38). A file loaded while its rows may have been bought already (a copy not
 * yet reconciled, or the window after a restore) is now validated without the pack's stock and
 * price now, as an API order recovered from the journal is: the reconcile finds the purchase and
 * settles the row from it. Real sandbox, real daemon and CLI, a real backup and restore.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('a card row that took the last stock after the backup, its batch unfinished at the restore', () => {
  it('is settled from the supplier with its order, never refused as out of stock', async () => {
    const home = tempHome('topup-restore-stock-');
    // Top-ups stay processing for a minute: the batch is still open when the home is restored.
    const sb = await inProcessSandbox({ balanceUsd: 100, fulfilment: { processingShare: 1, processingMs: [60_000, 60_000] } });
    sb.admin.setProduct({ id: 'STEAM-5', stock: 1 });
    const env = cliEnv(home, sb);
    const first = startDaemon(env);
    await waitFor('the daemon started', () => first.output().includes('topup daemon started'), 60_000, 20);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // After the copy: one card (the last in stock) and one top-up (processing) in one file.
    home.drop('keys.csv', csv([['pid', 'userId', 'quantity'], ['STEAM-5', '', '1'], ['PUBG-60', '5300000501', '']]));
    await waitFor('both bought', () => sb.admin.ledger().orders.length === 2, 60_000);
    expect(await first.stop()).toBe(0);
    const card = sb.admin.ledger().orders.find((o) => o.pid === 'STEAM-5')!;

    const restored = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(restored.code, restored.stderr).toBe(0);
    const second = startDaemon(env);
    try {
      await waitForResult(home, 'keys', 150_000);
      const rows = readResult(home, 'keys');
      expect(rows.map((r) => [r.pid, r.status, r.orderId])).toEqual([
        ['STEAM-5', 'completed', card.orderId],
        ['PUBG-60', 'completed', expect.any(String)],
      ]);
      expect(rows[0]!.codes).not.toBe('');
      // Bought once each: nothing after the restore.
      expect(sb.admin.ledger().orders).toHaveLength(2);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 300_000);
});
