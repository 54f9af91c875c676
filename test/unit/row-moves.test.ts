/**
 * What each move of the row store (src/store/rows.ts) writes besides the state, on a real SQLite
 * store: the columns it sets, the ones it keeps (coalesce: an answer without an amount keeps the
 * amount already known), what it returns, whom it tells, and how durably it commits.
 * state-machine.test.ts holds which moves exist; this file holds what they record. Found by
 * npm run mutate: a SET clause emptied still moved the row to the right state and went unseen.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Runtime } from '../../src/runtime.js';
import type { Row, RowState } from '../../src/store/rows.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

/** Within the lease supplierWorld gives b1 (a day from its start). */
const T = Date.now();
const MIN = 60_000;

/** Sets columns of row `idx` of b1 directly (the test's starting point, not a move). */
function prime(rt: Runtime, idx: number, cols: Record<string, unknown>): void {
  const names = Object.keys(cols);
  rt.db.prepare(`UPDATE rows SET ${names.map((n) => `${n} = @${n}`).join(', ')} WHERE batch_id = 'b1' AND idx = @idx`).run({ ...cols, idx });
}
const row = (rt: Runtime, idx = 0): Row => rt.rows.get('b1', idx)!;

async function world(n = 1): Promise<Runtime> {
  return supplierWorld(() => {}, Array.from({ length: n }, (_, i) => pubgRow(i)));
}

