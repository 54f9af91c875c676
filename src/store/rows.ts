/**
 * Rows and their state machine (see migrations.ts). Each transition is one guarded UPDATE:
 * it names the states it may leave, and reports whether it happened, so two actors can never
 * both move a row.
 */
import { statementCache, type Db } from './db.js';
import type { Statement } from 'better-sqlite3';
import type { OrderRequest } from '../api/schemas.js';
import { toRow, type Row, type RowRecord } from './row-record.js';

export type { Row } from './row-record.js';

export const ROW_STATES = [
  'pending',
  'sending',
  'processing',
  'verifying',
  'completed',
  'cancelled',
  'invalid',
  'rejected',
  'skipped',
  'review',
] as const;
export type RowState = (typeof ROW_STATES)[number];
export const FINAL_ROW_STATES: readonly RowState[] = ['completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review'];

export interface NewRow {
  idx: number;
  line: number;
  cells: string[];
  /** Valid rows: the full request body, trxid included. Invalid rows: null. */
  request: OrderRequest | null;
  error: string | null;
  productId?: string;
  slug?: string;
  packName?: string;
  quantity?: number;
  unitPriceUsd?: number;
  expectedUsd?: number;
  maxPriceUsd?: number | null;
}

/** What the API told us about a placed order. */
export interface OrderFacts {
  orderId: string;
  status: 'processing' | 'completed' | 'cancelled';
  amountUsd?: number | undefined;
  codes?: string[] | undefined;
  refunded?: boolean | undefined;
  error?: string | undefined;
}

export type StateCounts = Record<RowState, number>;

/** Rows owed a send, and rows whose order is followed by polling. */
const UNSENT: readonly RowState[] = ['pending', 'sending'];
const FOLLOWED: readonly RowState[] = ['processing', 'verifying'];

/** `?,?,?` for an IN list of this length. */
function placeholders(values: readonly unknown[]): string {
  return values.map(() => '?').join(',');
}

export function emptyCounts(): StateCounts {
  return Object.fromEntries(ROW_STATES.map((s) => [s, 0])) as StateCounts;
}

/**
 * reject_code of a `verifying` row that was never refused: no send got a definite answer within
 * TOPUP_REVIEW_AFTER_MS. History can show it was placed; nothing can show it was not.
 */
export const NO_ANSWER_CODE = 'TOPUP_NO_DEFINITE_ANSWER';

export class RowStore {
  readonly #db: Db;
  readonly #stmt: (sql: string) => Statement;
  constructor(db: Db) {
    this.#db = db;
    this.#stmt = statementCache(db);
  }

