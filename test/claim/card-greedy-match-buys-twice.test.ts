/**
 * Adversarial review (adv3): RepeatMatcher gives each earlier purchase to the FIRST row of the
 * file that matches it in any way (claim/repeats.ts take, in file order), not to the row that
 * matches it best. With a column equal for every row (a Country, an order Date of the day), a
 * new customer's card inserted at the top of an edited re-drop takes the morning's purchase
 * through that column; the row that truly repeats it (the same Customer) then finds the purchase
 * taken and is BOUGHT AGAIN, while the new customer's card is skipped. The adv2 scenario "a late
 * order added at the top" is exactly this file.
 *
 * Expected (money-safe): alice's card, bought this morning, is skipped; bob's (new) is bought.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv3: a new row at the top of an edited re-drop takes the purchase its twin below repeats', () => {
  for (const [column, value] of [['Country', 'DE'], ['Date', '2026-11-26']] as const) {
    it(`a ${column} column equal for both rows: alice's card is not bought twice`, async () => {
      const home = tempHome();
      const sb = await inProcessSandbox();
      const env = cliEnv(home, sb);
      home.drop('day.csv', semi([['pid', 'quantity', 'Customer', column], ['STEAM-5', '1', 'alice@example.com', value]]));
      expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
      expect(sb.admin.ledger().orders).toHaveLength(1);

      // A late order for bob added at the top, the file dropped again.
      home.drop('day-v2.csv', semi([['pid', 'quantity', 'Customer', column], ['STEAM-5', '1', 'bob@example.com', value], ['STEAM-5', '1', 'alice@example.com', value]]));
      expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
      expect(readResult(home, 'day-v2').map((r) => `${r.Customer} ${r.status}`)).toEqual(['bob@example.com completed', 'alice@example.com skipped']);
      expect(sb.admin.ledger().orders).toHaveLength(2);
    });
  }
});
