/**
 * Found by the simulator (issue 29, `sibling`: several keys of one supplier share one trxid space;
 * test/sim/found/sibling-forbidden-retried.json). A row's first send is refused `403 FORBIDDEN`:
 * the supplier holds its trxid under another API key. That key may be another reseller's, or one
 * of ours: another home, another account of this reseller at the same supplier, or the same file
 * dropped in a second home (derived trxids are the file's, so every row of it is FORBIDDEN there).
 * The row ends `rejected`, and `topup retry` bought it again under a fresh trxid: a second charge
 * whenever the key that holds the trxid is ours. FORBIDDEN may mean "charged", and is never read as
 * "not charged": the retry leaves such a row out, naming why, as it does a trxid "already used".
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { order } from '../sandbox/helpers.js';

releaseAfterEach();

const OUR_OTHER_KEY = 'our-other-home-key-0002';

describe('topup retry of a row refused FORBIDDEN', () => {
  it('is left out (the trxid is held under another key, maybe ours): nothing bought twice', async () => {
    const home = tempHome('retry-forbidden-');
    const sb = await inProcessSandbox({ accounts: [{ apiKey: OUR_OTHER_KEY, balanceUsd: 100 }] });
    const env = cliEnv(home, sb);
    // Another home of this reseller, with its own key at the same supplier, bought SHOP-5 first.
    const other = await order(sb, { pid: 'PUBG-60', trxid: 'SHOP-5', userId: '5123456705' }, OUR_OTHER_KEY);
    expect(other.status).toBe(200);
    const file = join(home.dir, 'shop.csv');
    writeFileSync(file, semi([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456705', 'SHOP-5'], ['PUBG-60', '5123456706', 'SHOP-6']]));
    const first = await runCli(['submit', file, '--json'], env, { timeoutMs: 60_000 });
    const b1 = JSON.parse(first.stdout) as { batchId: string; counts: Record<string, number> };
    expect(b1.counts).toMatchObject({ completed: 1, rejected: 1 });
    const purchases = (): number => sb.admin.ledger().orders.filter((o) => JSON.stringify(o).includes('5123456705')).length;
    expect(purchases()).toBe(1);

    const retry = await runCli(['retry', b1.batchId, '--run', '--json'], env, { timeoutMs: 60_000 });
    // Nothing can be retried safely: refused, naming the row and why.
    expect(purchases(), retry.stdout).toBe(1);
    expect(retry.code).not.toBe(0);
    expect(retry.stderr).toMatch(/line 2: .*FORBIDDEN/);
    expect(retry.stderr).toMatch(/another API key/);
  }, 120_000);
});
