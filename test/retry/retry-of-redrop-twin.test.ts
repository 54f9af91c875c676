/**
 * Adversarial review (adv4): an ordinary `topup retry` checks its rows against earlier purchases
 * of every batch outside its own chain (claim/repeats.ts skipRepeats), matching each from scratch.
 * But the purchase it finds may already be accounted for. A top-up bought in the morning (batch
 * 1); the file edited to hold the same top-up twice (the player paid for a second one) and dropped
 * again (batch 2): line 2 is skipped as the morning's purchase, line 3 is bought, as documented
 * ("a re-drop with one more equal row buys that one"). Line 3's order fails and is refunded. The
 * retry of batch 2 then skips line 3 as a "repeat" of the morning's purchase, the one batch 2's
 * line 2 already stands for: the second top-up, paid for by the player, is never bought.
 *
 * Expected: the retry of batch 2 buys the second top-up.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

type Done = { batchId: string; counts: Record<string, number> };

describe('adv4: retry of an edited re-drop whose extra equal row failed', () => {
  it('buys the second top-up', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    sb.admin.setFulfilment({ failShare: 0, processingMs: [20, 40] });
    const one = join(home.dir, 'orders.csv');
    writeFileSync(one, semi([['pid', 'userId', 'Customer'], ['PUBG-60', '5123456701', 'alice']]));
    const b1 = JSON.parse((await runCli(['submit', one, '--json'], env, { timeoutMs: 60_000 })).stdout) as Done;
    expect(b1.counts).toMatchObject({ completed: 1 });

    // Alice paid for a second top-up: the file edited, the row written twice, dropped again.
    sb.admin.setFulfilment({ failShare: 1 });
    const two = join(home.dir, 'orders-v2.csv');
    writeFileSync(two, semi([['pid', 'userId', 'Customer'], ['PUBG-60', '5123456701', 'alice'], ['PUBG-60', '5123456701', 'alice (2nd)']]));
    const b2 = JSON.parse((await runCli(['submit', two, '--json'], env, { timeoutMs: 60_000 })).stdout) as Done;
    expect(b2.counts).toMatchObject({ skipped: 1, cancelled: 1 });
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // The supplier is fine again: the retry buys the failed second top-up.
    sb.admin.setFulfilment({ failShare: 0 });
    const r = await runCli(['retry', b2.batchId, '--include-player-failures', '--run', '--json'], env, { timeoutMs: 60_000 });
    expect(r.stdout, r.stderr).not.toBe('');
    expect(JSON.parse(r.stdout).counts).toMatchObject({ completed: 1, skipped: 0 });
  });
});
