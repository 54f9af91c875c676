/**
 * Adversarial review (adv4): a key/card row's identity (claim/repeats.ts identityColumns) leaves
 * out every column whose header cell is blank. A reseller whose customer column has no heading
 * (common: the sheet's first column, names typed under an empty cell) has rows with nothing to
 * compare; the next file of new customers' cards is matched to the earlier file's purchases one
 * for one and skipped as repeats: every new customer's sale is lost, though the column tells
 * them apart plainly (the cells differ).
 *
 * Expected: cards of customers who differ in a column of their own are bought.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv4: a customer column with a blank header cell', () => {
  it("the next file's new customers are bought", async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['', 'pid', 'quantity'], ['alice', 'STEAM-5', '1'], ['bob', 'STEAM-5', '1']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    home.drop('afternoon.csv', semi([['', 'pid', 'quantity'], ['carol', 'STEAM-5', '1'], ['dave', 'STEAM-5', '1']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(4);
  });
});