  /** Stores every row of a batch in one transaction: a batch is stored whole or not at all. */
  insertAll(batchId: string, rows: Iterable<NewRow>, now: number): number {
    const stmt = this.#stmt(
      `INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, request_json, product_id, slug, pack_name, quantity,
         unit_price_usd, expected_usd, max_price_usd, error, updated_at)
       VALUES (@batchId, @idx, @line, @cells, @state, @trxid, @request, @productId, @slug, @packName, @quantity,
         @unitPriceUsd, @expectedUsd, @maxPriceUsd, @error, @now)`,
    );
    let n = 0;
    for (const r of rows) {
      stmt.run({
        batchId,
        idx: r.idx,
        line: r.line,
        cells: JSON.stringify(r.cells),
        state: r.request ? 'pending' : 'invalid',
        trxid: r.request?.trxid ?? null,
        request: r.request ? JSON.stringify(r.request) : null,
        productId: r.productId ?? null,
        slug: r.slug ?? null,
        packName: r.packName ?? null,
        quantity: r.quantity ?? null,
        unitPriceUsd: r.unitPriceUsd ?? null,
        expectedUsd: r.expectedUsd ?? null,
        maxPriceUsd: r.maxPriceUsd ?? null,
        error: r.error,
        now,
      });
      n++;
    }
    return n;
  }

  deleteBatchRows(batchId: string): void {
    this.#stmt('DELETE FROM rows WHERE batch_id = ?').run(batchId);
  }

  get(batchId: string, idx: number): Row | undefined {
    const r = this.#stmt('SELECT * FROM rows WHERE batch_id = ? AND idx = ?').get(batchId, idx) as RowRecord | undefined;
    return r ? toRow(r) : undefined;
  }

  byTrxid(trxid: string): { batchId: string; idx: number } | undefined {
    const r = this.#stmt('SELECT batch_id, idx FROM rows WHERE trxid = ?').get(trxid) as { batch_id: string; idx: number } | undefined;
    return r ? { batchId: r.batch_id, idx: r.idx } : undefined;
  }

  *iterate(batchId: string): Generator<Row> {
    for (const r of this.#stmt('SELECT * FROM rows WHERE batch_id = ? ORDER BY idx').iterate(batchId) as Iterable<RowRecord>) {
      yield toRow(r);
    }
  }

  inStates(batchId: string, states: readonly RowState[]): Row[] {
    const rows = this.#stmt(`SELECT * FROM rows WHERE batch_id = ? AND state IN (${placeholders(states)}) ORDER BY idx`)
      .all(batchId, ...states) as RowRecord[];
    return rows.map(toRow);
  }

  counts(batchId: string): StateCounts {
    const counts = emptyCounts();
    for (const r of this.#stmt('SELECT state, count(*) AS n FROM rows WHERE batch_id = ? GROUP BY state').all(batchId) as {
      state: RowState;
      n: number;
    }[]) {
      counts[r.state] = r.n;
    }
    return counts;
  }

  /** USD still to be spent on rows that have not been sent (pending) in a batch. */
  unsentTotal(batchId: string): number {
    const r = this.#stmt(`SELECT coalesce(sum(expected_usd), 0) AS usd FROM rows WHERE batch_id = ? AND state = 'pending'`).get(batchId) as {
      usd: number;
    };
    return Math.round(r.usd * 100) / 100;
  }

  /** Rows that may be (re)sent now, oldest batch first. `sending` rows come first: they are owed an answer. */
  sendable(batchIds: readonly string[], now: number, limit: number): Row[] {
    if (batchIds.length === 0) return [];
    const rows = this.#stmt(
        `SELECT r.* FROM rows r JOIN batches b ON b.id = r.batch_id
         WHERE r.batch_id IN (${placeholders(batchIds)}) AND r.state IN ('pending', 'sending') AND r.next_try_at <= ?
         ORDER BY (r.state = 'sending') DESC, b.seq, r.idx LIMIT ?`,
      )
      .all(...batchIds, now, limit) as RowRecord[];
    return rows.map(toRow);
  }

  /** The earliest time any pending/sending row of these batches becomes sendable. */
  nextTryAt(batchIds: readonly string[]): number | undefined {
    return this.#aggregate('min(next_try_at)', batchIds, UNSENT) ?? undefined;
  }

  /** One aggregate over the rows of these batches in these states; null when there are none. */
  #aggregate(expr: string, batchIds: readonly string[], states: readonly RowState[]): number | null {
    if (batchIds.length === 0) return null;
    const sql = `SELECT ${expr} AS v FROM rows WHERE batch_id IN (${placeholders(batchIds)}) AND state IN (${placeholders(states)})`;
    return (this.#stmt(sql).get(...batchIds, ...states) as { v: number | null }).v;
  }

  /**
   * THE INTENT. Moves a row to `sending` (or keeps it there for a resend), committed with
   * synchronous=FULL before the request leaves. Guarded by the batch lease, so a process that
   * lost its lease can never send. A resend of a row already `sending` marks it uncertain:
   * an earlier attempt may have created the order. Cancelled batches send no new rows, but
   * rows already `sending` are still resent, because only a resend tells whether they were charged.
   */
  markSending(batchId: string, idx: number, owner: string, now: number, busyUntil: number): boolean {
    return (
      this.#stmt(
          `UPDATE rows SET
             uncertain = CASE WHEN state = 'sending' THEN 1 ELSE uncertain END,
             doubt_since = CASE WHEN state = 'sending' THEN coalesce(doubt_since, last_sent_at, @now) ELSE doubt_since END,
             state = 'sending', attempts = attempts + 1, first_sent_at = coalesce(first_sent_at, @now), last_sent_at = @now,
             next_try_at = @busyUntil, updated_at = @now
           WHERE batch_id = @batchId AND idx = @idx AND state IN ('pending', 'sending')
             AND EXISTS (SELECT 1 FROM batches b WHERE b.id = @batchId AND b.owner = @owner AND b.lease_until > @now
                         AND (b.cancel_requested = 0 OR rows.state = 'sending'))`,
        )
        .run({ batchId, idx, owner, now, busyUntil }).changes === 1
    );
  }

  /** The API answered with an order: processing, or already final. */
  recordOrder(batchId: string, idx: number, o: OrderFacts, now: number, nextPollAt: number): boolean {
    const state: RowState = o.status;
    return (
      this.#stmt(
          `UPDATE rows SET state = @state, order_id = @orderId, amount_usd = coalesce(@amountUsd, amount_usd),
             codes_json = coalesce(@codes, codes_json), refunded = coalesce(@refunded, refunded),
             error = CASE WHEN @state = 'cancelled' THEN coalesce(@error, error) ELSE NULL END,
             doubt_since = NULL, doubt_tries = 0, next_poll_at = @nextPollAt, updated_at = @now
           WHERE batch_id = @batchId AND idx = @idx AND state IN ('sending', 'pending', 'processing', 'verifying')`,
        )
        .run({
          batchId,
          idx,
          state,
          orderId: o.orderId,
          amountUsd: o.amountUsd ?? null,
          codes: o.codes && o.codes.length > 0 ? JSON.stringify(o.codes) : null,
          refunded: o.refunded === undefined ? null : o.refunded ? 1 : 0,
          error: o.error ?? null,
          nextPollAt,
          now,
        }).changes === 1
    );
  }

  /**
   * A send that got no definite answer: keep the intent, try again at `nextTryAt`. `uncertain`:
   * the order may exist (the row stays `sending`). `unanswered`: this send counts towards
   * TOPUP_REVIEW_AFTER_MS (a timeout, reset or 5xx; not DUPLICATE_IN_FLIGHT, where the API is
   * still working on it). Returns the row's doubt afterwards.
   */
  retryLater(
    batchId: string,
    idx: number,
    opts: { nextTryAt: number; uncertain: boolean; unanswered?: boolean; note: string | null },
    now: number,
  ): { doubtSince: number | null; doubtTries: number; state: RowState } | undefined {
    return this.#stmt(
        `UPDATE rows SET state = CASE WHEN uncertain = 1 OR @uncertain = 1 THEN 'sending' ELSE 'pending' END,
           doubt_since = CASE WHEN uncertain = 1 OR @uncertain = 1 THEN coalesce(doubt_since, last_sent_at, @now) ELSE doubt_since END,
           doubt_tries = doubt_tries + @unanswered,
           uncertain = max(uncertain, @uncertain), next_try_at = @nextTryAt, error = @note, updated_at = @now
         WHERE batch_id = @batchId AND idx = @idx AND state = 'sending'
         RETURNING doubt_since AS doubtSince, doubt_tries AS doubtTries, state`,
      )
      .get({ batchId, idx, nextTryAt: opts.nextTryAt, uncertain: opts.uncertain ? 1 : 0, unanswered: opts.unanswered ? 1 : 0, note: opts.note, now }) as
      | { doubtSince: number | null; doubtTries: number; state: RowState }
      | undefined;
  }

  /** A definite refusal of a row that was never in doubt: nothing was charged. */
  reject(batchId: string, idx: number, error: string, code: string | null, now: number): boolean {
    return (
      this.#stmt(
          `UPDATE rows SET state = 'rejected', error = @error, reject_code = @code, updated_at = @now
           WHERE batch_id = @batchId AND idx = @idx AND state IN ('pending', 'sending', 'verifying')`,
        )
        .run({ batchId, idx, error, code, now }).changes === 1
    );
  }

  /**
   * A 400 after an attempt whose answer was lost: not proof of "not charged". Look in history
   * first. Also a row in doubt for longer than TOPUP_REVIEW_AFTER_MS, with `code` NO_ANSWER_CODE.
   */
  toVerify(batchId: string, idx: number, error: string, code: string | null, verifyAt: number, now: number): void {
    this.#stmt(
        `UPDATE rows SET state = 'verifying', error = @error, reject_code = @code, next_poll_at = @verifyAt, updated_at = @now
         WHERE batch_id = @batchId AND idx = @idx AND state = 'sending'`,
      )
      .run({ batchId, idx, error, code, verifyAt, now });
  }

  /** Back to pending without the doubt (history proved nothing was placed), e.g. to wait for balance. */
  clearToPending(batchId: string, idx: number, nextTryAt: number, now: number): void {
    this.#stmt(
        `UPDATE rows SET state = 'pending', uncertain = 0, doubt_since = NULL, doubt_tries = 0, next_try_at = @nextTryAt, updated_at = @now
         WHERE batch_id = @batchId AND idx = @idx AND state IN ('sending', 'verifying')`,
      )
      .run({ batchId, idx, nextTryAt, now });
  }

  /** Undecidable: the row ends `review`, if it is still in the state the caller decided from. */
  markReview(batchId: string, idx: number, error: string, now: number, from: 'verifying' | 'sending' | 'processing' = 'verifying'): boolean {
    return (
      this.#stmt(`UPDATE rows SET state = 'review', error = @error, updated_at = @now WHERE batch_id = @batchId AND idx = @idx AND state = @from`)
        .run({ batchId, idx, error, now, from }).changes === 1
    );
  }

  /** A row that failed a check just before sending (e.g. the price rose above maxPriceUsd). */
  invalidateUnsent(batchId: string, idx: number, error: string, now: number): boolean {
    return (
      this.#stmt(`UPDATE rows SET state = 'invalid', error = @error, updated_at = @now WHERE batch_id = @batchId AND idx = @idx AND state = 'pending'`)
        .run({ batchId, idx, error, now }).changes === 1
    );
  }

  skipPending(batchId: string, now: number): number {
    return this.#stmt(
        `UPDATE rows SET state = 'skipped', error = 'batch cancelled by the operator before this row was sent', updated_at = ?
         WHERE batch_id = ? AND state = 'pending'`,
      )
      .run(now, batchId).changes;
  }

  /** A batch taken from a dead process: its `sending` rows are owed a resend now, not at its timeout. */
  resendNow(batchId: string): void {
    this.#stmt(`UPDATE rows SET next_try_at = 0 WHERE batch_id = ? AND state = 'sending'`).run(batchId);
  }

  deferPending(batchId: string, until: number): void {
    this.#stmt(`UPDATE rows SET next_try_at = max(next_try_at, ?) WHERE batch_id = ? AND state = 'pending'`).run(until, batchId);
  }

  /** Processing/verifying rows whose next look is due. */
  duePolls(batchIds: readonly string[], now: number, limit: number): Row[] {
    if (batchIds.length === 0) return [];
    const rows = this.#stmt(
        `SELECT * FROM rows WHERE batch_id IN (${placeholders(batchIds)}) AND state IN ('processing', 'verifying')
           AND next_poll_at <= ? ORDER BY next_poll_at LIMIT ?`,
      )
      .all(...batchIds, now, limit) as RowRecord[];
    return rows.map(toRow);
  }

  nextPollAt(batchIds: readonly string[]): number | undefined {
    return this.#aggregate('min(next_poll_at)', batchIds, FOLLOWED) ?? undefined;
  }

  countUnsent(batchIds: readonly string[]): number {
    return this.#aggregate('count(*)', batchIds, UNSENT) ?? 0;
  }

  countProcessing(batchIds: readonly string[]): number {
    return this.#aggregate('count(*)', batchIds, ['processing']) ?? 0;
  }

  processingByOrderIds(orderIds: readonly string[]): Row[] {
    if (orderIds.length === 0) return [];
    const rows = this.#stmt(`SELECT * FROM rows WHERE order_id IN (${placeholders(orderIds)}) AND state = 'processing'`)
      .all(...orderIds) as RowRecord[];
    return rows.map(toRow);
  }

  /** The next look at a followed row; `seen`: the API just showed its order, so nothing about it is in doubt. */
  schedulePoll(batchId: string, idx: number, at: number, seen = false): void {
    this.#stmt(
      `UPDATE rows SET next_poll_at = ?, polls = polls + 1, doubt_since = CASE WHEN ? THEN NULL ELSE doubt_since END WHERE batch_id = ? AND idx = ?`,
    ).run(at, seen ? 1 : 0, batchId, idx);
  }

  /** A poll that did not find the row's order: looked at again at `at`. Returns since when it has not been found. */
  notFoundOnPoll(batchId: string, idx: number, at: number, now: number): number {
    const r = this.#stmt(
      `UPDATE rows SET next_poll_at = ?, polls = polls + 1, doubt_since = coalesce(doubt_since, ?) WHERE batch_id = ? AND idx = ?
       RETURNING doubt_since AS since`,
    ).get(at, now, batchId, idx) as { since: number } | undefined;
    return r?.since ?? now;
  }

  isOrderIdKnown(orderId: string): boolean {
    return this.#stmt('SELECT 1 FROM rows WHERE order_id = ?').get(orderId) !== undefined;
  }

  /** All placed orders (for reconciliation), newest first. */
  placedOrders(sinceMs: number): Row[] {
    const rows = this.#stmt(`SELECT * FROM rows WHERE order_id IS NOT NULL AND coalesce(first_sent_at, 0) >= ? ORDER BY first_sent_at DESC`)
      .all(sinceMs) as RowRecord[];
    return rows.map(toRow);
  }
}
