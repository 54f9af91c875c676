/**
 * Adversarial review (adv2): the repeat rule looks at no more than 200 earlier rows of one
 * fingerprint (store/row-reads.ts earlierRows: ORDER BY b.seq DESC, r.idx LIMIT 200). For key/card
 * rows the fingerprint is the pack and quantity alone, so a reseller's day of "STEAM-5 × 1" rows
 * (each told apart by a Customer column) easily has more than 200. The row that a re-drop repeats
 * is then not among the 200 looked at, and the re-drop buys it a second time.
 *
 * Money-safe outcome stated by each test: the edited re-drop of a file already bought buys nothing.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

// The rule under test is the repeat check, not the rate gate: both sides allow 400 calls a second,
// so the 420 orders take seconds instead of two minutes at the spec's 200 a minute.
const FAST = { rateLimits: [{ limit: 400, windowMs: 1_000 }], fulfilment: { processingShare: 0, processingMs: [0, 0] as [number, number], failShare: 0 } };
const FAST_ENV = { TOPUP_RATE_LIMITS: '400/1s,24000/60s', TOPUP_RATE_MARGIN_MS: '20' };

describe('adv2: repeats beyond the first 200 rows of one pack', () => {
  it('an edited re-drop of a file of 210 gift cards (one per customer) buys nothing again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 10_000, ...FAST });
    const env = cliEnv(home, sb, FAST_ENV);
    const customers = Array.from({ length: 210 }, (_, i) => `cust-${String(i).padStart(3, '0')}`);
    home.drop('cards.csv', semi([['pid', 'quantity', 'Customer'], ...customers.map((c) => ['STEAM-5', '1', c])]));
    expect((await runCli(['daemon', '--once'], env, { timeoutMs: 120_000 })).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(210);

    // The same file opened again and a column added (the reseller ticks what was delivered).
    home.drop('cards-v2.csv', semi([['pid', 'quantity', 'Customer', 'delivered'], ...customers.map((c) => ['STEAM-5', '1', c, 'yes'])]));
    expect((await runCli(['daemon', '--once'], env, { timeoutMs: 120_000 })).code).toBe(0);
    const statuses = readResult(home, 'cards-v2').map((r) => r.status);
    expect(statuses.filter((s) => s !== 'skipped')).toEqual([]);
    expect(sb.admin.ledger().orders).toHaveLength(210);
  }, 240_000);

  it("a morning card re-dropped after an afternoon file of 200 other customers' cards of the same pack is not bought again", async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 10_000, ...FAST });
    const env = cliEnv(home, sb, FAST_ENV);
    home.drop('morning.csv', semi([['pid', 'quantity', 'Customer'], ['STEAM-5', '1', 'alice']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    const others = Array.from({ length: 200 }, (_, i) => `new-${i}`);
    home.drop('afternoon.csv', semi([['pid', 'quantity', 'Customer'], ...others.map((c) => ['STEAM-5', '1', c])]));
    expect((await runCli(['daemon', '--once'], env, { timeoutMs: 120_000 })).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(201);

    // The morning file, edited (a column added), dropped again: alice's card was bought this morning.
    home.drop('morning-v2.csv', semi([['pid', 'quantity', 'Customer', 'note'], ['STEAM-5', '1', 'alice', 'sent']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'morning-v2').map((r) => r.status)).toEqual(['skipped']);
    expect(sb.admin.ledger().orders).toHaveLength(201);
  }, 240_000);
});
