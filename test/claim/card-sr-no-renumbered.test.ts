/**
 * Adversarial review (adv4): a column numbering the rows is left out of a key/card row's identity
 * only when its name is in a fixed list (claim/repeats.ts ROW_NUMBER_NAMES: No, #, Row, S.No, Sl No
 * …). `Sr No` / `Sr. No.` (the usual serial-number heading in South-Asian sheets) is not in it. A
 * reseller inserts a new customer at the top and lets Excel renumber the column: every old row's
 * Sr No moves by one, disagrees with its purchase, and every old customer's card is bought again.
 *
 * Expected (money-safe): only the inserted customer's card is bought.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv4: a serial-number column named "Sr. No." renumbered after a row is inserted', () => {
  it('the old customers are not bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const H = ['Sr. No.', 'pid', 'quantity', 'Customer'];
    home.drop('cards.csv', semi([H, ['1', 'STEAM-5', '1', 'alice'], ['2', 'STEAM-5', '1', 'bob']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // A new customer inserted at the top, the serial numbers filled down again.
    home.drop('cards-v2.csv', semi([H, ['1', 'STEAM-5', '1', 'zed'], ['2', 'STEAM-5', '1', 'alice'], ['3', 'STEAM-5', '1', 'bob']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'cards-v2').map((r) => r.status)).toEqual(['completed', 'skipped', 'skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(3);
  });
});
