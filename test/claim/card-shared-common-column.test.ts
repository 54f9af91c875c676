/**
 * Adversarial review (adv3): a key/card row repeats an earlier purchase of its pack when ANY own
 * column shares a value with it (claim/repeats.ts RepeatMatcher, byValue). A column that is the
 * same for every row of a reseller's day (a Country, a Shop, the price charged, an order Date of the same day) is
 * such a value: every new customer's card of the afternoon file "shares" it with a morning card
 * and is skipped as a repeat, one per morning purchase. Lost sales, reported only as `skipped`.
 *
 * Expected: cards of new customers (every Customer different) are bought.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv3: a column equal for every row makes every new customer\'s card a repeat', () => {
  it('a Country column (DE for all): the afternoon\'s new customers are bought', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['pid', 'quantity', 'Customer', 'Country'], ['STEAM-5', '1', 'alice@example.com', 'DE'], ['STEAM-5', '1', 'bob@example.com', 'DE']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    home.drop('afternoon.csv', semi([['pid', 'quantity', 'Customer', 'Country'], ['STEAM-5', '1', 'carol@example.com', 'DE'], ['STEAM-5', '1', 'dave@example.com', 'DE']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(4);
  });

  it('an order Date column (the same day for everyone): the afternoon\'s new customers are bought', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['pid', 'quantity', 'Date', 'Customer'], ['STEAM-5', '1', '2026-11-26', 'alice@example.com']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    home.drop('afternoon.csv', semi([['pid', 'quantity', 'Date', 'Customer'], ['STEAM-5', '1', '2026-11-26', 'carol@example.com']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });

  it('a Price column (the pack\'s price, the same on every card of it): the afternoon\'s new customers are bought', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('morning.csv', semi([['pid', 'quantity', 'Customer', 'Price'], ['STEAM-5', '1', 'alice@example.com', '6,49']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    home.drop('afternoon.csv', semi([['pid', 'quantity', 'Customer', 'Price'], ['STEAM-5', '1', 'carol@example.com', '6,49']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'afternoon').map((r) => r.status)).toEqual(['completed']);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
