/**
 * Adversarial review round 3 (issue 22), retry.ts "a row its batch's cancel skipped before it was
 * sent keeps the trxid its file gave it". A row that MOVED to another account (failover) has
 * first_sent_at reset to NULL by the move (rows.ts move), so when the batch is then cancelled before
 * the new account sends it, the retry hands it back its file's trxid: the very trxid it was sent
 * with and LEFT on the first account (left_trxids). The retry's claim finds that trxid used and
 * stores the row `invalid` ("trxid ... was already used"): the row can never be bought by a retry
 * (invalid is not retried), where before the change the retry bought it under a fresh derived
 * trxid. A lost sale, no money.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, TEST_KEY } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

async function batchOf(env: NodeJS.ProcessEnv, file: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const st = await runCli(['status', '--json'], env);
    if (st.stdout !== '') {
      const batches = (JSON.parse(st.stdout) as { batches: { id: string; file: string }[] }).batches;
      const b = batches.find((x) => x.file.startsWith(file));
      if (b) return b.id;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return '';
}

describe('retry of a cancelled batch whose rows had moved to another account', () => {
  it('rows refused on one account (pack disabled), moved to the other and cancelled there before being sent: the retry buys them (not "trxid already used")', async () => {
    const home = tempHome('adv7-moved-');
    const first = await inProcessSandbox();
    const slow = await inProcessSandbox();
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
    const acct = (name: string, url: string, extra = '') => `[[account]]\nname = "${name}"\nurl = "${url}"\nkey_file = "keys/k"\n${extra}\n`;
    // priority: every row goes to `first`.
    writeFileSync(join(home.dir, 'accounts.toml'), `routing = "priority"\nmax_queue_delay = "30m"\n${acct('first', first.url)}${acct('slow', slow.url)}`);
    const env = { ...cliEnv(home, null, { TOPUP_API_KEY: '' }), TOPUP_REQUEST_TIMEOUT_MS: '2000' };
    const daemon = startDaemon({ ...env, TOPUP_CATALOG_MAX_AGE_MS: '600000' });
    let id = '';
    const players = Array.from({ length: 6 }, (_, i) => String(5_123_458_001 + i));
    try {
      home.drop('warm.csv', csv([['pid', 'userId'], ['PUBG-60', '5123458000']]));
      await expect.poll(() => { try { return readResult(home, 'warm').length; } catch { return 0; } }, { timeout: 30_000 }).toBe(1);
      // `first` stops selling the pack; the daemon's cached catalog still lists it.
      first.admin.setProduct({ id: 'PUBG-60', status: 'inactive' });
      // and `slow` takes no orders for a while: rows moved there wait, unsent, until the cancel.
      slow.admin.setFaults({ maintenance: { code: 'API_ORDER_DISABLED' } });
      home.drop('shop.csv', csv([['pid', 'userId', 'trxid'], ...players.map((p, i) => ['PUBG-60', p, `SHOP-70${i}`])]));
      id = await batchOf(env, 'shop');
      expect(id).not.toBe('');
      // All six refused by `first` (nothing created) and moved; some bought on `slow`, the rest wait there.
      await expect.poll(() => first.admin.calls().filter((c) => c.method === 'POST').length, { timeout: 60_000, interval: 50 }).toBe(7);
      await expect.poll(() => slow.admin.calls().filter((c) => c.method === 'POST').length, { timeout: 60_000, interval: 50 }).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await runCli(['cancel', id], env, { timeoutMs: 60_000 })).code).toBe(0);
    } finally {
      await daemon.stop();
    }
    const before = readResult(home, 'shop');
    const skipped = before.filter((r) => r.status === 'skipped').length;
    expect(skipped).toBeGreaterThan(0);
    expect(before.filter((r) => r.status === 'completed').length).toBe(6 - skipped);
    expect(slow.admin.ledger().orders).toHaveLength(6 - skipped);
    slow.admin.setFaults({ maintenance: null });

    // Maintenance over, the reseller retries the rows never bought.
    const retry = await runCli(['retry', id, '--run', '--json'], env, { timeoutMs: 120_000 });
    const again = readResult(home, `shop.retry-${id}`);
    expect(again).toHaveLength(skipped);
    // Each bought by the retry, once, across the two ledgers; none refused as "trxid already used"
    // (on main: every moved-then-cancelled row ends `invalid`, its file's trxid used by itself on `first`).
    expect(again.map((r) => [r.status, r.error]), retry.stderr.slice(-1000)).toEqual(Array(skipped).fill(['completed', '']));
    const bought = [first, slow].flatMap((sb) => sb.admin.ledger().orders.map((o) => String(o.userId)));
    expect(bought.sort()).toEqual(['5123458000', ...players]);
  }, 200_000);
});
