/**
 * Adversarial review (adv2): a retry of a retry is checked for repeats against every batch except
 * the one it retries (store/row-reads.ts EARLIER_TERMS: `r.batch_id IS NOT @retried`). The first
 * batch, two retries back, is looked at. A file with the same top-up twice (two purchases for one
 * player; "within one file, equal rows are separate purchases"): line 2 bought, line 3 cancelled
 * and refunded (the sandbox says INVALID PLAYER, so the operator retries with
 * --include-player-failures, having fixed nothing: a supplier hiccup); `topup retry` of the file's batch fails again (cancelled, refunded); `topup retry`
 * of that retry batch skips line 3 as a "repeat" of line 2, its own twin in the very file it came
 * from, which the first retry did not do.
 *
 * Expected (user): the retry of the retry buys the second top-up, as the first retry would have.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { uniform } from '../../src/sandbox/fulfilment.js';

releaseAfterEach();

type Done = { batchId: string; counts: Record<string, number> };

describe('adv2: retry of a retry of a file with two equal purchases', () => {
  it('the second of two equal top-ups, failed twice, is bought by the retry of the retry', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const seed = 7;
    sb.admin.setFulfilment({ seed, failShare: 0.5, processingMs: [50, 100] });
    // The shop's own order numbers as trxids: one whose order completes, one whose order fails.
    const names = Array.from({ length: 64 }, (_, i) => `SHOP-${i}`);
    const ok = names.find((t) => uniform(seed, t, 'fail') >= 0.5)!;
    const bad = names.find((t) => uniform(seed, t, 'fail') < 0.5)!;
    const file = join(home.dir, 'two.csv');
    writeFileSync(file, semi([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456701', ok], ['PUBG-60', '5123456701', bad]]));
    const first = await runCli(['submit', file, '--json'], env, { timeoutMs: 60_000 });
    const b1 = JSON.parse(first.stdout) as Done;
    expect(b1.counts).toMatchObject({ completed: 1, cancelled: 1 });

    // Every order fails for now: the retry ends cancelled (refunded) again.
    sb.admin.setFulfilment({ failShare: 1 });
    const r2 = await runCli(['retry', b1.batchId, '--include-player-failures', '--run', '--json'], env, { timeoutMs: 60_000 });
    expect(r2.stdout, r2.stderr).not.toBe('');
    const b2 = JSON.parse(r2.stdout) as Done;
    expect(b2.counts).toMatchObject({ cancelled: 1 });

    // The supplier is fine again: the retry of the retry buys it.
    sb.admin.setFulfilment({ failShare: 0 });
    const r3 = await runCli(['retry', b2.batchId, '--include-player-failures', '--run', '--json'], env, { timeoutMs: 60_000 });
    expect(r3.stdout, r3.stderr).not.toBe('');
    expect(JSON.parse(r3.stdout).counts).toMatchObject({ completed: 1, skipped: 0 });
  });
});
