/**
 * Rows: the store decides from named events. A caller says what happened (`placed`, `refused`,
 * `noAnswer` …); the move is ONE guarded UPDATE whose SET of the new state and WHERE on the old
 * one are built from the edges of that event in row-states.ts, so no transition exists that the
 * table does not declare. Every method reports whether the row moved, so two actors can never
 * both move a row. (takenOver runs a second UPDATE after its move, which moves no row: it makes
 * the batch's rows already in doubt due now.)
 *
 * Outcomes of a send or a poll are written only by the holder of the batch's lease: a process
 * whose lease lapsed mid-request (a stall, a suspended VM) and was taken over must not write its
 * late answer over the new owner's. The one exception is `placed`: an order in hand proves a
 * charge, and the new owner, resending the same trxid, can only be answered with the same order.
 * The reads are in row-reads.ts; inserts and writes that move no row are in row-writes.ts.
 */
import { RowWrites } from './row-writes.js';
import { unsynced } from './db.js';
import type { OrderFacts, Resolution, RowRef } from './row-record.js';
import { ROW_EDGES, type RowEvent, type RowState } from './row-states.js';
import type { AccountIdentity } from '../kernel/identity.js';
import { batchState, rowState, rowStates } from './state-sql.js';
import { CLAIM_LOOKUP_PREFIX, ORDER_LOOKUP_PREFIX, RECONCILE_KEY } from './backup.js';

export type { NewRow, OrderFacts, Resolution, Row, StateCounts } from './row-record.js';
export { emptyCounts } from './row-record.js';
export { FINAL_ROW_STATES, LIVE_STATES, ROW_STATES, type RowState } from './row-states.js';

/** A row just sent to review is first looked at again after this (poll/review-recheck.ts takes over). */
const FIRST_RECHECK_MS = 15 * 60_000;

/** Who writes, and when: outcomes of sends and polls are applied only while `owner` holds the lease. */
export interface Actor {
  owner: string;
  now: number;
}

/** reject_code of a `searching` row that was refused because its trxid was already used (not a give-up). */
export const TRXID_USED_CODE = 'TOPUP_TRXID_ALREADY_USED';
/**
 * reject_code of a `review` row whose trxid the API answered with an order this row's sends did not
 * make (another purchase, or one made before the row's first send): looking the trxid up again can
 * only find that order, so the review recheck does not settle the row by it (dispatch/order-match.ts).
 */
export const FOREIGN_ORDER_CODE = 'TOPUP_FOREIGN_ORDER';
/** reject_code of a row skipped because its batch was cancelled before it was sent: buyable again (topup retry). */
export const CANCELLED_CODE = 'TOPUP_CANCELLED';
/** A row skipped because the balance did not cover it when the operator ran the part it covers. */
export const NOT_COVERED_CODE = 'TOPUP_NOT_COVERED';
// REPEAT_CODE (a row skipped as a repeat) is declared in row-reads.ts, which reads it too.
export { REPEAT_CODE } from './row-reads.js';
import { REPEAT_CODE } from './row-reads.js';

const LEASED = `EXISTS (SELECT 1 FROM batches b WHERE b.id = rows.batch_id AND b.owner = @owner AND b.lease_until > @now)`;
const q = (s: string): string => `'${s}'`;

export interface Doubt {
  doubtSince: number | null;
  doubtTries: number;
  state: RowState;
}

/**
 * The answers of sends and polls, written with synchronous=NORMAL (db.ts unsynced()): one fsync per
 * order, the intent's, instead of two. Measured at 400 calls/s (npm run bench -- --parts scale, docs/bench.md): the second
 * fsync cost as much main-thread time as everything else an order needs. What this changes: a
 * power cut (not a crash of the process, which loses nothing) can lose such an answer until the
 * next full sync, the next intent a few milliseconds later. The row is then found where the
 * intent left it (`sending`, or `processing` for a poll) and resent with the same trxid, or
 * polled again: the path a kill between the request and its answer's commit already takes. The
 * intent itself, operators' decisions and everything rarer stay fully synced, and a result file is
 * written only after durable() (outbox/write-results.ts), so no file reports an answer a power
 * cut could take back.
 */
// Stryker disable next-line ArrayDeclaration: an empty list commits every answer fully synced: slower, never less safe.
const UNSYNCED_EVENTS: ReadonlySet<RowEvent> = new Set<RowEvent>([
  // Stryker disable next-line StringLiteral: an event left out is committed fully synced: slower, never less safe (row-moves.test.ts checks the intent is synced and an answer is not).
  'placed', 'refused', 'trxid-used', 'no-answer', 'busy', 'not-created', 'balance-short', 'seen', 'finished', 'codes-awaited', 'not-seen',
]);

