/**
 * Settles a row whose outcome a refusal cannot prove:
 *  - `verifying`: refused (400, 403 …) on a resend after an attempt whose answer was lost: the API
 *    may validate a body before it looks at the trxid, so the earlier attempt may have made an order;
 *  - `searching`: refused because "the trxid was already used" (reject code TRXID_USED_CODE), so
 *    an order with this trxid exists somewhere; or never answered definitely within
 *    TOPUP_REVIEW_AFTER_MS.
 * GET /history decides:
 *  - an order carrying our trxid → placed, if it is this row's purchase (dispatch/order-match.ts);
 *    an order with our trxid for another purchase, or one made before the row's first send that
 *    does not name every field of a top-up (any key/card order) → review, both sides shown;
 *  - for a plain refusal only, when history does not echo trxids: exactly one unclaimed top-up
 *    order (not made before the row's first send) naming the same pack and player → placed,
 *    unless another row for the same purchase is in flight or in doubt (it could be that row's
 *    order) → review;
 *  - an unclaimed order that differs from the row in nothing it names but names too little to
 *    be a candidate (no pack; no player for a top-up), or any such order for a key/card row
 *    (which names no buyer) → review: it may be the row's order, or someone else's;
 *  - orders whose creation time is before the row's first send are not the row's: left out;
 *  - nothing, and the history reaches back before our first attempt → nothing was placed: the
 *    refusal stands (`rejected`), or, for INSUFFICIENT BALANCE, the row waits for balance.
 *    The two other kinds are never settled by absence (an order can still appear, or exists
 *    beyond what history shows) → review;
 *  - anything else (several candidates, history too short) → review: the result says so and the
 *    summary lists it, rather than guess either way.
 */
