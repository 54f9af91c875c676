/**
 * Group commit of the answers that carried an order (src/dispatch/answer-group.ts, issue 34): the
 * answers of one turn share one commit, each with its own result, one refused by the store is that
 * answer's error alone, and none is answered (nor told to the listeners) before it is committed.
 * A real SQLite store (test/unit/fake-supplier.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import { AnswerGroup } from '../../src/dispatch/answer-group.js';
import { systemClock } from '../../src/kernel/clock.js';
import type { Runtime } from '../../src/runtime.js';
import type { PlacedAnswer, SendIntent } from '../../src/store/rows.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

const world = (n: number): Promise<Runtime> => supplierWorld(() => {}, Array.from({ length: n }, (_, i) => pubgRow(i)));

/** The rows `sending`, as their intents leave them before the request. */
function sending(rt: Runtime, idxs: number[]): void {
  const now = Date.now();
  const intents: SendIntent[] = idxs.map((idx) => ({ batchId: 'b1', idx, a: { owner: rt.owner, now }, busyUntil: now + 15_000, sent: { trxid: `tu-row-${idx}`, account: 'default', ...rt.identityOf('default') } }));
  expect(rt.rows.markSendingAll(intents)).toEqual(idxs.map(() => true));
}

const answer = (idx: number, orderId: string): PlacedAnswer => {
  const now = Date.now();
  return { batchId: 'b1', idx, o: { status: 'processing', orderId, amountUsd: 1 }, now, nextPollAt: now + 5_000, extra: { answer: null, note: null } };
};

describe('answers committed in groups', () => {
  it('answers of one turn share one commit; each gets its own result; listeners are told after it', async () => {
    const rt = await world(3);
    sending(rt, [0, 1, 2]);
    const group = new AnswerGroup(rt.rows, systemClock);
    const all = vi.spyOn(rt.rows, 'placedAll');
    const one = vi.spyOn(rt.rows, 'placed');
    const told: string[] = [];
    rt.rows.onMove((_b, idx, event, to) => told.push(`${idx}:${event}>${to}`));
    const results = await Promise.all([group.placed(answer(0, 'O-0')), group.placed(answer(1, 'O-1')), group.placed(answer(2, 'O-2'))]);
    expect(results).toEqual([true, true, true]);
    expect(all).toHaveBeenCalledTimes(1);
    expect(one).not.toHaveBeenCalled();
    expect(told).toEqual(['0:placed>processing', '1:placed>processing', '2:placed>processing']);
    expect([0, 1, 2].map((i) => rt.rows.get('b1', i)!.orderId)).toEqual(['O-0', 'O-1', 'O-2']);
  });

  it('nothing is stored (nor answered) before the next turn: a kill before it leaves the rows `sending`', async () => {
    const rt = await world(2);
    sending(rt, [0, 1]);
    const group = new AnswerGroup(rt.rows, systemClock);
    let done = false;
    const both = Promise.all([group.placed(answer(0, 'O-0')), group.placed(answer(1, 'O-1'))]).then(() => (done = true));
    expect(done).toBe(false);
    expect([0, 1].map((i) => rt.rows.get('b1', i)!.state)).toEqual(['sending', 'sending']);
    await both;
    expect([0, 1].map((i) => rt.rows.get('b1', i)!.state)).toEqual(['processing', 'processing']);
  });

  it('an answer the store refuses (an order id another row holds) is that answer\'s error alone: the others of its group commit', async () => {
    const rt = await world(3);
    sending(rt, [0, 1, 2]);
    const group = new AnswerGroup(rt.rows, systemClock);
    expect(await group.placed(answer(0, 'O-same'))).toBe(true);
    const settled = await Promise.allSettled([group.placed(answer(1, 'O-same')), group.placed(answer(2, 'O-2'))]);
    expect(settled[0]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_CONSTRAINT_UNIQUE' } });
    expect(settled[1]).toMatchObject({ status: 'fulfilled', value: true });
    expect([0, 1, 2].map((i) => rt.rows.get('b1', i)!.state)).toEqual(['processing', 'sending', 'processing']);
    expect(rt.rows.get('b1', 1)!.orderId).toBeNull();
  });

  it('a commit of the group that fails is retried answer by answer: each gets its own result or error', async () => {
    const rt = await world(2);
    sending(rt, [0, 1]);
    const group = new AnswerGroup(rt.rows, systemClock);
    vi.spyOn(rt.rows, 'placedAll').mockImplementation(() => {
      throw new Error('SQLITE_BUSY');
    });
    const one = vi.spyOn(rt.rows, 'placed');
    one.mockImplementationOnce(() => {
      throw new Error('SQLITE_FULL: database or disk is full');
    });
    const settled = await Promise.allSettled([group.placed(answer(0, 'O-0')), group.placed(answer(1, 'O-1'))]);
    expect(settled[0]).toMatchObject({ status: 'rejected', reason: { message: 'SQLITE_FULL: database or disk is full' } });
    expect(settled[1]).toMatchObject({ status: 'fulfilled', value: true });
    expect(rt.rows.get('b1', 1)!.state).toBe('processing');
  });
});
