/**
 * The names a trxid goes by, declared once (issue 29, "every identity declared once";
 * src/kernel/identity.ts TRXID_KEYS, TRXID_ANSWER_KEYS). Three lists said it before: the sandbox's
 * supplier reading a request (sandbox/orders.ts), a file's column (intake/columns.ts), an answer's
 * echo (api/schemas.ts readOrder).
 *
 * The money case of it: test/identities/trxid-answer-echo.test.ts. This file holds every reader to
 * the one list (on main it fails at its imports: there was no list).
 */
import { describe, expect, it } from 'vitest';
import { readOrder } from '../../src/api/schemas.js';
import { mismatches } from '../../src/dispatch/order-match.js';
import { canonicalField } from '../../src/intake/columns.js';
import { TRXID_ANSWER_KEYS, TRXID_KEYS } from '../../src/kernel/identity.js';
import { readBody } from '../../src/sandbox/orders.js';

describe('every reader of a trxid reads it under the one list', () => {
  it.each(TRXID_ANSWER_KEYS)('an answer\'s echo under %s', (key) => {
    const order = readOrder({ orderId: 'ORD-1', status: 'completed', [key]: 'ÄB-7' });
    expect(order?.trxid).toBe('ÄB-7');
    // Compared under the one fold (kernel/identity.ts foldTrxid): the same trxid in another case is the row's.
    const row = { trxid: 'äb-7', request: null, productId: null, slug: null, packName: null } as unknown as Parameters<typeof mismatches>[0];
    expect(mismatches(row, order!)).toEqual([]);
  });

  it.each(TRXID_KEYS)('a request to the sandbox\'s supplier, and a file\'s column, under %s', (key) => {
    expect(readBody({ pid: 'PUBG-60', [key]: 'SHOP-1' })).toMatchObject({ trxid: 'SHOP-1' });
    expect(canonicalField(key)).toBe('trxid');
  });

  it('the answer keys are the request keys, the snake case and the spelling of orderID only', () => {
    expect(TRXID_ANSWER_KEYS).toEqual([...TRXID_KEYS, 'trx_id', 'trxID']);
    expect(canonicalField('trx_id')).toBe('trxid');
  });
});
