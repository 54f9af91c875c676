/**
 * THE row state machine: every state a row can be in, every event that moves it, and every
 * (from, event, to) edge, in one frozen table. The store's guarded UPDATEs are built from this
 * table (RowStore.#sql), so the store can take no edge that is not here; the one trigger that
 * moves rows (batches_taken_over, migration 9) applies this table's taken-over edge, and a test
 * holds it to that; test/unit/state-machine.test.ts drives every edge and every refused pair, so
 * nothing here is missing from the store; docs/state-machine.md's diagram is generated from it
 * (scripts/state-machine-doc.ts) and a test fails on drift. What must never happen with money is
 * beside it, in invariants.ts.
 *
 * What each state means (a state implies its facts; they are not stored again beside it):
 *   pending     valid, not sent; or proven not to have been created (sent again later)
 *   sending     the intent is committed and the first request is on its way
 *   resending   an attempt's answer was lost: the order may exist; the SAME trxid is sent again
 *               until the API answers (its doubt clock: rows.doubt_since, doubt_tries)
 *   verifying   refused after an attempt whose answer was lost: order history decides, and its
 *               absence (with history reaching back far enough) proves "not placed"
 *   searching   never answered definitely within TOPUP_REVIEW_AFTER_MS, or refused because its
 *               trxid "was already used": only an order with its own trxid settles it
 *   processing  placed: the order is followed to its end (also while a key's codes are awaited)
 *   unseen      placed, but polls have not shown the order readably since rows.doubt_since (a
 *               404, a status word nobody knows, an unreadable answer)
 *   completed · cancelled   the order's end (cancelled: placed, then failed; refunded or not)
 *   invalid     failed validation here, or just before sending (price above maxPriceUsd): never sent
 *   rejected    refused by the API with nothing created (or resolved "not charged" by an operator)
 *   skipped     never sent: the batch was cancelled, the file duplicates an earlier one, or the
 *               row repeats one bought recently
 *   review      undecidable without a person; rechecked for TOPUP_REVIEW_RECHECK_DAYS, resolved by
 *               the recheck (its order appeared) or an operator (topup review resolve)
 * Rows are born `pending`, `invalid` or `skipped` by the loader's INSERT (not an edge).
 */

export const ROW_STATES = [
  'pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen',
  'completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review',
] as const;
export type RowState = (typeof ROW_STATES)[number];

export const FINAL_ROW_STATES: readonly RowState[] = Object.freeze(['completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review']);
/** Owed a (re)send. */
export const UNSENT_STATES: readonly RowState[] = Object.freeze(['pending', 'sending', 'resending']);
/** A request may be on its way, or its answer was lost: an order may exist that we do not know of. */
export const IN_FLIGHT_STATES: readonly RowState[] = Object.freeze(['sending', 'resending']);
/** Placed: the API has the order and it has not ended; followed by polls. */
export const PLACED_STATES: readonly RowState[] = Object.freeze(['processing', 'unseen']);
/** Followed by a history check: whether an order exists is not known yet. */
export const CHECKED_STATES: readonly RowState[] = Object.freeze(['verifying', 'searching']);
/** Followed by polls or by a history check (in this order: the rows_poll partial index's text). */
export const FOLLOWED_STATES: readonly RowState[] = Object.freeze([...PLACED_STATES, ...CHECKED_STATES]);
/** May be (re)sent now (the rows_send partial index): not `sending`, whose request is on its way. */
export const SENDABLE_STATES: readonly RowState[] = Object.freeze(['pending', 'resending']);
/** The order's end: completed, or placed then failed (refunded or not). */
export const ORDER_END_STATES: readonly RowState[] = Object.freeze(['completed', 'cancelled']);
/** Not final: the batch is not done while any row is in one of these. */
export const LIVE_STATES: readonly RowState[] = Object.freeze([...UNSENT_STATES, ...FOLLOWED_STATES]);

export const ROW_EVENTS = [
  'send', 'placed', 'refused', 'trxid-used', 'no-answer', 'busy', 'not-created', 'balance-short', 'give-up', 'taken-over',
  'verified-none', 'verified-balance', 'undecidable', 'mismatch',
  'seen', 'finished', 'codes-awaited', 'not-seen', 'lost',
  'price-rose', 'cancel', 'repeat', 'found', 'resolved-charged', 'resolved-not-charged', 'moved',
  'restored-found', 'restored-unknown', 'restored-moved', 'uncovered',
] as const;
export type RowEvent = (typeof ROW_EVENTS)[number];

export interface RowEdge {
  readonly from: RowState;
  readonly event: RowEvent;
  readonly to: RowState;
  /** Why this edge exists, for docs/state-machine.md's table. */
  readonly why: string;
}

const ORDER_ENDS = ['processing', 'completed', 'cancelled'] as const;

function edges(from: readonly RowState[], event: RowEvent, to: readonly RowState[], why: string): RowEdge[] {
  return from.flatMap((f) => to.map((t) => ({ from: f, event, to: t, why })));
}

