/**
 * Envelope fields that look like order facts. Found in review of the tolerant readers: an
 * envelope's `code: 200` was read as a delivered code, and an order inside `data` of a refusal
 * was not seen, so a charged first send read as "not charged".
 */
import { describe, expect, it } from 'vitest';
import { classifyFailure } from '../../src/api/classify.js';
import { readOrder } from '../../src/api/schemas.js';

describe('envelopes around orders', () => {
  it.each([[200], ['200'], ['SUCCESS'], ['ok']])('an envelope code %j is not a delivered code', (code) => {
    expect(readOrder({ code, orderId: '5', status: 'completed', codes: null })?.codes).toBeUndefined();
    expect(readOrder({ code, orderId: '5', status: 'completed' })?.codes).toBeUndefined();
  });

  it('a single code in `code` that looks like a voucher is delivered', () => {
    expect(readOrder({ code: 'ABCD-1234-EFGH', orderId: '5', status: 'completed' })?.codes).toEqual(['ABCD-1234-EFGH']);
    expect(readOrder({ code: 200, orderId: '5', status: 'completed', codes: ['K-1'] })?.codes).toEqual(['K-1']);
  });

  it('a refusal carrying an order in `data` may have been charged', () => {
    const submit = { method: 'POST', route: 'submit' } as const;
    const c = classifyFailure(400, { success: false, message: 'Provider timeout', data: { orderCreated: true, status: 'processing' } }, submit as never);
    expect(c.mayExist).toBe(true);
    const plain = classifyFailure(400, { success: false, message: 'Provider timeout', data: null }, submit as never);
    expect(plain.mayExist).toBe(false);
  });
});

describe('a 503 that says the call budget is spent', () => {
  it.each(['RATE_LIMIT', 'TOO_MANY_REQUESTS', 'RATE_LIMIT_UNAVAILABLE'])('%s holds every call when it names a Retry-After', (code) => {
    const c = classifyFailure(503, { success: false, error: code }, { method: 'GET', route: 'order' } as never);
    expect(c.holdCalls).toBe('with-retry-after');
  });

  it('a maintenance 503 holds no call (polls go on)', () => {
    expect(classifyFailure(503, { success: false, error: 'MAINTENANCE' }, { method: 'GET', route: 'order' } as never).holdCalls).toBe(false);
  });
});
