/**
 * Settles a `verifying` row: one that was refused (400) on a resend after an attempt whose
 * answer was lost, or one that no send answered definitely within TOPUP_REVIEW_AFTER_MS
 * (reject code NO_ANSWER_CODE). The refusal proves nothing, because the API may validate a body
 * before it looks at the trxid, so the earlier attempt may have created an order. GET /history decides:
 *  - an order carrying our trxid, or exactly one unclaimed order for the same game, pack,
 *    player and amount → the row was placed: it becomes `processing` with that order;
 *  - none, and the history read reaches back before our first attempt → nothing was placed:
 *    the refusal stands (`rejected`), or, for INSUFFICIENT BALANCE, the row waits for balance.
 *    A row that was never refused (NO_ANSWER_CODE) is settled by an order with its own trxid
 *    only; anything else leaves it `review`, since an empty history proves nothing without a refusal;
 *  - anything else (several candidates, or history too short to reach back) → `review`:
 *    the result says so and the summary lists it, rather than guess either way.
 */
import { Priority } from '../api/client.js';
import type { Order } from '../api/schemas.js';
import type { Runtime } from '../runtime.js';
import { NO_ANSWER_CODE, type Row } from '../store/rows.js';

export type VerifyOutcome = 'placed' | 'not-placed' | 'held-balance' | 'review';

const LIMIT = 200;

/**
 * Could `o` be this row's order? Game, pack and player must agree where both sides name them.
 * The amount is not compared: the price may have moved since the file was loaded, and a missed
 * match here would report a charged row as not charged.
 */
function matches(row: Row, o: Order): boolean {
  if (o.game !== undefined && row.slug !== null && o.game !== row.slug) return false;
  if (o.packName !== undefined && row.packName !== null && o.packName !== row.packName) return false;
  if (o.userId !== undefined && row.request?.userId !== undefined && o.userId !== row.request.userId) return false;
  if (o.pid !== undefined && row.productId !== null && o.pid !== row.productId) return false;
  return true;
}

/** True when this page of history certainly reaches back before `since`. */
function reachesBack(rt: Runtime, orders: readonly Order[], since: number, complete: boolean): boolean {
  if (complete) return true;
  const oldest = orders[orders.length - 1];
  if (!oldest) return true;
  if (oldest.createdAt !== undefined) {
    const t = typeof oldest.createdAt === 'number' ? oldest.createdAt : Date.parse(oldest.createdAt);
    if (!Number.isNaN(t)) return t < since - 60_000;
  }
  // Without timestamps: the oldest order is one of ours that we placed before the first attempt.
  if (oldest.orderId === undefined) return false;
  const t = rt.rows.firstSentAtOf(oldest.orderId);
  return t !== null && t < since;
}

export async function verifyRow(rt: Runtime, row: Row, signal?: AbortSignal): Promise<VerifyOutcome> {
  const now = Date.now();
  const unanswered = row.rejectCode === NO_ANSWER_CODE;
  const story = unanswered
    ? `no attempt got a definite answer: ${row.error ?? 'no answer'}`
    : `an earlier attempt got no answer and the resend was refused (${row.error ?? 'rejected'})`;
  const h = await rt.client.history({ limit: LIMIT }, { priority: Priority.poll, ...(signal ? { signal } : {}) });
  const own = h.orders.find((o) => o.trxid !== undefined && o.trxid === row.trxid);
  const echoesTrxid = h.orders.some((o) => o.trxid !== undefined);
  // A row that was never refused is settled by its own trxid only: after a day in doubt, an
  // order that merely looks like it (same player and pack) may be someone's manual top-up.
  const candidates = own
    ? [own]
    : echoesTrxid || unanswered
      ? []
      : h.orders.filter((o) => o.orderId !== undefined && !rt.rows.isOrderIdKnown(o.orderId) && matches(row, o));

  if (candidates.length === 1 && !own && rt.rows.hasTwinInDoubt(row)) {
    rt.rows.markReview(
      row.batchId,
      row.idx,
      `REVIEW: ${story}; one order in history matches, but another row for the same purchase is also in doubt, so it is unknown which of them was charged. Check the order history before ordering it again.`,
      now,
    );
    return 'review';
  }
  if (candidates.length === 1) {
    const o = candidates[0]!;
    rt.rows.recordOrder(
      row.batchId,
      row.idx,
      { orderId: o.orderId!, status: o.status, amountUsd: o.amountUsd, codes: o.codes, refunded: o.refunded, error: o.error },
      now,
      now + rt.config.pollIntervalMs,
    );
    rt.log.warn({ batch: row.batchId, line: row.line, orderId: o.orderId }, unanswered ? 'found the order of an unanswered row in history' : 'found the order of an uncertain attempt in history despite a 400 on the resend');
    return 'placed';
  }
  const complete = h.orders.length < LIMIT;
  if (unanswered) {
    // Without a refusal, an empty history proves nothing: the supplier may still create the order.
    const seen = echoesTrxid || h.orders.length === 0
      ? `order history showed no order with this trxid at ${new Date(now).toISOString()}, but an order can still appear`
      : 'order history does not show trxids, so this row\'s order cannot be told from others';
    rt.rows.markReview(
      row.batchId,
      row.idx,
      `REVIEW: ${story}; ${seen}. Check the order history for trxid ${row.trxid} (and again later) before ordering it again.`,
      now,
    );
    return 'review';
  }
  if (candidates.length === 0 && reachesBack(rt, h.orders, row.firstSentAt ?? now, complete)) {
    if (/INSUFFICIENT[_ ]BALANCE/i.test(`${row.rejectCode ?? ''} ${row.error ?? ''}`)) {
      rt.rows.clearToPending(row.batchId, row.idx, now, now);
      return 'held-balance';
    }
    rt.rows.reject(row.batchId, row.idx, `${row.error ?? 'rejected'} (order history checked: no order was placed)`, row.rejectCode, now);
    return 'not-placed';
  }
  const why =
    candidates.length > 1
      ? `${candidates.length} orders in history match this row`
      : 'order history does not reach back far enough to tell';
  rt.rows.markReview(
    row.batchId,
    row.idx,
    `REVIEW: ${story}; ${why}, so it is unknown whether this row was charged. Check the order history before ordering it again.`,
    now,
  );
  return 'review';
}