/**
 * What a moved row cost, as its UPDATE left it (RETURNING): the metrics count money spent and
 * refunded from it, without reading the row again per order.
 */
export interface MovedMoney {
  amountUsd: number | null;
  expectedUsd: number | null;
  refunded: boolean | null;
}

/** Told about every row that moved (after the commit): the runner turns these into typed events. */
export type RowMoveListener = (batchId: string, idx: number, event: RowEvent, to: RowState, money: MovedMoney) => void;

/** The columns of MovedMoney, returned by every move. */
const MONEY_RETURNING = 'amount_usd AS _amountUsd, expected_usd AS _expectedUsd, refunded AS _refunded';
type Moved = { _idx: number; _state: RowState; _amountUsd: number | null; _expectedUsd: number | null; _refunded: number | null };
const movedMoney = (m: Moved): MovedMoney => ({ amountUsd: m._amountUsd, expectedUsd: m._expectedUsd, refunded: m._refunded === null ? null : m._refunded === 1 });

/** One answer that carried the row's order (placed()'s arguments). */
export interface PlacedAnswer {
  batchId: string;
  idx: number;
  o: OrderFacts;
  now: number;
  nextPollAt: number;
  extra?: { answer?: string | null; note?: string | null };
}

/** One intent to send (markSending's arguments). */
export interface SendIntent {
  batchId: string;
  idx: number;
  a: Actor;
  busyUntil: number;
  sent?: { trxid: string; account: string } & AccountIdentity;
}

export class RowStore extends RowWrites {
  /** Listeners of row moves (the runner's events); none by default (commands, reports). */
  readonly #listeners = new Set<RowMoveListener>();

  onMove(listener: RowMoveListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  #moved(batchId: string, idx: number, event: RowEvent, m: Moved): void {
    const money = movedMoney(m);
    for (const l of this.#listeners) l(batchId, idx, event, m._state, money);
  }

  /**
   * The UPDATE of one event: `state` set by a CASE over the event's edges (into `to` only, when
   * given: `placed` may end in three states), guarded by the states those edges leave.
   */
  #sql(event: RowEvent, to: RowState | undefined, sets: string, opts: { guard?: string; returning?: string; whole?: boolean } = {}): string {
    const edges = ROW_EDGES.filter((e) => e.event === event && (to === undefined || e.to === to));
    if (edges.length === 0) throw new Error(`no edge for event ${event} into ${to}`);
    const from = [...new Set(edges.map((e) => e.from))];
    if (from.length !== edges.length) throw new Error(`event ${event} leaves one state for two: name the state it goes to`);
    const next = `CASE state ${edges.map((e) => `WHEN ${rowState(e.from)} THEN ${rowState(e.to)}`).join(' ')} END`;
    const where = opts.whole ? 'batch_id = @batchId' : 'batch_id = @batchId AND idx = @idx';
    return (
      `UPDATE rows SET state = ${next}${sets ? `, ${sets}` : ''}, updated_at = @now ` +
      `WHERE ${where} AND state IN (${rowStates(from)})${opts.guard ? ` AND ${opts.guard}` : ''}` +
      ` RETURNING idx AS _idx, state AS _state, ${MONEY_RETURNING}${opts.returning ? `, ${opts.returning}` : ''}`
    );
  }

  /** Runs one move; reports each moved row to the listeners. Returns the moved rows (RETURNING). */
  #go<T extends object = object>(event: RowEvent, sql: string, params: Record<string, unknown>): (T & Moved)[] {
    const write = (): (T & Moved)[] => this.stmt(sql).all(params) as (T & Moved)[];
    const moved = UNSYNCED_EVENTS.has(event) ? unsynced(this.db, write) : write();
    if (this.#listeners.size > 0) for (const m of moved) this.#moved(params.batchId as string, m._idx, event, m);
    return moved;
  }