describe('sending outcomes', () => {
  it('placed: the order, its amount, codes and answer; doubt cleared; an answer lacking a fact keeps the one known', async () => {
    const rt = await world(2);
    prime(rt, 0, { state: 'resending', amount_usd: 1.5, last_answer: 'old', note: 'old note', error: 'timeout', doubt_since: T - MIN, doubt_tries: 3 });
    expect(rt.rows.placed('b1', 0, { orderId: 'O-1', status: 'processing', amountUsd: 0.99, codes: ['AAA', 'BBB'] }, T, T + 5_000, { answer: '{"ok":1}', note: 'replayed' })).toBe(true);
    expect(row(rt)).toMatchObject({
      state: 'processing', orderId: 'O-1', amountUsd: 0.99, codes: ['AAA', 'BBB'], refunded: null, error: null, lastAnswer: '{"ok":1}',
      note: 'replayed', doubtSince: null, doubtTries: 0, nextPollAt: T + 5_000, updatedAt: T,
    });

    // Cancelled at once: its reason is kept (or the earlier one when the answer gives none); facts missing keep theirs.
    prime(rt, 1, { state: 'sending', amount_usd: 1.5, codes_json: '["OLD"]', refunded: 1, last_answer: 'old', note: 'old note', error: 'earlier reason' });
    expect(rt.rows.placed('b1', 1, { orderId: 'O-2', status: 'cancelled' }, T, T)).toBe(true);
    expect(row(rt, 1)).toMatchObject({ state: 'cancelled', orderId: 'O-2', amountUsd: 1.5, codes: ['OLD'], refunded: true, error: 'earlier reason', lastAnswer: 'old', note: 'old note' });
    prime(rt, 1, { state: 'sending' });
    expect(rt.rows.placed('b1', 1, { orderId: 'O-2', status: 'cancelled', error: 'INVALID PLAYER', refunded: false }, T, T)).toBe(true);
    expect(row(rt, 1)).toMatchObject({ state: 'cancelled', error: 'INVALID PLAYER', refunded: false });
  });

  it('placed into a state no edge of `placed` reaches is a programming error, not a silent no-op', async () => {
    const rt = await world();
    expect(() => rt.rows.placed('b1', 0, { orderId: 'O-1', status: 'pending' as 'processing' }, T, T)).toThrow(/no edge for event placed into pending/);
  });

  it('refused from resending: verifying, looked at from verifyAt', async () => {
    const rt = await world();
    prime(rt, 0, { state: 'resending', last_answer: 'old' });
    expect(rt.rows.refused('b1', 0, { owner: rt.owner, now: T }, { error: 'NO', code: 'INVALID', verifyAt: T + 9_000, answer: null })).toBe('verifying');
    expect(row(rt)).toMatchObject({ state: 'verifying', error: 'NO', rejectCode: 'INVALID', nextPollAt: T + 9_000, lastAnswer: 'old' });
    // Not applied: undefined, not a state.
    expect(rt.rows.refused('b1', 0, { owner: rt.owner, now: T }, { error: 'NO', code: null, verifyAt: T, answer: null })).toBeUndefined();
  });

  it('no answer: the doubt clock starts at the last send (or now), counts counted sends only, clears the error', async () => {
    const rt = await world(2);
    const a = { owner: rt.owner, now: T };
    prime(rt, 0, { state: 'sending', last_sent_at: T - 5_000, error: 'held: INSUFFICIENT BALANCE', last_answer: 'old' });
    expect(rt.rows.noAnswer('b1', 0, a, { nextTryAt: T + 15_000, counted: true, answer: 'garbage' })).toMatchObject({ doubtSince: T - 5_000, doubtTries: 1, state: 'resending' });
    expect(row(rt)).toMatchObject({ state: 'resending', doubtSince: T - 5_000, doubtTries: 1, nextTryAt: T + 15_000, error: null, lastAnswer: 'garbage' });
    // DUPLICATE_IN_FLIGHT: the API is working on it; not counted, the clock keeps its start.
    expect(rt.rows.noAnswer('b1', 0, { owner: rt.owner, now: T + MIN }, { nextTryAt: T + 2 * MIN, counted: false, answer: null })).toMatchObject({ doubtSince: T - 5_000, doubtTries: 1, state: 'resending' });
    expect(row(rt)).toMatchObject({ nextTryAt: T + 2 * MIN, lastAnswer: 'garbage' });

    prime(rt, 1, { state: 'sending', last_sent_at: null });
    expect(rt.rows.noAnswer('b1', 1, a, { nextTryAt: T, counted: true, answer: null })).toMatchObject({ doubtSince: T });
  });

  it('not created: back to pending with why it waits; a row in doubt stays in doubt', async () => {
    const rt = await world(2);
    const a = { owner: rt.owner, now: T };
    prime(rt, 0, { state: 'sending', last_answer: 'old' });
    expect(rt.rows.notCreated('b1', 0, a, { nextTryAt: T + MIN, note: 'held: MAINTENANCE', answer: '{"code":"MAINTENANCE"}' })).toBe(true);
    expect(row(rt)).toMatchObject({ state: 'pending', nextTryAt: T + MIN, error: 'held: MAINTENANCE', lastAnswer: '{"code":"MAINTENANCE"}' });
    prime(rt, 1, { state: 'resending', last_answer: 'old' });
    expect(rt.rows.notCreated('b1', 1, a, { nextTryAt: T + MIN, note: null, answer: null })).toBe(true);
    expect(row(rt, 1)).toMatchObject({ state: 'resending', nextTryAt: T + MIN, error: null, lastAnswer: 'old' });
  });

  it('give up: searching from verifyAt, with why; no reject code (that is for "trxid already used")', async () => {
    const rt = await world();
    prime(rt, 0, { state: 'resending', reject_code: 'OLD' });
    expect(rt.rows.giveUp('b1', 0, { owner: rt.owner, now: T }, 'no definite answer for 10 min', T + MIN)).toBe(true);
    expect(row(rt)).toMatchObject({ state: 'searching', error: 'no definite answer for 10 min', rejectCode: null, nextPollAt: T + MIN });
  });

  it('taken over: sending rows are in doubt from their last send and due now; rows already in doubt are due now; nothing else moves', async () => {
    const rt = await world(4);
    prime(rt, 0, { state: 'sending', last_sent_at: T - 7_000, next_try_at: T + MIN });
    prime(rt, 1, { state: 'resending', doubt_since: T - MIN, next_try_at: T + MIN });
    prime(rt, 2, { state: 'pending', next_try_at: T + MIN });
    prime(rt, 3, { state: 'sending', last_sent_at: null, next_try_at: T + MIN });
    rt.rows.takenOver('b1', T);
    expect(row(rt, 0)).toMatchObject({ state: 'resending', doubtSince: T - 7_000, nextTryAt: 0 });
    expect(row(rt, 1)).toMatchObject({ state: 'resending', doubtSince: T - MIN, nextTryAt: 0 });
    expect(row(rt, 2)).toMatchObject({ state: 'pending', nextTryAt: T + MIN });
    expect(row(rt, 3)).toMatchObject({ state: 'resending', doubtSince: T, nextTryAt: 0 });
  });
});

