/**
 * Adversarial review (adv4): a key/card row repeats a purchase whose own columns agree wherever
 * both have a value (claim/repeats.ts). Dates are compared by their parts, the time included
 * (readDate), seconds and all. Excel, opening a CSV with `2026-11-26 09:14:33` and saving it again,
 * writes the cell as it shows it: `11/26/2026 9:14` (its default date-time format has no
 * seconds). The time then differs (9:14:33 vs 9:14:00), the rows disagree, and every card of the
 * re-saved file is bought a second time.
 *
 * Expected (money-safe): the Excel-re-saved copy of a file already bought buys nothing again.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv4: a timestamp column re-saved by Excel loses its seconds', () => {
  it('the cards are not bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('cards.csv', semi([['pid', 'quantity', 'Customer', 'Ordered at'], ['STEAM-5', '1', 'alice', '2026-11-26 09:14:33'], ['STEAM-5', '1', 'bob', '2026-11-26 09:20:07']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // Opened in Excel (en-US), a column ticked, saved as CSV: the timestamps as Excel shows them.
    home.drop('cards-v2.csv', semi([['pid', 'quantity', 'Customer', 'Ordered at', 'sent'], ['STEAM-5', '1', 'alice', '11/26/2026 9:14', 'x'], ['STEAM-5', '1', 'bob', '11/26/2026 9:20', 'x']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'cards-v2').map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