  #run(event: RowEvent, sql: string, params: Record<string, unknown>): boolean {
    return this.#go(event, sql, params).length === 1;
  }

  // ───────────────────────────── sending ─────────────────────────────

  /**
   * THE INTENT (`send`): pending → sending, or a resend of a row in doubt. Committed with
   * synchronous=FULL before the request leaves, and guarded by the batch lease, so a process that
   * lost its lease can never send. Cancelled batches send no new rows, but rows in doubt are still
   * resent, because only a resend tells whether they were charged.
   */
  markSending(batchId: string, idx: number, a: Actor, busyUntil: number, sent?: { trxid: string; account: string } & AccountIdentity): boolean {
    return this.#run('send', this.#sendSql(sent !== undefined), RowStore.#sendParams({ batchId, idx, a, busyUntil, ...(sent && { sent }) }));
  }

  /**
   * Several intents in ONE synchronous=FULL commit (dispatch/intent-group.ts: the sends admitted
   * within a few milliseconds share one fsync); `synced` false: a NORMAL commit, for a caller that
   * syncs the log off the event loop and sends only after (store/wal-sync.ts). Each is markSending's guarded UPDATE, with its own
   * result; the listeners are told after the commit. Throws (nothing committed) when the
   * transaction fails: the caller then writes them one by one.
   */
  markSendingAll(intents: readonly SendIntent[], synced = true): boolean[] {
    const moved: { batchId: string; m: Moved }[] = [];
    const commit = (): boolean[] => this.db.transaction(() =>
      intents.map((i) => {
        const rows = this.stmt(this.#sendSql(i.sent !== undefined)).all(RowStore.#sendParams(i)) as Moved[];
        for (const m of rows) moved.push({ batchId: i.batchId, m });
        return rows.length === 1;
      }),
    ).immediate();
    // Unsynced only for a caller that makes the log durable itself before any request leaves
    // (dispatch/intent-group.ts with store/wal-sync.ts): the intent is never sent on less.
    const results = synced ? commit() : unsynced(this.db, commit);
    if (this.#listeners.size > 0) for (const { batchId, m } of moved) this.#moved(batchId, m._idx, 'send', m);
    return results;
  }

  static #sendParams(i: SendIntent): Record<string, unknown> {
    return { batchId: i.batchId, idx: i.idx, owner: i.a.owner, now: i.a.now, busyUntil: i.busyUntil, ...(i.sent ?? {}) };
  }

  #sendSql(sent: boolean): string {
    // `sent`: the trxid and account of the request about to leave, as the sender read the row. A
    // row moved to another account meanwhile (failover) has another trxid there: its intent is
    // refused, so a request built for the account it left never leaves.
    // And where it goes (issue 29): the account's origin and key fingerprint are recorded with the
    // send, and a row sent before to another identity is not sent unless it is `pending` (proven
    // nothing created: a first send, or back after one): only that account can tell whether the
    // earlier send charged it (store/account-identity.ts; the start says so and how to resolve it).
    const identity = sent ? `, sent_origin = @origin, sent_key_fp = @keyFp` : '';
    const sameIdentity = sent ? ` AND (state = ${rowState('pending')} OR sent_origin IS NULL OR (sent_origin = @origin AND sent_key_fp = @keyFp))` : '';
    return this.#sql('send', undefined, `attempts = attempts + 1, first_sent_at = coalesce(first_sent_at, @now), last_sent_at = @now, next_try_at = @busyUntil${identity}`, {
      // And never while the store is a copy not yet reconciled (store/backup.ts RECONCILE_KEY): the
      // marker is set by a restore and by a start on a store older than its mark; nor for a batch
      // claimed in the window after a restore and not yet looked up (store/backup.ts
      // markClaimInRestoreWindow), nor for an API order accepted in that window and not yet looked up
      // (markOrderInRestoreWindow; the CAST because better-sqlite3 binds a JS number as REAL, and
      // 'x' || 0.0 is 'x0.0', a key no mark has). In the intent's own statement, so no process (a runner mid-step,
      // another process) sends a row before its trxids have been looked up at every account.
      guard: `EXISTS (SELECT 1 FROM batches b WHERE b.id = @batchId AND b.owner = @owner AND b.lease_until > @now
         AND (b.cancel_requested = 0 OR rows.state = ${rowState('resending')}))${sent ? ' AND trxid = @trxid AND account = @account' : ''}${sameIdentity}
         AND NOT EXISTS (SELECT 1 FROM meta WHERE key IN (${q(RECONCILE_KEY)}, ${q(CLAIM_LOOKUP_PREFIX)} || @batchId, ${q(ORDER_LOOKUP_PREFIX)} || @batchId || ':' || CAST(@idx AS INTEGER)))`,
    });
  }

  /** An answer carried the row's order (already compared with the row): processing, or already ended. */
  placed(batchId: string, idx: number, o: OrderFacts, now: number, nextPollAt: number, extra: { answer?: string | null; note?: string | null } = {}): boolean {
    return this.#run('placed', RowStore.#placedSql(this, o), RowStore.#placedParams({ batchId, idx, o, now, nextPollAt, extra }));
  }

  /**
   * Several `placed` answers in ONE unsynced commit (dispatch/answer-group.ts: the answers that
   * came in one turn of the event loop share their pages and their commit instead of one commit
   * each). Each is placed()'s guarded UPDATE in a savepoint of its own: one that fails (the
   * unique order id another row holds) is undone alone and returned as its error, the others
   * commit. The listeners are told after the commit. Throws (nothing committed) when the
   * transaction fails.
   */
  placedAll(answers: readonly PlacedAnswer[]): (boolean | { err: unknown })[] {
    const moved: { batchId: string; m: Moved }[] = [];
    const results = unsynced(this.db, () => this.db.transaction(() =>
      answers.map((a): boolean | { err: unknown } => {
        try {
          const rows = this.db.transaction(() => this.stmt(RowStore.#placedSql(this, a.o)).all(RowStore.#placedParams(a)) as Moved[])();
          for (const m of rows) moved.push({ batchId: a.batchId, m });
          return rows.length === 1;
        } catch (err) {
          return { err };
        }
      }),
    ).immediate());
    if (this.#listeners.size > 0) for (const { batchId, m } of moved) this.#moved(batchId, m._idx, 'placed', m);
    return results;
  }

  static #placedSql(s: RowStore, o: OrderFacts): string {
    return s.#sql(
      'placed',
      o.status,
      `order_id = @orderId, amount_usd = coalesce(@amountUsd, amount_usd), codes_json = coalesce(@codes, codes_json),
       refunded = coalesce(@refunded, refunded), error = CASE WHEN @status = ${rowState('cancelled')} THEN coalesce(@error, error) ELSE NULL END,
       last_answer = coalesce(@answer, last_answer), note = coalesce(@note, note), doubt_since = NULL, doubt_tries = 0, next_poll_at = @nextPollAt`,
    );
  }

  static #placedParams(a: PlacedAnswer): Record<string, unknown> {
    return { batchId: a.batchId, idx: a.idx, now: a.now, nextPollAt: a.nextPollAt, ...orderParams(a.o), answer: a.extra?.answer ?? null, note: a.extra?.note ?? null };
  }

  /**
   * Refused with a definite answer. From `sending`: nothing was created → rejected. From
   * `resending`: an earlier answer was lost, so the refusal proves nothing → verifying, looked at
   * from `verifyAt` (once the earlier attempt can no longer be in flight).
   */
  refused(batchId: string, idx: number, a: Actor, r: { error: string; code: string | null; verifyAt: number; answer: string | null }): RowState | undefined {
    const [row] = this.#go(
      'refused',
      this.#sql('refused', undefined, `error = @error, reject_code = @code, next_poll_at = @verifyAt, last_answer = coalesce(@answer, last_answer)`, { guard: LEASED }),
      { batchId, idx, owner: a.owner, now: a.now, ...r },
    );
    return row?._state;
  }

  /** Refused because the trxid "was already used": an order with it exists somewhere → searching. */
  trxidUsed(batchId: string, idx: number, a: Actor, r: { error: string; verifyAt: number; answer: string | null }): boolean {
    return this.#run('trxid-used', this.#sql('trxid-used', 'searching', `error = @error, reject_code = ${q(TRXID_USED_CODE)}, next_poll_at = @verifyAt, last_answer = coalesce(@answer, last_answer)`, {
        guard: LEASED,
      }),
      { batchId, idx, owner: a.owner, now: a.now, ...r },
    );
  }

  /**
   * No definite answer (timeout, reset, 5xx, unreadable): the order may exist → resending at
   * `nextTryAt`. `counted`: this send counts towards TOPUP_REVIEW_AFTER_MS (false for
   * DUPLICATE_IN_FLIGHT, where the API is still working on it: event `busy`). Returns the doubt.
   */
  noAnswer(batchId: string, idx: number, a: Actor, r: { nextTryAt: number; counted: boolean; answer: string | null }): Doubt | undefined {
    const event: RowEvent = r.counted ? 'no-answer' : 'busy';
    const [row] = this.#go<Doubt>(
      event,
      this.#sql(
        event,
        'resending',
        `doubt_since = coalesce(doubt_since, min(coalesce(last_sent_at, @now), @now)), doubt_tries = doubt_tries + @counted, next_try_at = @nextTryAt,
         error = NULL, last_answer = coalesce(@answer, last_answer)`,
        { guard: LEASED, returning: 'doubt_since AS doubtSince, doubt_tries AS doubtTries, state' },
      ),
      { batchId, idx, owner: a.owner, now: a.now, nextTryAt: r.nextTryAt, counted: r.counted ? 1 : 0, answer: r.answer },
    );
    return row;
  }

  /**
   * Turned away before any order was made (rate limit, maintenance, account pause): a first send
   * goes back to pending; a row already in doubt stays resending. `note` says why it waits.
   */
  notCreated(batchId: string, idx: number, a: Actor, r: { nextTryAt: number; note: string | null; answer: string | null }): boolean {
    return this.#run('not-created', this.#sql('not-created', undefined, `next_try_at = @nextTryAt, error = @note, last_answer = coalesce(@answer, last_answer)`, { guard: LEASED }),
      { batchId, idx, owner: a.owner, now: a.now, ...r },
    );
  }

  /** INSUFFICIENT BALANCE on a first send: back to pending, held until the balance covers it. */
  balanceShort(batchId: string, idx: number, a: Actor, answer: string | null): boolean {
    return this.#run('balance-short', this.#sql('balance-short', 'pending', `next_try_at = @now, error = 'held: INSUFFICIENT BALANCE', last_answer = coalesce(@answer, last_answer)`, { guard: LEASED }),
      { batchId, idx, owner: a.owner, now: a.now, answer },
    );
  }

  /** In doubt past TOPUP_REVIEW_AFTER_MS over enough sends: no more resends; history decides from `verifyAt`. */
  giveUp(batchId: string, idx: number, a: Actor, why: string, verifyAt: number): boolean {
    return this.#run('give-up', this.#sql('give-up', 'searching', `error = @why, reject_code = NULL, next_poll_at = @verifyAt`, { guard: LEASED }), {
      batchId, idx, owner: a.owner, now: a.now, why, verifyAt,
    });
  }

  /**
   * A batch taken from a process that died: its requests died with it, so its `sending` rows are
   * in doubt and owed a resend now, and its rows already in doubt are due now, not at its timeout.
   */
  takenOver(batchId: string, now: number): void {
    this.#go('taken-over', this.#sql('taken-over', 'resending', `doubt_since = coalesce(doubt_since, min(coalesce(last_sent_at, @now), @now)), next_try_at = 0`, { whole: true }), { batchId, now });
    this.stmt(`UPDATE rows SET next_try_at = 0 WHERE batch_id = ? AND state = ${rowState('resending')}`).run(batchId);
  }

  /**
   * One `sending` row that no send of its lease holder is working on any more (the send ended
   * without moving it: a bug, or a failure nothing else caught): owed a resend now, as if taken over.
   * Lease-guarded: only the holder knows which of its rows have a send running.
   */
  strandedSending(batchId: string, idx: number, a: Actor): boolean {
    return this.#run('taken-over', this.#sql('taken-over', 'resending', `doubt_since = coalesce(doubt_since, min(coalesce(last_sent_at, @now), @now)), next_try_at = @now`, { guard: LEASED }), {
      batchId, idx, owner: a.owner, now: a.now,
    });
  }

  /**
   * Failover (event `moved`, dispatch/failover.ts): the row leaves account `from`, where it is
   * proven that nothing was created, for `to`, with a new trxid and that account's pid and price;
   * `moves` (JSON) records the refusal. Guarded by the lease, the account and the trxid it had, and
   * held by the trigger rows_account_moves whatever the caller.
   */
  move(batchId: string, idx: number, a: Actor, m: { fromState: 'pending' | 'sending' | 'verifying'; from: string; fromTrxid: string; to: string; trxid: string; request: string; productId: string; unitPriceUsd: number; expectedUsd: number; moves: string; note: string }): boolean {
    // fromState: the sender answering a first send moves from `sending` (its own request, answered);
    // a row waiting on a paused account moves from `pending` only, never one another send just took.
    return this.#run(
      'moved',
      this.#sql(
        'moved',
        'pending',
        `account = @to, trxid = @trxid, request_json = @request, product_id = @productId, unit_price_usd = @unitPriceUsd, expected_usd = @expectedUsd,
         moves_json = @moves, note = @note, error = NULL, reject_code = NULL, first_sent_at = NULL, doubt_since = NULL, doubt_tries = 0, next_try_at = @now`,
        { guard: `${LEASED} AND state = @fromState AND account = @from AND trxid = @fromTrxid AND order_id IS NULL` },
      ),
      { batchId, idx, owner: a.owner, now: a.now, ...m },
    );
  }

  // ───────────────────────────── after a restore ─────────────────────────────

  /**
   * The first start after a restore (ops/restore-reconcile.ts): a row the copy has in doubt on its
   * own account (`resending`, `searching`; a copy caught `sending` is `resending` once its batch is
   * taken over) whose own account's history proves it was not bought there under its trxid, found
   * bought once on `to` under the trxid a move gives it. As move(), for that one case: the caller
   * settles it from that order in the same transaction. Never the sender's: a row in doubt does not
   * leave its account on a refusal.
   */
  restoredMove(batchId: string, idx: number, a: Actor, m: { fromState: 'resending' | 'searching'; from: string; fromTrxid: string; to: string; trxid: string; request: string; productId: string; unitPriceUsd: number; expectedUsd: number; moves: string; note: string }): boolean {
    return this.#run(
      'restored-moved',
      this.#sql(
        'restored-moved',
        'pending',
        `account = @to, trxid = @trxid, request_json = @request, product_id = @productId, unit_price_usd = @unitPriceUsd, expected_usd = @expectedUsd,
         moves_json = @moves, note = @note, error = NULL, reject_code = NULL, first_sent_at = NULL, doubt_since = NULL, doubt_tries = 0, next_try_at = @now`,
        { guard: `${LEASED} AND state = @fromState AND account = @from AND trxid = @fromTrxid AND order_id IS NULL` },
      ),
      { batchId, idx, owner: a.owner, now: a.now, ...m },
    );
  }

  /**
   * The first start after a restore (ops/restore-reconcile.ts): a lookup by trxid found the row's
   * order, made after the copy was taken. Lease-guarded: the reconciling process holds the batch.
   */
  restoredFound(batchId: string, idx: number, a: Actor, o: OrderFacts, nextPollAt: number, note: string, answer: string | null): boolean {
    return this.#run(
      'restored-found',
      this.#sql(
        'restored-found',
        o.status,
        `order_id = @orderId, amount_usd = coalesce(@amountUsd, amount_usd), codes_json = coalesce(@codes, codes_json),
         refunded = coalesce(@refunded, refunded), error = CASE WHEN @status = ${rowState('cancelled')} THEN coalesce(@error, error) ELSE NULL END,
         last_answer = coalesce(@answer, last_answer), note = @note, doubt_since = NULL, doubt_tries = 0, next_poll_at = @nextPollAt,
         first_sent_at = coalesce(first_sent_at, @now)`,
        { guard: LEASED },
      ),
      { batchId, idx, owner: a.owner, now: a.now, nextPollAt, ...orderParams(o), answer, note },
    );
  }

  /** After a restore, whether the row was bought somewhere cannot be told: review, never a blind send. */
  restoredUnknown(batchId: string, idx: number, a: Actor, error: string): boolean {
    return this.#run(
      'restored-unknown',
      this.#sql('restored-unknown', 'review', `error = @error, review_since = @now, next_poll_at = @recheckAt`, { guard: LEASED }),
      { batchId, idx, owner: a.owner, now: a.now, error, recheckAt: a.now + FIRST_RECHECK_MS },
    );
  }

  /**
   * After a restore, the row's own account cannot say whether its own trxid was bought there after
   * the copy (a history that shows no trxids, one that does not reach back, one that cannot be
   * read): it is sent as the copy has it, where a purchase is met as a replay, and it must never
   * leave that account. A failover reads "nothing created" from the refusal of this send
   * (MAINTENANCE, no stock, no balance), not from the purchase made before the restore, and would
   * buy it again elsewhere (the simulator's `restore`, seed 3 #44). Held by the store: the trigger
   * rows_account_moves refuses every move of a pinned row (a rename still carries it). Lease-guarded,
   * and only from a state looked up after a restore, never a placed or ended row.
   */
  holdOnOwnAccount(batchId: string, idx: number, a: Actor, note: string): boolean {
    return this.stmt(
      `UPDATE rows SET pinned = 1, note = CASE WHEN note IS NULL OR note = '' THEN @note ELSE note || '; ' || @note END, updated_at = @now
       WHERE batch_id = @batchId AND idx = @idx AND state IN (${rowStates(['pending', 'sending', 'resending', 'verifying', 'searching'])}) AND ${LEASED}`,
    ).run({ batchId, idx, owner: a.owner, now: a.now, note }).changes === 1;
  }

  // ───────────────────────────── history checks ─────────────────────────────

  /**
   * History shows no such order and reaches back far enough: the refusal stands (nothing charged).
   * Lease-guarded like every "not charged" and "unknown": a process that lost the batch must not
   * write it over the new owner's outcome.
   */
  verifiedNone(batchId: string, idx: number, a: Actor, error: string): boolean {
    return this.#run('verified-none', this.#sql('verified-none', 'rejected', `error = @error`, { guard: LEASED }), { batchId, idx, owner: a.owner, now: a.now, error });
  }

  /** As verifiedNone, for a refusal for balance: back to pending, waiting for a top-up. */
  verifiedBalance(batchId: string, idx: number, a: Actor): boolean {
    return this.#run(
      'verified-balance',
      this.#sql('verified-balance', 'pending', `doubt_since = NULL, doubt_tries = 0, next_try_at = @now, error = NULL`, { guard: LEASED }),
      { batchId, idx, owner: a.owner, now: a.now },
    );
  }

  /**
   * A history check cannot settle it, an answer names another purchase, or an order was not seen
   * for too long: an operator decides. Only by the lease holder (an Actor).
   */
  toReview(
    event: 'undecidable' | 'mismatch' | 'lost',
    batchId: string,
    idx: number,
    a: Actor,
    error: string,
    extra: { answer?: string | null; recheckAt?: number; code?: string } = {},
  ): boolean {
    return this.#run(
      event,
      this.#sql(event, 'review', `error = @error, reject_code = coalesce(@code, reject_code), review_since = @now, next_poll_at = @recheckAt, last_answer = coalesce(@answer, last_answer)`, {
        guard: LEASED,
      }),
      { batchId, idx, owner: a.owner, now: a.now, error, answer: extra.answer ?? null, recheckAt: extra.recheckAt ?? a.now + FIRST_RECHECK_MS, code: extra.code ?? null },
    );
  }

  // ───────────────────────────── following an order ─────────────────────────────

  /** The order is still processing: looked at again at `at`; whatever doubted it is over. */
  seen(batchId: string, idx: number, now: number, at: number, answer: string | null): boolean {
    return this.#run('seen', this.#sql('seen', 'processing', `next_poll_at = @at, polls = polls + 1, doubt_since = NULL, last_answer = coalesce(@answer, last_answer)`), {
      batchId, idx, now, at, answer,
    });
  }

  /** The order ended (completed or cancelled). */
  finished(batchId: string, idx: number, o: OrderFacts & { status: 'completed' | 'cancelled' }, now: number, extra: { answer?: string | null; note?: string | null } = {}): boolean {
    return this.#run(
      'finished',
      this.#sql(
        'finished',
        o.status,
        `amount_usd = coalesce(@amountUsd, amount_usd), codes_json = coalesce(@codes, codes_json), refunded = coalesce(@refunded, refunded),
         error = CASE WHEN @status = ${rowState('cancelled')} THEN coalesce(@error, error) ELSE NULL END, doubt_since = NULL,
         last_answer = coalesce(@answer, last_answer), note = coalesce(@note, note), next_poll_at = 0`,
      ),
      { batchId, idx, now, ...orderParams(o), answer: extra.answer ?? null, note: extra.note ?? null },
    );
  }

  /** A key/card order completed without codes: read again at `at`. Returns how many times it has been. */
  codesAwaited(batchId: string, idx: number, now: number, at: number, answer: string | null): number {
    const [r] = this.#go<{ n: number }>(
      'codes-awaited',
      this.#sql('codes-awaited', 'processing', `code_reads = code_reads + 1, next_poll_at = @at, polls = polls + 1, doubt_since = NULL, last_answer = coalesce(@answer, last_answer)`, {
        returning: 'code_reads AS n',
      }),
      { batchId, idx, now, at, answer },
    );
    return r?.n ?? 0;
  }

  /**
   * A poll did not show the order readably: looked at again at `at`; returns since when (its doubt
   * clock), or undefined when not applied (the row moved on, or the batch is no longer ours).
   */
  notSeen(batchId: string, idx: number, a: Actor, at: number, answer: string | null): number | undefined {
    const [r] = this.#go<{ since: number }>(
      'not-seen',
      this.#sql('not-seen', 'unseen', `next_poll_at = @at, polls = polls + 1, doubt_since = coalesce(doubt_since, @now), last_answer = coalesce(@answer, last_answer)`, {
        guard: LEASED,
        returning: 'doubt_since AS since',
      }),
      { batchId, idx, owner: a.owner, now: a.now, at, answer },
    );
    return r?.since;
  }

  // ───────────────────────────── before sending, operators ─────────────────────────────

  /** A row that failed a check just before sending (the price rose above maxPriceUsd). */
  priceRose(batchId: string, idx: number, now: number, error: string): boolean {
    return this.#run('price-rose', this.#sql('price-rose', 'invalid', `error = @error`), { batchId, idx, now, error });
  }

  /**
   * Invariant (invariants.ts): a row of a batch being opened that repeats an earlier purchase is
   * skipped IN the transaction that opens the batch (claim/load.ts opens it; claim/repeats.ts
   * decides which rows, from repeatCandidates), so two processes opening edited copies of one file
   * at once cannot both buy: SQLite runs the two openings one after the other, and the second sees
   * the first's rows. Only while the batch is `claimed` (nothing of it can have been sent), only a
   * row marked repeat_check; its derived trxid is given up with its request (a skipped row sends nothing).
   */
  skipAsRepeat(batchId: string, idx: number, now: number, error: string, of: RowRef): boolean {
    return this.#run(
      'repeat',
      this.#sql('repeat', 'skipped', `reject_code = ${q(REPEAT_CODE)}, request_json = NULL, trxid = NULL, error = @error, repeat_of = @repeatOf`, {
        guard: `repeat_check = 1 AND EXISTS (SELECT 1 FROM batches b WHERE b.id = @batchId AND b.state = ${batchState('claimed')})`,
      }),
      { batchId, idx, now, error, repeatOf: JSON.stringify({ batchId: of.batchId, idx: of.idx }) },
    );
  }

  /** The batch was cancelled: every row not yet sent is skipped. */
  cancelPending(batchId: string, now: number): number {
    // Nothing was bought for such a row: it can be bought again (topup retry, or the file dropped
    // again), so it says why it was skipped (CANCELLED_CODE) and, if it was never sent, gives up
    // its trxid (a re-drop of the same bytes derives the same one). An API order keeps it: the
    // shop knows its order by that trxid and is answered `cancelled` under it (adv9: the order read
    // 404 after `topup cancel`, as if it had never been accepted).
    return this.#go(
      'cancel',
      this.#sql('cancel', 'skipped', `error = 'batch cancelled by the operator before this row was sent', reject_code = ${q(CANCELLED_CODE)},
        trxid = CASE WHEN first_sent_at IS NULL AND api_body_hash IS NULL THEN NULL ELSE trxid END`, { whole: true }),
      { batchId, now },
    ).length;
  }

  /**
   * The balance does not cover this unsent row and the operator chose to run the part of its batch
   * the balance covers (account/funds.ts, in the judgement's transaction). Like a cancel's skip:
   * nothing was bought for it, a retry buys it later, and a row never sent gives up its trxid.
   */
  skipUncovered(batchId: string, idx: number, now: number, error: string): boolean {
    return this.#run(
      'uncovered',
      this.#sql('uncovered', 'skipped', `error = @error, reject_code = ${q(NOT_COVERED_CODE)},
        trxid = CASE WHEN first_sent_at IS NULL THEN NULL ELSE trxid END`, {
        guard: `EXISTS (SELECT 1 FROM batches b WHERE b.id = @batchId AND b.run_covered = 1 AND b.api_day IS NULL)`,
      }),
      { batchId, idx, now, error },
    );
  }

  /**
   * A review row settled: its order was found (`found`, by the recheck) or an operator decided
   * (`charged` with an order, `not-charged`). Only from `review`, and only once.
   */
  settleReview(
    batchId: string,
    idx: number,
    to: { state: 'processing' | 'completed' | 'cancelled' | 'rejected'; order?: OrderFacts; error: string | null; note: string | null },
    resolution: { kind: Resolution; by: string; at: number },
    answer: string | null,
  ): boolean {
    const event: RowEvent = resolution.kind === 'found' ? 'found' : resolution.kind === 'charged' ? 'resolved-charged' : 'resolved-not-charged';
    const o = to.order;
    return this.#run(
      event,
      this.#sql(
        event,
        to.state,
        `order_id = coalesce(@orderId, order_id), amount_usd = coalesce(@amountUsd, amount_usd), codes_json = coalesce(@codes, codes_json),
         refunded = coalesce(@refunded, refunded), error = @error, note = coalesce(@note, note), resolution = @kind, resolved_by = @by,
         resolved_at = @now, last_answer = coalesce(@answer, last_answer), doubt_since = NULL, next_poll_at = @now`,
        { guard: 'resolution IS NULL' },
      ),
      {
        batchId, idx, now: resolution.at, kind: resolution.kind, by: resolution.by, error: to.error, note: to.note, answer,
        ...(o ? orderParams(o) : { orderId: null, amountUsd: null, codes: null, refunded: null }),
      },
    );
  }
}

function orderParams(o: OrderFacts): Record<string, unknown> {
  return {
    status: o.status,
    orderId: o.orderId,
    amountUsd: o.amountUsd ?? null,
    codes: o.codes && o.codes.length > 0 ? JSON.stringify(o.codes) : null,
    refunded: o.refunded === undefined ? null : o.refunded ? 1 : 0,
    error: o.error ?? null,
  };
}