describe('history checks and review', () => {
  it('verified none: rejected with why; verified balance: pending, due now, doubt and error cleared', async () => {
    const rt = await world(2);
    const a = { owner: rt.owner, now: T };
    prime(rt, 0, { state: 'verifying', error: 'refused' });
    expect(rt.rows.verifiedNone('b1', 0, a, 'no such order in history')).toBe(true);
    expect(row(rt)).toMatchObject({ state: 'rejected', error: 'no such order in history' });
    prime(rt, 1, { state: 'verifying', error: 'INSUFFICIENT BALANCE', doubt_since: T - MIN, doubt_tries: 4, next_try_at: T + MIN });
    expect(rt.rows.verifiedBalance('b1', 1, a)).toBe(true);
    expect(row(rt, 1)).toMatchObject({ state: 'pending', error: null, doubtSince: null, doubtTries: 0, nextTryAt: T });
  });

  it('to review: why, since when, the first recheck in 15 minutes unless told, the answer', async () => {
    const rt = await world(3);
    const a = { owner: rt.owner, now: T };
    const cases: [RowState, 'undecidable' | 'mismatch' | 'lost'][] = [['searching', 'undecidable'], ['processing', 'mismatch'], ['unseen', 'lost']];
    cases.forEach(([from, event], i) => {
      prime(rt, i, { state: from, last_answer: 'old' });
      expect(rt.rows.toReview(event, 'b1', i, a, `why ${event}`, i === 1 ? { answer: 'other order', recheckAt: T + 1 } : {})).toBe(true);
    });
    expect(row(rt, 0)).toMatchObject({ state: 'review', error: 'why undecidable', reviewSince: T, nextPollAt: T + 15 * MIN, lastAnswer: 'old' });
    expect(row(rt, 1)).toMatchObject({ state: 'review', error: 'why mismatch', reviewSince: T, nextPollAt: T + 1, lastAnswer: 'other order' });
    expect(row(rt, 2)).toMatchObject({ state: 'review', error: 'why lost', reviewSince: T });
  });

  it('settling a review row: what was decided, by whom, when; an operator without an order keeps what is known; only once', async () => {
    const rt = await world(2);
    prime(rt, 0, { state: 'review', doubt_since: T - MIN, last_answer: 'old', note: 'old note' });
    const charged = rt.rows.settleReview(
      'b1', 0,
      { state: 'completed', order: { orderId: 'O-9', status: 'completed', amountUsd: 0.95, codes: ['K-1'], refunded: false }, error: null, note: 'charged per supplier ticket' },
      { kind: 'charged', by: 'ana', at: T },
      'ticket 55',
    );
    expect(charged).toBe(true);
    expect(row(rt)).toMatchObject({
      state: 'completed', orderId: 'O-9', amountUsd: 0.95, codes: ['K-1'], refunded: false, error: null, note: 'charged per supplier ticket',
      resolution: 'charged', resolvedBy: 'ana', resolvedAt: T, lastAnswer: 'ticket 55', doubtSince: null, nextPollAt: T, updatedAt: T,
    });
    // Put back into review by hand: the resolution stands; it is not settled twice.
    prime(rt, 0, { state: 'review' });
    expect(rt.rows.settleReview('b1', 0, { state: 'rejected', error: 'x', note: null }, { kind: 'not-charged', by: 'bob', at: T + 1 }, null)).toBe(false);
    expect(row(rt)).toMatchObject({ resolvedBy: 'ana' });

    prime(rt, 1, { state: 'review', order_id: 'O-maybe', amount_usd: 0.5, last_answer: 'old', note: 'old note' });
    expect(rt.rows.settleReview('b1', 1, { state: 'rejected', error: 'not charged (operator)', note: null }, { kind: 'not-charged', by: 'bob', at: T }, null)).toBe(true);
    expect(row(rt, 1)).toMatchObject({ state: 'rejected', orderId: 'O-maybe', amountUsd: 0.5, error: 'not charged (operator)', note: 'old note', lastAnswer: 'old', resolution: 'not-charged', resolvedBy: 'bob' });
  });
});

