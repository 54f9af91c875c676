/**
 * Adversarial review round 3 (issue 22), failover.ts whole-code refusals. The sender moved a
 * first send refused for balance only when isAccountRefusal(apiCode, reason) held, but the client
 * classifies a refusal as `insufficient-balance` by a much wider rule (api/classify.ts BALANCE_SHORT:
 * INSUFFICIENT_FUNDS, NOT ENOUGH BALANCE, SALDO TIDAK CUKUP, a text with a full stop...). Every such
 * refusal the client reads as "this account is out of money" leaves the row held for a top-up on
 * that account (and does not mark the account short for moved rows) while another account could
 * buy it now. No money is at risk (nothing was created); the sale waits. The classification and the
 * failover rule should read balance refusals alike.
 */
import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../../src/api/classify.js';
import { movesOnRefusal } from '../../src/dispatch/failover.js';

const POST = { method: 'POST', path: '/orders' };

/** What the sender passes: ApiError.apiCode and ApiError.reason (kernel/errors.ts). */
function senderView(body: Record<string, unknown>): { classification: string; moves: boolean } {
  const c = classifyFailure(400, body, POST);
  const reason = c.apiError && c.apiCode && c.apiError !== c.apiCode ? `${c.apiCode}: ${c.apiError}` : (c.apiCode ?? c.apiError ?? '');
  return { classification: c.classification, moves: movesOnRefusal(c.classification, c.apiCode, reason) };
}

describe('balance refusals: what the client reads as out of balance, the failover moves', () => {
  it.each([
    [{ success: false, code: 'INSUFFICIENT_FUNDS', error: 'Insufficient funds' }],
    [{ orderCreated: false, status: 'cancelled', game: 'pubgm', error: 'INSUFFICIENT BALANCE.' }],
    [{ orderCreated: false, status: 'cancelled', game: 'pubgm', error: 'Insufficient balance, please top up' }],
    [{ success: false, error: 'NOT ENOUGH BALANCE' }],
    [{ success: false, error: 'Saldo tidak cukup' }],
  ])('%j', (body) => {
    const v = senderView(body);
    expect(v.classification).toBe('insufficient-balance');
    expect(v.moves).toBe(true);
  });

  it('held: the spec\'s own INSUFFICIENT BALANCE moves', () => {
    expect(senderView({ orderCreated: false, status: 'cancelled', game: 'pubgm', error: 'INSUFFICIENT BALANCE' })).toEqual({ classification: 'insufficient-balance', moves: true });
    expect(senderView({ success: false, code: 'INSUFFICIENT_BALANCE', error: 'INSUFFICIENT BALANCE' })).toEqual({ classification: 'insufficient-balance', moves: true });
  });
});