import { Priority } from '../api/client.js';
import { auditCopy } from '../api/audit.js';
import { isBalanceRefusal } from '../api/classify.js';
import type { Order } from '../api/schemas.js';
import { ApiError, coerceError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import { FOREIGN_ORDER_CODE, TRXID_USED_CODE, type Row } from '../store/rows.js';
import { isAccountRefusal, moveRow } from '../dispatch/failover.js';
import { createdAtMs, describeMismatches, factsFor, foreignOrderProblem, mismatches, mustProve, needsCodes, originOf, serverOffset, surelyBefore, unnamedFields } from '../dispatch/order-match.js';
import { trxidKey } from '../kernel/identity.js';

export type VerifyOutcome = 'placed' | 'not-placed' | 'held-balance' | 'review' | 'moved';

const LIMIT = 200;

/** True when this page of history certainly reaches back before `since`. */
function reachesBack(rt: Pick<Runtime, 'rows'>, orders: readonly Order[], since: number, complete: boolean, account: string): boolean {
  if (complete) return true;
  const oldest = orders[orders.length - 1];
  if (!oldest) return true;
  // A creation time that is certainly older than the first attempt (dispatch/order-match.ts surelyBefore:
  // a zone-less text is not read, and "certainly" means 15 h, whatever the clocks say) ...
  if (surelyBefore(oldest, since)) return true;
  // ... or, on our own clock: an order of ours on the page that we placed before the first attempt
  // (history is newest first, so the page reaches back at least to it).
  return orders.some((o) => {
    if (o.orderId === undefined) return false;
    const t = rt.rows.firstSentAtOf(o.orderId, account);
    return t !== null && t < since;
  });
}

function storyOf(row: Row): string {
  if (row.state === 'searching' && row.rejectCode === TRXID_USED_CODE) return `the API refused the trxid as already used (${row.error ?? 'refused'})`;
  if (row.state === 'searching') return `no attempt got a definite answer: ${row.error ?? 'no answer'}`;
  return `an earlier attempt got no answer and the resend was refused (${row.error ?? 'rejected'})`;
}

export async function verifyRow(rt: Pick<Runtime, 'accounts' | 'accountOf' | 'clock' | 'config' | 'log' | 'owner' | 'routing' | 'rows'>, row: Row, signal?: AbortSignal): Promise<VerifyOutcome> {
  const now = rt.clock.now();
  // The row's own account: its history is the only place an order of this row can be.
  const account = rt.accountOf(row.account);
  // Settled only by an order with the row's own trxid: absence proves nothing for these.
  const ownOnly = row.state === 'searching';
  const story = storyOf(row);
  const review = (why: string, answer: string | null = null, code?: string): VerifyOutcome => {
    rt.rows.toReview('undecidable', row.batchId, row.idx, { owner: rt.owner, now }, `REVIEW: ${story}; ${why}`, { answer, ...(code ? { code } : {}) });
    return 'review';
  };
  const h = await account.client.history({ limit: LIMIT }, { priority: Priority.poll, ...(signal ? { signal } : {}) });
  const trxid = row.trxid === null ? undefined : trxidKey(row.trxid);
  const own = h.orders.find((o) => o.trxid !== undefined && trxidKey(o.trxid) === trxid);
  const echoesTrxid = h.orders.some((o) => o.trxid !== undefined);

  const names = account.catalog.gameNamesOf(row);
  if (own) {
    const copy = auditCopy({ route: 'GET /history', status: 200, at: now, body: own.raw });
    const wrong = mismatches(row, own, names);
    if (wrong.length > 0) {
      return review(
        `order ${own.orderId} in history carries this trxid but is another purchase (${describeMismatches(wrong)}), so nothing may have been bought for this row. Check it before ordering this row again.`,
        copy,
        FOREIGN_ORDER_CODE,
      );
    }
    // Made before the row's first send (the trxid was used before), or not known when, under a
    // trxid the file gave: it must prove it is the row's (dispatch/order-match.ts originOf, mustProve).
    const origin = originOf(own, row.firstSentAt, 'history', serverOffset(account.lastServerDate));
    const prove = mustProve(row, origin);
    const foreign = prove ? foreignOrderProblem(row, own, names) : null;
    if (foreign !== null) {
      const when = origin === 'earlier' ? 'was made before this row was first sent' : 'does not show when it was made, and the trxid is the file\'s own (it may have been used before)';
      return review(
        `order ${own.orderId} in history carries this trxid but ${when}, and ${foreign}. Nothing may have been bought for this row. Check that order before ordering this row again.`,
        copy,
        origin === 'earlier' ? FOREIGN_ORDER_CODE : undefined,
      );
    }
    const note = prove ? `found in history by its trxid ${row.trxid} (order ${own.orderId}), which does not show when it was made; it names every field of this row's purchase, each the same. If the trxid was used before, this may be that earlier purchase: check it` : null;
    return record(rt, row, own as Order & { orderId: string }, now, copy, note);
  }
  // Unclaimed orders (no trxid to tell) that differ from the row in nothing they name, and were not
  // made before its first send. A top-up order that names every field of the purchase is a
  // candidate; the others (spec 2.3: "empty fields may be omitted"), and every order for a key or
  // card row (which names no buyer), cannot be taken as the row's, but may be its order all the
  // same, so they forbid reading the row as not placed (store/invariants.ts).
  // An order certainly made before the first attempt is not the row's and is left out; one that
  // only looks earlier (clocks) is not a candidate but still forbids "not placed" (it is unclear).
  const offset = serverOffset(account.lastServerDate);
  const firstSent = row.firstSentAt ?? now;
  const open = echoesTrxid || ownOnly
    ? []
    : h.orders.filter(
        (o) => o.orderId !== undefined && !rt.rows.isOrderIdKnown(o.orderId, row.account) && mismatches(row, o, names).length === 0 && !surelyBefore(o, firstSent),
      );
  const candidates = needsCodes(row) ? [] : open.filter((o) => unnamedFields(row, o).length === 0 && originOf(o, row.firstSentAt, 'history', offset) !== 'earlier');
  const unclear = open.length > candidates.length;

  if (candidates.length === 1 && rt.rows.hasTwinInFlight(row)) {
    return review('one order in history matches, but another row for the same purchase is in flight or in doubt, so it is unknown which of them was charged. Check the order history before ordering it again.');
  }
  if (candidates.length === 1 && unclear) {
    // Another order in history could be the row's too (it names too little to tell): taking the
    // one that names more could give the row somebody else's purchase while its own is the other
    // (found by the simulator: the panel's order of the same pack for the same player an hour
    // earlier, and the row's own order listed without its pack).
    return review("one order in history matches this row, and another could be its order too (it names too little to tell), so it is unknown which was this row's. Check the order history before ordering it again.");
  }
  if (candidates.length === 1) {
    const c = candidates[0] as Order & { orderId: string };
    // Told apart by the player and the pack alone (history shows no trxids): said, so a purchase of
    // the same pack for the same player made elsewhere around then can be caught by a person.
    const note = `found in history by its player and pack (order ${c.orderId}; history shows no trxids${createdAtMs(c) === undefined ? ' or times' : ''}): if this player bought this pack elsewhere around then, it may be that purchase`;
    return record(rt, row, c, now, auditCopy({ route: 'GET /history', status: 200, at: now, body: c.raw }), note);
  }

  const complete = h.orders.length < LIMIT;
  if (ownOnly) {
    const seen = echoesTrxid || h.orders.length === 0
      ? `order history showed no order with this trxid at ${new Date(now).toISOString()}, but an order can still appear (or be older than history shows)`
      : "order history does not show trxids, so this row's order cannot be told from others";
    return review(`${seen}. Check the order history for trxid ${row.trxid} (and again later) before ordering it again.`);
  }
  if (candidates.length === 0 && !unclear && reachesBack(rt, h.orders, row.firstSentAt ?? now, complete, row.account)) {
    // Proven not placed, refused because this account cannot sell the pack (a crash came between
    // the refusal of a first send and its move): another account takes it, with a new trxid
    // (dispatch/failover.ts), rather than the row ending rejected.
    if (rt.accounts.length > 1 && (isAccountRefusal(row.rejectCode, row.error) || isBalanceRefusal(row.rejectCode) || isBalanceRefusal(row.error))) {
      const to = await moveRow(rt, row, { owner: rt.owner, now }, { code: row.rejectCode ?? 'REFUSED', why: `${row.account} refused it: ${row.error ?? row.rejectCode ?? 'refused'} (order history checked: no order was placed)` }, 'verifying');
      if (to !== null) return 'moved';
    }
    if (isBalanceRefusal(row.rejectCode) || isBalanceRefusal(row.error)) {
      rt.rows.verifiedBalance(row.batchId, row.idx, { owner: rt.owner, now });
      return 'held-balance';
    }
    if (!rt.rows.verifiedNone(row.batchId, row.idx, { owner: rt.owner, now }, `${row.error ?? 'rejected'} (order history checked: no order was placed)`)) {
      rt.log.warn({ batch: row.batchId, line: row.line }, 'history check not applied: the row moved on or the batch is no longer ours');
      return 'review';
    }
    return 'not-placed';
  }
  const why = candidates.length > 1
    ? `${candidates.length} orders in history match this row`
    : unclear
      ? needsCodes(row)
        ? "order history holds an order of this pack that this home did not record, and a key/card order names no buyer, so it cannot be told whether it is this row's or another purchase (its codes may already be someone's)"
        : "order history holds an order that could be this row's but names too little to tell (no pack, or no player)"
      : 'order history does not reach back far enough to tell';
  return review(`${why}, so it is unknown whether this row was charged. Check the order history before ordering it again.`);
}

function record(rt: Pick<Runtime, 'config' | 'log' | 'rows'>, row: Row, o: Order & { orderId: string }, now: number, answer: string | null, note: string | null = null): VerifyOutcome {
  const { facts } = factsFor(row, o);
  rt.rows.placed(row.batchId, row.idx, facts, now, now + rt.config.pollIntervalMs, { answer, note });
  rt.log.warn(
    { batch: row.batchId, line: row.line, orderId: o.orderId },
    // Stryker disable next-line StringLiteral,ConditionalExpression,EqualityOperator: this picks only the log line's wording; the row's outcome and the logged fields are the same
    row.state === 'searching' ? 'found the order of an unanswered row in history' : 'found the order of a refused row in history',
  );
  return 'placed';
}

/**
 * History could not be read for this row. It is looked at again later; a deployment without
 * history (404/501) can never settle it, and a history that keeps failing cannot either: on the
 * row's doubt clock, past TOPUP_REVIEW_AFTER_MS, an operator decides. Account problems are the
 * caller's (they pause everything).
 */
export function verifyFailed(rt: Pick<Runtime, 'clock' | 'config' | 'log' | 'owner' | 'rows'>, row: Row, err: unknown): void {
  const now = rt.clock.now();
  const e = coerceError(err);
  const answer = auditCopy((err as { answer?: ApiError['answer'] }).answer);
  const since = rt.rows.checkLater(row.batchId, row.idx, now, now + Math.max(rt.config.pollIntervalMs, 5_000), answer);
  const noHistory = err instanceof ApiError && err.classification === 'not-found';
  if (noHistory || now - since >= rt.config.reviewAfterMs) {
    const why = noHistory ? 'this API has no order history to check' : `order history could not be read since ${new Date(since).toISOString()} (${e.message})`;
    rt.rows.toReview('undecidable', row.batchId, row.idx, { owner: rt.owner, now }, `REVIEW: ${storyOf(row)}; ${why}, so it is unknown whether this row was charged. Check with the supplier before ordering it again.`, { answer });
    // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/verify-paths.test.ts)
    rt.log.error({ batch: row.batchId, line: row.line, trxid: row.trxid, err: e.message }, 'cannot check order history: marked for review');
    return;
  }
  // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/verify-paths.test.ts)
  rt.log.warn({ batch: row.batchId, line: row.line, err: e.message }, 'cannot check order history for a row; will try again');
}
