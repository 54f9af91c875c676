/**
 * dispatch/order-match.ts directly (issue 24: it had no test of its own; the sender, history check
 * and recheck tests reach it through their paths). Orders are read from answer bodies by the API
 * client's own reader (api/schemas.ts readOrder), rows built as the store returns them.
 */
import { describe, expect, it } from 'vitest';
import { readOrder, type Order } from '../../src/api/schemas.js';
import { toRow, type RowRecord } from '../../src/store/row-record.js';
import type { Row } from '../../src/store/rows.js';
import {
  DERIVED_TRXID, MEASURED_SKEW_MS, SURELY_OLDER_MS, UNMEASURED_SKEW_MS, createdAtMs, describeMismatches, factsFor, foreignOrderProblem, mismatches,
  mustProve, needsCodes, originOf, serverOffset, surelyBefore, unnamedFields,
} from '../../src/dispatch/order-match.js';

const DERIVED = `tu${'0123456789abcdef'.repeat(2).slice(0, 30)}`;

function row(request: Record<string, unknown>, extra: Partial<RowRecord> = {}): Row {
  const r: RowRecord = {
    batch_id: 'b1', idx: 0, line: 2, cells_json: '[]', state: 'sending', account: 'default', moves_json: null, pinned: 0, trxid: String(request.trxid), request_json: JSON.stringify(request),
    product_id: String(request.pid), slug: 'pubg', pack_name: '60 UC', quantity: (request.quantity as number | undefined) ?? 1, unit_price_usd: 0.92,
    expected_usd: 0.92, max_price_usd: null, order_id: null, amount_usd: null, codes_json: null, refunded: null, error: null, reject_code: null,
    attempts: 1, first_sent_at: 1_000_000, last_sent_at: 1_000_000, doubt_since: null, doubt_tries: 0, next_try_at: 0, next_poll_at: 0, polls: 0,
    last_answer: null, note: null, code_reads: 0, review_since: null, resolution: null, resolved_by: null, resolved_at: null, updated_at: 1_000_000,
    ...extra,
  };
  return toRow(r);
}
const order = (body: Record<string, unknown>): Order => readOrder(body)!;

const topUp = row({ pid: 'PUBG-60', trxid: 'SHOP-1001', userId: '5123456789' });
const card = row({ pid: 'KEY-PUBG-60', trxid: 'SHOP-2002', quantity: 3 });

