/**
 * `topup review`'s orderId column (src/commands/review.ts heldOrderId) reads the order a review
 * row's last stored answer names the way every answer is read for its order (api/order-id.ts
 * ORDER_ID_KEYS, at the top, in an envelope, or in a nested `order`; issue 29, "every identity
 * declared once"). It read `orderId` and `data.orderId` only: a row whose last answer named its
 * order as `order_id`, `id_order`, `orderID` or `order.orderId` showed an empty orderId, and a person
 * deciding from the table may resolve it `--not-charged`, which lets `topup retry` buy it again.
 *
 * Fails on main: every spelling but `orderId` / `data.orderId` shows ''.
 */
import { describe, expect, it } from 'vitest';
import { ORDER_ID_KEYS } from '../../src/api/order-id.js';
import { heldOrderId } from '../../src/commands/review.js';

const stored = (body: unknown, status = 200): string => JSON.stringify({ route: 'POST /orders', status, at: '2026-11-28T00:00:00.000Z', body });
const held = (body: unknown, status?: number): string => heldOrderId({ orderId: null, lastAnswer: stored(body, status) });

describe('topup review: the order a review row\'s last answer names, under every spelling', () => {
  it.each(ORDER_ID_KEYS)('at the top, under %s', (key) => {
    expect(held({ success: true, [key]: 'ORD-41', status: 'Pending' })).toBe('ORD-41 (in the last answer)');
  });

  it.each([
    ['in `data`, snake case', { status: true, data: { order_id: 'ORD-42' } }, 'ORD-42'],
    ['in `result`', { result: { orderID: 'ORD-43' } }, 'ORD-43'],
    ['in `response`, as a PHP panel names it', { response: { id_order: 9044 } }, '9044'],
    ['nested under `order` (a refusal that carries its order)', { success: false, error: 'PROVIDER ERROR', order: { orderId: 'ORD-45', status: 'processing' } }, 'ORD-45'],
    ['in `data.order`', { data: { order: { order_id: 'ORD-46' } } }, 'ORD-46'],
  ] as const)('%s', (_what, body, id) => {
    expect(held(body, 400)).toBe(`${id} (in the last answer)`);
  });

  it('a bare `id` (a gateway\'s request id), an empty key, or no answer: nothing is shown as the order', () => {
    expect(held({ success: false, error: 'INTERNAL ERROR', id: 'req-7f3a' }, 500)).toBe('');
    expect(held({ success: false, order_id: '  ' }, 400)).toBe('');
    expect(heldOrderId({ orderId: null, lastAnswer: null })).toBe('');
    expect(heldOrderId({ orderId: null, lastAnswer: 'not json' })).toBe('');
    // The row's own order first.
    expect(heldOrderId({ orderId: 'ORD-7', lastAnswer: stored({ order_id: 'ORD-8' }) })).toBe('ORD-7');
  });
});
