/**
 * Adversarial review (adv4): partial matches (a re-drop with a column added since) are given out
 * row by row in file order, each row taking the purchase it agrees with best
 * (RepeatMatcher.matchAll), not best first across the file. A new row written above an old one,
 * its Customer cell still blank, agrees with the old customer's purchase on the one value it has
 * (the Date) and takes it; the old customer's row, below, then finds its purchase taken and is
 * bought a second time (and the new row is skipped: a lost sale as well).
 *
 * Expected (money-safe): the old customer's card is not bought again.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv4: partial matches given out in file order', () => {
  it('a new row above an old one with the Customer not filled in yet does not take the old purchase', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('cards.csv', semi([['pid', 'quantity', 'Customer', 'Date'], ['STEAM-5', '1', 'alice', '2026-11-26']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(1);

    // Edited: a "sent" column ticked for alice, and a walk-in card added above her, name to follow.
    home.drop('cards-v2.csv', semi([['pid', 'quantity', 'Customer', 'Date', 'sent'], ['STEAM-5', '1', '', '2026-11-26', ''], ['STEAM-5', '1', 'alice', '2026-11-26', 'x']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    const statuses = readResult(home, 'cards-v2').map((r) => r.status);
    // alice (line 3) repeats her purchase; whatever becomes of the walk-in, alice is not bought twice.
    expect(statuses[1]).toBe('skipped');
    expect(sb.admin.ledger().orders.length).toBeLessThanOrEqual(2);
  });
});