describe('following an order', () => {
  it('seen: next look, one more poll, doubt over, the answer kept', async () => {
    const rt = await world();
    prime(rt, 0, { state: 'unseen', doubt_since: T - MIN, polls: 4, last_answer: 'old' });
    expect(rt.rows.seen('b1', 0, T, T + 30_000, '{"status":"processing"}')).toBe(true);
    expect(row(rt)).toMatchObject({ state: 'processing', nextPollAt: T + 30_000, polls: 5, doubtSince: null, lastAnswer: '{"status":"processing"}' });
    expect(rt.rows.seen('b1', 0, T, T + 60_000, null)).toBe(true);
    expect(row(rt)).toMatchObject({ polls: 6, lastAnswer: '{"status":"processing"}' });
  });

  it('finished: its facts (known ones kept), its reason only when cancelled, nothing more to poll', async () => {
    const rt = await world(2);
    prime(rt, 0, { state: 'unseen', amount_usd: 0.92, doubt_since: T - MIN, error: 'poll failed', next_poll_at: T + MIN, last_answer: 'old', note: 'n' });
    expect(rt.rows.finished('b1', 0, { orderId: 'O-1', status: 'completed', codes: ['C-1'] }, T, { answer: 'done', note: 'codes read' })).toBe(true);
    expect(row(rt)).toMatchObject({ state: 'completed', amountUsd: 0.92, codes: ['C-1'], error: null, doubtSince: null, lastAnswer: 'done', note: 'codes read', nextPollAt: 0 });

    prime(rt, 1, { state: 'processing', amount_usd: 0.92, codes_json: '["X"]', refunded: null, error: 'earlier', last_answer: 'old', note: 'n' });
    expect(rt.rows.finished('b1', 1, { orderId: 'O-2', status: 'cancelled', amountUsd: 0.9, refunded: true, error: 'Supplier failed' }, T)).toBe(true);
    expect(row(rt, 1)).toMatchObject({ state: 'cancelled', amountUsd: 0.9, codes: ['X'], refunded: true, error: 'Supplier failed', lastAnswer: 'old', note: 'n' });
  });

  it('codes awaited: counts the reads, returns the count (0 when the row did not move)', async () => {
    const rt = await world();
    prime(rt, 0, { state: 'processing', polls: 1, doubt_since: T - MIN, last_answer: 'old' });
    expect(rt.rows.codesAwaited('b1', 0, T, T + 10_000, 'no codes yet')).toBe(1);
    expect(row(rt)).toMatchObject({ state: 'processing', codeReads: 1, nextPollAt: T + 10_000, polls: 2, doubtSince: null, lastAnswer: 'no codes yet' });
    expect(rt.rows.codesAwaited('b1', 0, T, T + 20_000, null)).toBe(2);
    expect(row(rt)).toMatchObject({ lastAnswer: 'no codes yet' });
    prime(rt, 0, { state: 'completed' });
    expect(rt.rows.codesAwaited('b1', 0, T, T, null)).toBe(0);
  });

  it('not seen: returns since when (kept on the next miss), counts the poll; undefined for a process that lost the lease', async () => {
    const rt = await world();
    prime(rt, 0, { state: 'processing', polls: 2, last_answer: 'old' });
    expect(rt.rows.notSeen('b1', 0, { owner: rt.owner, now: T }, T + MIN, '404')).toBe(T);
    expect(row(rt)).toMatchObject({ state: 'unseen', nextPollAt: T + MIN, polls: 3, doubtSince: T, lastAnswer: '404' });
    expect(rt.rows.notSeen('b1', 0, { owner: rt.owner, now: T + MIN }, T + 2 * MIN, null)).toBe(T);
    expect(row(rt)).toMatchObject({ polls: 4, nextPollAt: T + 2 * MIN, lastAnswer: '404' });
    expect(rt.rows.notSeen('b1', 0, { owner: 'someone-else:1:abc', now: T }, T, null)).toBeUndefined();
  });

  it('price rose: invalid, with why', async () => {
    const rt = await world();
    expect(rt.rows.priceRose('b1', 0, T, 'price 1.20 above maxPriceUsd 1.00')).toBe(true);
    expect(row(rt)).toMatchObject({ state: 'invalid', error: 'price 1.20 above maxPriceUsd 1.00', updatedAt: T });
  });
});

