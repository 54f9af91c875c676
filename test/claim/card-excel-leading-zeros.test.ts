/**
 * Adversarial review (adv3): a key/card row of an edited re-drop repeats a purchase when an own
 * column shares a value with it. Excel, re-saving a CSV, rewrites numbers as numbers: a customer
 * number `000123` becomes `123` (a long one `4.91701E+11`). The re-drop then shares no value
 * with the morning's rows (the customer number was the column telling them apart) and every
 * card is bought a second time. The same Excel re-save is already forgiven for dates (cellKey)
 * and for top-ups (player fields alone).
 *
 * Expected (money-safe): the Excel-re-saved copy of a file already bought buys nothing again.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv3: a customer-number column re-saved by Excel', () => {
  it('leading zeros dropped: the cards are not bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('cards.csv', semi([['pid', 'quantity', 'Customer No'], ['STEAM-5', '1', '000123'], ['STEAM-5', '1', '000124']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // Opened in Excel, a column ticked, saved as CSV: Excel wrote the customer numbers as numbers.
    home.drop('cards-v2.csv', semi([['pid', 'quantity', 'Customer No', 'sent'], ['STEAM-5', '1', '123', 'x'], ['STEAM-5', '1', '124', 'x']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'cards-v2').map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
