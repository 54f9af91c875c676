/**
 * Adversarial review (adv3): a key/card file whose quantity column is named `Amount` (or
 * `Count`) has it read as the quantity only after the rows show it (intake/column-report.ts
 * settleColumns). The repeat rule reads the header with mapHeader alone (claim/repeats.ts
 * ownColumns), so there `Amount` is one of the reseller's OWN columns, and every row of a
 * fingerprint (pack + quantity) holds the same value in it: every new customer's card "shares a
 * value" with a card bought earlier that day and is skipped as a repeat. Lost sales.
 *
 * Expected: the afternoon's cards of new customers are bought.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv3: an Amount column read as the quantity', () => {
  it('the afternoon\'s cards for new customers are bought, not skipped as repeats of the morning\'s', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['pid', 'Amount', 'Customer'], ['STEAM-5', '1', 'alice@example.com'], ['STEAM-5', '1', 'bob@example.com']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    home.drop('afternoon.csv', semi([['pid', 'Amount', 'Customer'], ['STEAM-5', '1', 'carol@example.com'], ['STEAM-5', '1', 'dave@example.com']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(4);
  });
});