export const ROW_EDGES: readonly RowEdge[] = Object.freeze(
  [
    // Sending. The intent is committed (synchronous=FULL) before the request leaves.
    ...edges(['pending'], 'send', ['sending'], 'intent committed, first request leaves'),
    ...edges(['resending'], 'send', ['resending'], 'the same trxid and body are sent again'),
    ...edges(['sending', 'resending', 'verifying', 'searching'], 'placed', ORDER_ENDS, 'an answer carries the row\'s order (compared with the row first)'),
    ...edges(['sending'], 'refused', ['rejected'], 'refused with nothing created'),
    ...edges(['resending'], 'refused', ['verifying'], 'refused, but an earlier answer was lost: history decides'),
    ...edges(['sending', 'resending'], 'trxid-used', ['searching'], 'refused because the trxid was already used: an order with it exists somewhere'),
    ...edges(['sending', 'resending'], 'no-answer', ['resending'], 'timeout, reset, 5xx, unreadable: the order may exist'),
    ...edges(['sending', 'resending'], 'busy', ['resending'], 'DUPLICATE_IN_FLIGHT: the API is still working on this trxid'),
    ...edges(['sending'], 'not-created', ['pending'], 'rate limit, maintenance or account pause answered before any order was made'),
    ...edges(['resending'], 'not-created', ['resending'], 'an earlier answer was lost, so the doubt stays'),
    ...edges(['sending'], 'balance-short', ['pending'], 'INSUFFICIENT BALANCE: held until a top-up'),
    ...edges(['resending'], 'give-up', ['searching'], 'no definite answer for TOPUP_REVIEW_AFTER_MS over 5+ sends'),
    ...edges(['sending'], 'taken-over', ['resending'], 'its process died with the request open: owed a resend'),
    // Several accounts: failover only on proof (dispatch/failover.ts). The row leaves its account with
    // a new trxid, and only from a state proving nothing was created there: never sent, a first
    // send refused or turned away before any order, or a history check that found none. The trigger
    // rows_account_moves (migration 11) refuses any other change of account.
    ...edges(['pending'], 'moved', ['pending'], 'its account cannot place it now (paused): another that sells the pack takes it, with a new trxid'),
    ...edges(['sending'], 'moved', ['pending'], 'its account refused a first send with nothing created (pack unknown or disabled, out of stock, no balance): another account takes it, with a new trxid'),
    ...edges(['verifying'], 'moved', ['pending'], 'as verified-none (history reaches back before the first attempt and holds no such order), for a refusal because the account cannot sell the pack: another account takes it, with a new trxid'),
    // History checks.
    ...edges(['verifying'], 'verified-none', ['rejected'], 'history reaches back before the first attempt and holds no such order'),
    ...edges(['verifying'], 'verified-balance', ['pending'], 'as verified-none, for an INSUFFICIENT BALANCE refusal: waits for a top-up'),
    ...edges(['verifying', 'searching'], 'undecidable', ['review'], 'history cannot settle it'),
    ...edges(['sending', 'resending', 'processing', 'unseen'], 'mismatch', ['review'], 'an answer names an order that is another purchase'),
    // Following a placed order.
    ...edges(['processing', 'unseen'], 'seen', ['processing'], 'the order is still processing'),
    ...edges(['processing', 'unseen'], 'finished', ['completed', 'cancelled'], 'the order ended'),
    ...edges(['processing', 'unseen'], 'codes-awaited', ['processing'], 'a key/card order completed without codes: read again (5 times)'),
    ...edges(['processing', 'unseen'], 'not-seen', ['unseen'], '404, unknown status or unreadable answer: its doubt clock runs'),
    ...edges(['unseen'], 'lost', ['review'], 'not seen readably for TOPUP_REVIEW_AFTER_MS'),
    // Before sending, and operators.
    ...edges(['pending'], 'price-rose', ['invalid'], 'the catalog price rose above maxPriceUsd'),
    ...edges(['pending'], 'cancel', ['skipped'], 'the batch was cancelled before this row was sent'),
    ...edges(['pending'], 'uncovered', ['skipped'], 'the balance does not cover it and the operator chose to run the part of the batch it covers (topup run-covered): decided in the funds judgement that funds the rest'),
    ...edges(['pending'], 'repeat', ['skipped'], 'it repeats an earlier purchase: decided in the transaction that opens its batch'),
    ...edges(['review'], 'found', ORDER_ENDS, 'the review recheck found its order'),
    ...edges(['review'], 'resolved-charged', ORDER_ENDS, 'an operator named its order'),
    ...edges(['review'], 'resolved-not-charged', ['rejected'], 'an operator says nothing was bought'),
    // The first start after a restore from an older copy (ops/restore-reconcile.ts): before anything
    // is sent, every row the copy had unsent, in flight or in doubt is looked up by its trxids at its
    // account and at every account it could have moved to.
    ...edges(['pending', 'sending', 'resending', 'verifying', 'searching'], 'restored-found', ORDER_ENDS, 'after a restore: its order was found by its trxid (the copy predates the send, or the move to another account)'),
    // A row the copy has in doubt on its own account may leave it only here, and only on proof both
    // ways: its own account's history (read back to before the copy, every order with its trxid)
    // holds nothing under its own trxid, and another account holds exactly one order under the trxid
    // a move gives it. Committed with restored-found in one transaction: never left `pending` there.
    ...edges(['resending', 'searching'], 'restored-moved', ['pending'], 'after a restore: in doubt on its own account, whose history proves nothing was bought there under its trxid; bought once on another under the trxid a move gives it: moved there (and settled, restored-found), never sent'),
    ...edges(['pending', 'sending', 'resending', 'verifying', 'searching'], 'restored-unknown', ['review'], 'after a restore: an account it could have been bought on cannot say whether it was: a person decides before it is sent'),
  ].map((e) => Object.freeze(e)),
);

/** The states an event may move a row from, to reach `to`. */
export function fromStates(event: RowEvent, to: RowState): RowState[] {
  return ROW_EDGES.filter((e) => e.event === event && e.to === to).map((e) => e.from);
}

export function isEdge(from: RowState, event: RowEvent, to: RowState): boolean {
  return ROW_EDGES.some((e) => e.from === from && e.event === event && e.to === to);
}
