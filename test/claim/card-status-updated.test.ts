/**
 * Adversarial review (adv4): a key/card row repeats a purchase only when its own columns agree
 * wherever both have a value (claim/repeats.ts). A Status column that was filled in since is
 * forgiven (empty then), but one whose value the reseller's workflow updates (`paid` → `sent`,
 * `new` → `done`) disagrees: the re-drop of the file, the customers unchanged, buys every card a
 * second time. The docs name "a Status filled in" among the changes between two saves of a file.
 *
 * Expected (money-safe): a re-drop whose only change is the Status buys nothing again.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv4: a Status column updated between two saves of a card file', () => {
  it('the cards are not bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const H = ['pid', 'quantity', 'Customer', 'Status'];
    home.drop('cards.csv', semi([H, ['STEAM-5', '1', 'alice', 'paid'], ['STEAM-5', '1', 'bob', 'paid']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    home.drop('cards-v2.csv', semi([H, ['STEAM-5', '1', 'alice', 'sent'], ['STEAM-5', '1', 'bob', 'sent']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    // The file has a Status of its own: the result's column is result_status.
    expect(readResult(home, 'cards-v2').map((r) => r.result_status)).toEqual(['skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
