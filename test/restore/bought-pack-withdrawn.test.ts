/**
 * Adversarial review of f7ff557 (stop 37, rev37b): a file loaded while its rows may have been
 * bought already is validated without the pack's stock and price now, but not without its
 * *listing*: intake/pack-facts.ts still refuses a pack whose status is not `active`, and a pid the
 * catalog no longer lists is "not in the catalog" (validate.ts), whatever `availability` says. A
 * card bought after the copy whose pack was then withdrawn (delisted: the sandbox, like many
 * suppliers, stops listing an inactive product) is born `invalid` when its folder is claimed again
 * after the restore: never looked up (restore-reconcile LOOKED_UP has no `invalid`), its order,
 * codes paid for, held by no row: the very loss of test/restore/bought-last-stock.test.ts, one
 * catalog change later. Real sandbox, real daemon and CLI, a real backup and restore.
 *
 * Failed first (stop 37, rev37b); fixed by claim/held-refusals.ts: the row is held for its lookup,
 * found bought and settled. Beside it a row of a pack withdrawn before the first drop (never
 * bought) is held the same way, found nowhere and refused as it would have been.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('a card row bought after the backup whose pack was withdrawn before the restore, its batch unfinished', () => {
  it('is settled from the supplier with its order, never refused as a pack not on sale', async () => {
    const home = tempHome('rev37b-withdrawn-');
    const sb = await inProcessSandbox({ balanceUsd: 100, fulfilment: { processingShare: 1, processingMs: [60_000, 60_000] } });
    const env = cliEnv(home, sb);
    const first = startDaemon(env);
    await waitFor('the daemon started', () => first.output().includes('topup daemon started'), 60_000, 20);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // STEAM-10 is off sale from the start: refused, never bought, before the restore and after it.
    sb.admin.setProduct({ id: 'STEAM-10', status: 'inactive' });
    home.drop('keys.csv', csv([['pid', 'userId', 'quantity'], ['STEAM-5', '', '1'], ['PUBG-60', '5300000501', ''], ['STEAM-10', '', '1']]));
    await waitFor('both bought', () => sb.admin.ledger().orders.length === 2, 60_000);
    expect(await first.stop()).toBe(0);
    const card = sb.admin.ledger().orders.find((o) => o.pid === 'STEAM-5')!;
    // The supplier withdraws the pack (sold out for good) before the home is restored.
    sb.admin.setProduct({ id: 'STEAM-5', status: 'inactive' });

    const restored = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(restored.code, restored.stderr).toBe(0);
    const second = startDaemon(env);
    try {
      await waitForResult(home, 'keys', 150_000);
      const rows = readResult(home, 'keys');
      // On main: ['STEAM-5', 'invalid', ''] — the purchase held by no row.
      expect(rows.map((r) => [r.pid, r.status, r.orderId]), JSON.stringify(rows)).toEqual([
        ['STEAM-5', 'completed', card.orderId],
        ['PUBG-60', 'completed', expect.any(String)],
        ['STEAM-10', 'invalid', ''],
      ]);
      // Looked up and found nowhere: the refusal it would have had, and the lookup said.
      expect(rows[2]!.error).toMatch(/STEAM-10/);
      expect(rows[2]!.error).toMatch(/looked up after a restore .*bought nowhere/);
      expect(sb.admin.ledger().orders).toHaveLength(2);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 300_000);
});
