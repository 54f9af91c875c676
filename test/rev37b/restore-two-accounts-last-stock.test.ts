/**
 * Adversarial review of f7ff557 (stop 37, rev37b): "after a restore, a file's rows are validated
 * without the pack's stock and price now" holds for a home with ONE account only. With several,
 * claim/placement.ts hands every row to account/routing.ts Router.place, whose carriers() keeps
 * only packs `inStock !== false` and whose cap check ignores `availability` (mayHoldBoughtRows is
 * read by the validator alone). So the very row of test/restore/bought-last-stock.test.ts (a card
 * bought after the copy, the last in stock) in a two-account home is born `invalid` ("pack: no
 * account sells ... now") when its folder is claimed again after the restore: never looked up
 * (restore-reconcile LOOKED_UP has no `invalid`), its order, codes paid for, held by no row.
 * Real sandboxes, real daemon and CLI, a real backup and restore.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, TEST_KEY, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { defaultCatalog } from '../../src/sandbox/default-catalog.js';

releaseAfterEach();

describe('two accounts: a card row that took the last stock after the backup, its batch unfinished at the restore', () => {
  it('is settled from the supplier with its order, never refused as "no account sells it now"', async () => {
    const home = tempHome('rev37b-two-stock-');
    // Top-ups stay processing for a minute at main: the batch is still open when the home is restored.
    const a = await inProcessSandbox({ balanceUsd: 100, fulfilment: { processingShare: 1, processingMs: [60_000, 60_000] } });
    const c = defaultCatalog();
    const fileB = join(home.dir, 'catalog-b.json');
    writeFileSync(fileB, JSON.stringify({ services: c.services, products: c.products.map((p) => ({ ...p, id: `B-${p.id}` })) }));
    const b = await inProcessSandbox({ catalogFile: fileB });
    a.admin.setProduct({ id: 'STEAM-5', stock: 1 });
    b.admin.setProduct({ id: 'B-STEAM-5', stock: 0 });
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'main.key'), TEST_KEY, { mode: 0o600 });
    writeFileSync(join(home.dir, 'keys', 'second.key'), TEST_KEY, { mode: 0o600 });
    writeFileSync(join(home.dir, 'accounts.toml'),
      `routing = "priority"\n[[account]]\nname = "main"\nurl = "${a.url}"\nkey_file = "keys/main.key"\n\n[[account]]\nname = "second"\nurl = "${b.url}"\nkey_file = "keys/second.key"\n`);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    const first = startDaemon(env);
    await waitFor('the daemon started', () => first.output().includes('topup daemon started'), 60_000, 20);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    home.drop('keys.csv', csv([['pid', 'userId', 'quantity'], ['STEAM-5', '', '1'], ['PUBG-60', '5300000501', '']]));
    await waitFor('both bought at main', () => a.admin.ledger().orders.length === 2, 60_000);
    expect(await first.stop()).toBe(0);
    const card = a.admin.ledger().orders.find((o) => o.pid === 'STEAM-5')!;

    const restored = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(restored.code, restored.stderr).toBe(0);
    const second = startDaemon(env);
    try {
      await waitForResult(home, 'keys', 150_000);
      const rows = readResult(home, 'keys');
      // On main: the card row comes back `invalid` "pack: no account sells Steam ... now", its order nowhere.
      expect(rows.map((r) => [r.pid, r.status, r.orderId]), JSON.stringify(rows)).toEqual([
        ['STEAM-5', 'completed', card.orderId],
        ['PUBG-60', 'completed', expect.any(String)],
      ]);
      expect(a.admin.ledger().orders.length + b.admin.ledger().orders.length).toBe(2);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 300_000);
});
