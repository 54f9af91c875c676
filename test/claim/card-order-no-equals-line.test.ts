/**
 * Adversarial review (adv3): a value equal to its row's line (or line - 1) is taken for a row
 * number and left out of a key/card row's identity (claim/repeats.ts identity). A reseller whose
 * order numbers start at 1 each day writes them as `Order No` 1, 2, 3 … on lines 2, 3, 4: the
 * morning's cards then have NOTHING that tells them apart, and "no column with a value in
 * common" makes every later card of the pack that day a repeat of one of them, the afternoon's
 * new orders 3 and 4 included. Lost sales.
 *
 * Expected: the afternoon's new order numbers are bought.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv3: order numbers that happen to equal the row\'s line', () => {
  it('the afternoon\'s new orders 3 and 4 are bought', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['pid', 'quantity', 'Order No'], ['STEAM-5', '1', '1'], ['STEAM-5', '1', '2']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    home.drop('afternoon.csv', semi([['pid', 'quantity', 'Order No'], ['STEAM-5', '1', '3'], ['STEAM-5', '1', '4']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(4);
  });
});
