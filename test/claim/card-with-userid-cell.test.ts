/**
 * Adversarial review (adv3): whether a row is a top-up (repeats by player, pack and quantity
 * alone) or a key/card row (told apart by its own columns) is decided by hasPlayer(): a cell in a
 * userId/zoneId/serverId/moreId column (claim/repeats.ts). In a mixed file (top-ups and gift
 * cards, one userId column), a card row whose userId cell holds the customer's id is then taken
 * for a top-up, but its purchase fingerprint has no player (a card pack takes no userId: the
 * cell is carried through, not sent). So "any earlier purchase of the fingerprint" is ANY card of
 * the pack: the afternoon's card for a new customer is skipped as a repeat of the morning's card
 * for another customer. Lost sales.
 *
 * Expected: a card for another customer (another userId) is bought.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv3: a card row in a mixed file with its customer in the userId column', () => {
  it("the afternoon's card for a new customer is bought", async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['pid', 'userId', 'quantity'], ['PUBG-60', '5123456701', ''], ['STEAM-5', '5123456790', '1']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    home.drop('afternoon.csv', semi([['pid', 'userId', 'quantity'], ['PUBG-60', '5123456702', ''], ['STEAM-5', '5123456791', '1']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(4);
  });
});