describe('mismatches: only fields the answer names, compared as the rules say', () => {
  it('the same purchase: nothing differs, whatever the answer leaves out or how it echoes the player', () => {
    expect(mismatches(topUp, order({ orderId: 'O1', status: 'completed' }))).toEqual([]);
    expect(mismatches(topUp, order({ orderId: 'O1', status: 'completed', trxid: ' shop-1001 ', pid: 'PUBG-60', userId: '5123456789 (2005)' }))).toEqual([]);
  });

  it('a key/card order delivering more codes than the row asked for is another purchase, though it names no quantity', () => {
    // The simulator (seed 511274583, world classes twins + unmarked-replay): a 1-key row's first
    // send answered, without a replay mark or a creation time, by a foreign order made earlier
    // under its trxid for 2 keys; the answer named no quantity, and the row completed with the
    // other buyer's two codes while nothing was bought for it.
    const one = row({ pid: 'KEY-PUBG-60', trxid: 'SHOP-2', quantity: 1 });
    expect(mismatches(one, order({ orderId: 'M1', status: 'completed', codes: ['M1-C1', 'M1-C2'] }))).toEqual([{ field: 'codes', sent: 'quantity 1', got: '2 codes' }]);
    expect(mismatches(card, order({ orderId: 'M2', status: 'completed', codes: ['a', 'b', 'c'] }))).toEqual([]);
    // Fewer codes than keys is not another purchase: codes can come late or in parts (CODES MISSING).
    expect(mismatches(card, order({ orderId: 'M3', status: 'completed', codes: ['a'] }))).toEqual([]);
  });

  it('another player, pack, quantity or trxid is named field by field', () => {
    const wrong = mismatches(topUp, order({ orderId: 'O1', status: 'completed', trxid: 'SHOP-9', pid: 'PUBG-325', userId: '51234567890' }));
    expect(wrong.map((m) => m.field)).toEqual(['trxid', 'pid', 'userId']);
    expect(describeMismatches(wrong)).toBe('trxid: sent "SHOP-1001", the order has "SHOP-9"; pid: sent "PUBG-60", the order has "PUBG-325"; userId: sent "5123456789", the order has "51234567890"');
    expect(mismatches(card, order({ orderId: 'O2', status: 'completed', quantity: 2 })).map((m) => m.field)).toEqual(['quantity']);
  });

  it('a zone the player echo carries ("777888999 (2005)") is the order\'s zone: another one is another purchase', () => {
    // Simulator, seed 20261127 (twins: a foreign order made before the run under a Mobile Legends
    // row's own trxid for zone 2005, the row's 2004; real-world answers echo the player as
    // "<userId> (<zoneId>)" and name no zoneId field): the echo contained the row's player as a
    // token, the zone went uncompared, and the row completed with the other buyer's order.
    const ml = row({ pid: 'ML-86', trxid: 'SHOP-1004', userId: '777888999', zoneId: '2004' });
    expect(mismatches(ml, order({ orderId: 'M1', status: 'completed', pid: 'ML-86', userId: '777888999 (2005)' }))).toEqual([{ field: 'zoneId', sent: '2004', got: '777888999 (2005)' }]);
    expect(foreignOrderProblem(ml, order({ orderId: 'M1', status: 'completed', pid: 'ML-86', userId: '777888999(2005)' }))).toMatch(/another purchase \(zoneId/);
    // The row's own zone echoed, in any of those spellings, is the same purchase.
    for (const echo of ['777888999 (2004)', '777888999(2004)', '777888999 2004', '777888999', 'Name 777888999 (2004)']) {
      expect(mismatches(ml, order({ orderId: 'M1', status: 'completed', pid: 'ML-86', userId: echo }))).toEqual([]);
    }
  });

  it('an order that must prove it is the row\'s names the row\'s zone (a field, or the player echo), or it is not proven', () => {
    // Simulator, seed 20261127 (twins, spec-style answers): a Mobile Legends row's FIRST send was
    // answered by a replay of a foreign order made before the run under the row's trxid for zone
    // 2002 (the row's 2001); the answer named the player and the pack but no zone, so nothing
    // proved it was this purchase, and the row completed with the other buyer's order.
    const ml = row({ pid: 'ML-86', trxid: 'SHOP-1', userId: '777888999', zoneId: '2001' });
    expect(foreignOrderProblem(ml, order({ orderId: 'M1', status: 'completed', pid: 'ML-86', userId: '777888999' }))).toMatch(/does not name this row's zoneId/);
    expect(foreignOrderProblem(ml, order({ orderId: 'M1', status: 'completed', pid: 'ML-86', userId: '777888999 (2001)' }))).toBeNull();
    expect(foreignOrderProblem(ml, order({ orderId: 'M1', status: 'completed', pid: 'ML-86', userId: '777888999', zoneId: '2001' }))).toBeNull();
  });

  it('game and pack name count only when the answer has no pid; the game against the slug or the catalog\'s names', () => {
    expect(mismatches(topUp, order({ orderId: 'O1', status: 'completed', game: 'PUBG Mobile', packName: '60 uc' }), ['PUBG Mobile'])).toEqual([]);
    expect(mismatches(topUp, order({ orderId: 'O1', status: 'completed', game: 'Free Fire', packName: '100 Diamonds' })).map((m) => m.field)).toEqual(['game', 'packName']);
    expect(mismatches(topUp, order({ orderId: 'O1', status: 'completed', pid: 'PUBG-60', game: 'Free Fire' }))).toEqual([]);
  });
});

describe('where an order came from, and whether it must prove it is the row\'s', () => {
  it('createdAt is read only when it names its zone (or is an epoch number)', () => {
    expect(createdAtMs(order({ orderId: 'O', status: 'completed', createdAt: '2026-01-02T03:04:05Z' }))).toBe(Date.parse('2026-01-02T03:04:05Z'));
    expect(createdAtMs(order({ orderId: 'O', status: 'completed', createdAt: '2026-01-02 03:04:05' }))).toBeUndefined();
    expect(createdAtMs(order({ orderId: 'O', status: 'completed' }))).toBeUndefined();
  });

  it('originOf: a replay on the first send is earlier; a creation time before the first send (less the skew) is earlier', () => {
    const first = Date.parse('2026-01-02T12:00:00Z');
    const at = (iso: string): Order => order({ orderId: 'O', status: 'completed', createdAt: iso });
    expect(originOf(at('2026-01-02T12:00:00Z'), first, 'first-send-replay')).toBe('earlier');
    expect(originOf(at('2026-01-02T11:40:00Z'), first, 'resend-replay')).toBe('earlier'); // 20 min before, clocks not measured
    expect(originOf(at('2026-01-02T11:55:00Z'), first, 'fresh')).toBe('after'); // this very send's answer, within the unmeasured 10 min
    expect(originOf(at('2026-01-02T11:59:50Z'), first, 'resend-replay', 0)).toBe('earlier'); // measured: 5 s
    expect(originOf(order({ orderId: 'O', status: 'completed' }), first, 'resend-replay')).toBe('unknown');
    expect(originOf(order({ orderId: 'O', status: 'completed' }), first, 'history')).toBe('unknown');
    expect(originOf(order({ orderId: 'O', status: 'completed' }), first, 'fresh')).toBe('after');
    expect([MEASURED_SKEW_MS, UNMEASURED_SKEW_MS]).toEqual([5_000, 600_000]);
    expect(serverOffset(null)).toBeNull();
    expect(serverOffset({ server: 10_000, local: 7_000 })).toBe(3_000);
  });

  it('surelyBefore: only 15 h older than the first send reads as certainly older', () => {
    const since = Date.parse('2026-01-02T12:00:00Z');
    expect(surelyBefore(order({ orderId: 'O', status: 'completed', createdAt: new Date(since - SURELY_OLDER_MS - 1_000).toISOString() }), since)).toBe(true);
    expect(surelyBefore(order({ orderId: 'O', status: 'completed', createdAt: new Date(since - 14 * 3_600_000).toISOString() }), since)).toBe(false);
    expect(surelyBefore(order({ orderId: 'O', status: 'completed' }), since)).toBe(false);
  });

  it('mustProve: a trxid the file gave, with an order made earlier or of unknown origin; never a trxid this home derived', () => {
    expect(DERIVED_TRXID.test(DERIVED)).toBe(true);
    expect(mustProve(topUp, 'earlier')).toBe(true);
    expect(mustProve(topUp, 'unknown')).toBe(true);
    expect(mustProve(topUp, 'after')).toBe(false);
    expect(mustProve(row({ pid: 'PUBG-60', trxid: DERIVED, userId: '5123456789' }), 'earlier')).toBe(false);
  });

  it('foreignOrderProblem: a top-up naming every field, each the same, may settle; a card never; an order that leaves a field out may not', () => {
    expect(foreignOrderProblem(topUp, order({ orderId: 'O', status: 'completed', pid: 'PUBG-60', userId: '5123456789' }))).toBeNull();
    expect(foreignOrderProblem(topUp, order({ orderId: 'O', status: 'completed', pid: 'PUBG-60' }))).toMatch(/does not name this row's userId/);
    expect(unnamedFields(topUp, order({ orderId: 'O', status: 'completed' }))).toEqual(['pack', 'userId']);
    expect(foreignOrderProblem(topUp, order({ orderId: 'O', status: 'completed', pid: 'PUBG-60', userId: '999' }))).toMatch(/^it is another purchase \(userId/);
    expect(needsCodes(card)).toBe(true);
    expect(foreignOrderProblem(card, order({ orderId: 'O', status: 'completed', pid: 'KEY-PUBG-60', quantity: 3 }))).toMatch(/key\/card order names no buyer/);
  });
});

describe('factsFor: what an answer settles', () => {
  it('a completed key/card order without codes is recorded processing, its codes awaited; with codes, completed', () => {
    const waiting = factsFor(card, order({ orderId: 'O9', status: 'completed', amountUsd: 2.7 }) as Order & { orderId: string });
    expect(waiting).toEqual({ facts: { orderId: 'O9', status: 'processing', amountUsd: 2.7, codes: undefined, refunded: undefined, error: undefined }, awaitingCodes: true });
    const done = factsFor(card, order({ orderId: 'O9', status: 'completed', codes: ['A', 'B', 'C'] }) as Order & { orderId: string });
    expect(done).toMatchObject({ facts: { status: 'completed', codes: ['A', 'B', 'C'] }, awaitingCodes: false });
    const failed = factsFor(topUp, order({ orderId: 'O1', status: 'cancelled', refunded: true, error: 'OUT OF STOCK' }) as Order & { orderId: string });
    expect(failed).toMatchObject({ facts: { status: 'cancelled', refunded: true, error: 'OUT OF STOCK' }, awaitingCodes: false });
  });
});
