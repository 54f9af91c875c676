/**
 * Adversarial review (adv2): "within one file, equal rows are separate purchases" (claim/repeats.ts),
 * yet every row of a re-drop that matches ONE earlier purchase is skipped as its repeat. The morning
 * file bought one top-up for a player; the reseller re-drops the file with a second, equal line for
 * that player (a second top-up the customer paid for). Both lines are skipped: the second purchase
 * is never bought. And the advice the skipped rows give, `topup retry BATCH --repeats`, buys BOTH:
 * the morning's top-up a second time.
 *
 * Expected: one earlier purchase is repeated by one row of the re-drop; the other equal row is bought
 * (then --repeats has nothing to buy twice).
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv2: a re-drop with one more equal row than the purchases made', () => {
  it('one of the two equal rows repeats the one purchase; the other is bought', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('m.csv', semi([['pid', 'userId'], ['PUBG-60', '5123456701']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(1);

    home.drop('m-v2.csv', semi([['pid', 'userId', 'note'], ['PUBG-60', '5123456701', ''], ['PUBG-60', '5123456701', 'second top-up, paid at noon']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'm-v2').map((r) => r.status).sort()).toEqual(['completed', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