describe('who is told, and how durably', () => {
  it('every moved row is told once, after the move, with its event and new state; a row that did not move is not', async () => {
    const rt = await world(3);
    const told: unknown[] = [];
    const stop = rt.rows.onMove((...m) => told.push(m));
    prime(rt, 1, { state: 'sending' });
    rt.rows.cancelPending('b1', T);
    const money = (idx: number) => ({ amountUsd: null, expectedUsd: row(rt, idx).expectedUsd, refunded: null });
    expect(told).toEqual([['b1', 0, 'cancel', 'skipped', money(0)], ['b1', 2, 'cancel', 'skipped', money(2)]]);
    expect(rt.rows.priceRose('b1', 0, T, 'x')).toBe(false);
    expect(told).toHaveLength(2);
    stop();
    rt.rows.noAnswer('b1', 1, { owner: rt.owner, now: T }, { nextTryAt: T, counted: true, answer: null });
    expect(told).toHaveLength(2);
  });

  it('each move tells what the row cost as the move left it: the metrics count spent and refunded money from it, reading no row per order', async () => {
    const rt = await world(2);
    const told: unknown[] = [];
    rt.rows.onMove((_b, idx, _event, to, money) => told.push([idx, to, money]));
    prime(rt, 0, { state: 'sending', amount_usd: 1.5 });
    expect(rt.rows.placed('b1', 0, { orderId: 'O-1', status: 'cancelled', amountUsd: 0.99, refunded: true }, T, T)).toBe(true);
    prime(rt, 1, { state: 'sending', refunded: 0 });
    expect(rt.rows.placed('b1', 1, { orderId: 'O-2', status: 'completed' }, T, T)).toBe(true);
    expect(row(rt, 0).expectedUsd).not.toBeNull();
    expect(told).toEqual([
      [0, 'cancelled', { amountUsd: 0.99, expectedUsd: row(rt, 0).expectedUsd, refunded: true }],
      [1, 'completed', { amountUsd: null, expectedUsd: row(rt, 1).expectedUsd, refunded: false }],
    ]);
  });

  it('each move tells its own event', async () => {
    const rt = await world();
    const told: string[] = [];
    rt.rows.onMove((_b, _i, event, to) => told.push(`${event}>${to}`));
    const a = { owner: rt.owner, now: T };
    const at = (state: RowState): void => prime(rt, 0, { state });
    at('pending'); rt.rows.markSending('b1', 0, a, T);
    rt.rows.refused('b1', 0, a, { error: 'x', code: null, verifyAt: T, answer: null });
    at('sending'); rt.rows.trxidUsed('b1', 0, a, { error: 'x', verifyAt: T, answer: null });
    at('sending'); rt.rows.notCreated('b1', 0, a, { nextTryAt: T, note: null, answer: null });
    at('sending'); rt.rows.balanceShort('b1', 0, a, null);
    at('resending'); rt.rows.giveUp('b1', 0, a, 'x', T);
    at('sending'); rt.rows.takenOver('b1', T);
    at('verifying'); rt.rows.verifiedNone('b1', 0, a, 'x');
    at('verifying'); rt.rows.verifiedBalance('b1', 0, a);
    at('processing'); rt.rows.seen('b1', 0, T, T, null);
    rt.rows.codesAwaited('b1', 0, T, T, null);
    rt.rows.notSeen('b1', 0, a, T, null);
    at('pending'); rt.rows.priceRose('b1', 0, T, 'x');
    at('pending'); rt.rows.cancelPending('b1', T);
    expect(told).toEqual([
      'send>sending', 'refused>rejected', 'trxid-used>searching', 'not-created>pending', 'balance-short>pending', 'give-up>searching',
      'taken-over>resending', 'verified-none>rejected', 'verified-balance>pending', 'seen>processing', 'codes-awaited>processing',
      'not-seen>unseen', 'price-rose>invalid', 'cancel>skipped',
    ]);
  });

  it('an answer with an empty list of codes keeps the codes already read', async () => {
    const rt = await world();
    prime(rt, 0, { state: 'processing', codes_json: '["K-1"]' });
    expect(rt.rows.finished('b1', 0, { orderId: 'O-1', status: 'completed', codes: [] }, T)).toBe(true);
    expect(row(rt).codes).toEqual(['K-1']);
  });

  it('the intent to send is committed fully synced; an answer is committed with synchronous=NORMAL', async () => {
    const rt = await world();
    const exec = vi.spyOn(rt.db, 'exec');
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now: Date.now() }, Date.now() + 1_000)).toBe(true);
    expect(exec.mock.calls.map((c) => c[0])).not.toContain('PRAGMA synchronous = NORMAL');
    rt.rows.placed('b1', 0, { orderId: 'O-1', status: 'processing' }, Date.now(), Date.now());
    expect(exec.mock.calls.map((c) => c[0])).toEqual(['PRAGMA synchronous = NORMAL', 'PRAGMA synchronous = FULL']);
    exec.mockRestore();
  });
});
