/**
 * What the pipeline asks of the rows table: one row, a batch's rows and counts, which rows are
 * due to be sent or polled, and the lookups verification and reports need. Read-only; every
 * change of a row's state is in rows.ts.
 */
import type { Statement } from 'better-sqlite3';
import { placeholders, statementCache, type Db } from './db.js';
import { emptyCounts, toRow, type Row, type RowRecord, type StateCounts } from './row-record.js';
import { FOLLOWED_STATES, type RowState } from './row-states.js';
import { roundCents } from '../money.js';

/** Rows that may be sent now (`sending` rows have a request on its way), and placed orders followed by polls. */
const SENDABLE: readonly RowState[] = ['pending', 'resending'];
const PLACED: readonly RowState[] = ['processing', 'unseen'];

/** Which batches may send what: new orders and resends, or resends of rows in doubt only. */
export interface SendScope {
  newOrders: readonly string[];
  resendsOnly: readonly string[];
}

export class RowReads {
  protected readonly stmt: (sql: string) => Statement;
  constructor(db: Db) {
    this.stmt = statementCache(db);
  }

  *iterate(batchId: string): Generator<Row> {
    for (const r of this.stmt('SELECT * FROM rows WHERE batch_id = ? ORDER BY idx').iterate(batchId) as Iterable<RowRecord>) {
      yield toRow(r);
    }
  }

  /**
   * Up to `limit` rows from index `fromIdx` on, in order. For readers that yield between pages
   * (the result writers): an open iterate() would keep the connection busy across the yield.
   */
  page(batchId: string, fromIdx: number, limit: number): Row[] {
    return (this.stmt('SELECT * FROM rows WHERE batch_id = ? AND idx >= ? ORDER BY idx LIMIT ?').all(batchId, fromIdx, limit) as RowRecord[]).map(toRow);
  }

  get(batchId: string, idx: number): Row | undefined {
    const r = this.stmt('SELECT * FROM rows WHERE batch_id = ? AND idx = ?').get(batchId, idx) as RowRecord | undefined;
    return r ? toRow(r) : undefined;
  }

  byTrxid(trxid: string): { batchId: string; idx: number } | undefined {
    const r = this.stmt('SELECT batch_id, idx FROM rows WHERE trxid = ?').get(trxid) as { batch_id: string; idx: number } | undefined;
    return r ? { batchId: r.batch_id, idx: r.idx } : undefined;
  }

  inStates(batchId: string, states: readonly RowState[]): Row[] {
    const rows = this.stmt(`SELECT * FROM rows WHERE batch_id = ? AND state IN (${placeholders(states)}) ORDER BY idx`)
      .all(batchId, ...states) as RowRecord[];
    return rows.map(toRow);
  }

  counts(batchId: string): StateCounts {
    const counts = emptyCounts();
    for (const r of this.stmt('SELECT state, count(*) AS n FROM rows WHERE batch_id = ? GROUP BY state').all(batchId) as {
      state: RowState;
      n: number;
    }[]) {
      counts[r.state] = r.n;
    }
    return counts;
  }

  /** Does the batch have rows not sent yet? */
  hasPending(batchId: string): boolean {
    return this.stmt(`SELECT 1 FROM rows WHERE batch_id = ? AND state = 'pending' LIMIT 1`).get(batchId) !== undefined;
  }

  /** USD still to be spent on rows that have not been sent (pending) in a batch. */
  unsentTotal(batchId: string): number {
    const r = this.stmt(`SELECT coalesce(sum(expected_usd), 0) AS usd FROM rows WHERE batch_id = ? AND state = 'pending'`).get(batchId) as {
      usd: number;
    };
    return roundCents(r.usd);
  }

  /**
   * Rows that may be (re)sent now, oldest batch first. `resending` rows come first: they are owed
   * an answer. Batches in `scope.newOrders` send pending rows too; batches in
   * `scope.resendsOnly` (waiting for balance, say) only resend rows already in doubt.
   */
  sendable(scope: SendScope, now: number, limit: number): Row[] {
    const { newOrders, resendsOnly } = scope;
    if (newOrders.length + resendsOnly.length === 0) return [];
    const rows = this.stmt(
        `SELECT r.* FROM rows r JOIN batches b ON b.id = r.batch_id
         WHERE ((r.batch_id IN (${placeholders(newOrders)}) AND r.state IN ('pending', 'resending'))
             OR (r.batch_id IN (${placeholders(resendsOnly)}) AND r.state = 'resending'))
           AND r.next_try_at <= ?
         ORDER BY (r.state = 'resending') DESC, b.seq, r.idx LIMIT ?`,
      )
      .all(...newOrders, ...resendsOnly, now, limit) as RowRecord[];
    return rows.map(toRow);
  }

  /** The earliest time any row `sendable` could return becomes due. */
  nextTryAt(scope: SendScope): number | undefined {
    const a = this.#aggregate('min(next_try_at)', scope.newOrders, SENDABLE);
    const b = this.#aggregate('min(next_try_at)', scope.resendsOnly, ['resending']);
    const due = [a, b].filter((x): x is number => x !== null);
    return due.length > 0 ? Math.min(...due) : undefined;
  }

  /** One aggregate over the rows of these batches in these states; null when there are none. */
  #aggregate(expr: string, batchIds: readonly string[], states: readonly RowState[]): number | null {
    if (batchIds.length === 0) return null;
    const sql = `SELECT ${expr} AS v FROM rows WHERE batch_id IN (${placeholders(batchIds)}) AND state IN (${placeholders(states)})`;
    return (this.stmt(sql).get(...batchIds, ...states) as { v: number | null }).v;
  }

  /** Followed rows (placed orders, history checks) whose next look is due. */
  duePolls(batchIds: readonly string[], now: number, limit: number): Row[] {
    if (batchIds.length === 0) return [];
    const rows = this.stmt(
        `SELECT * FROM rows WHERE batch_id IN (${placeholders(batchIds)}) AND state IN (${placeholders(FOLLOWED_STATES)})
           AND next_poll_at <= ? ORDER BY next_poll_at LIMIT ?`,
      )
      .all(...batchIds, ...FOLLOWED_STATES, now, limit) as RowRecord[];
    return rows.map(toRow);
  }

  nextPollAt(batchIds: readonly string[]): number | undefined {
    return this.#aggregate('min(next_poll_at)', batchIds, FOLLOWED_STATES) ?? undefined;
  }

  /** Rows waiting to be sent or resent (not those with a request on its way). */
  countUnsent(batchIds: readonly string[]): number {
    return this.#aggregate('count(*)', batchIds, SENDABLE) ?? 0;
  }

  /** Placed orders being followed. */
  countProcessing(batchIds: readonly string[]): number {
    return this.#aggregate('count(*)', batchIds, PLACED) ?? 0;
  }

  /** Our placed, followed rows holding these order ids. */
  processingByOrderIds(orderIds: readonly string[]): Row[] {
    if (orderIds.length === 0) return [];
    const rows = this.stmt(`SELECT * FROM rows WHERE order_id IN (${placeholders(orderIds)}) AND state IN ('processing', 'unseen')`)
      .all(...orderIds) as RowRecord[];
    return rows.map(toRow);
  }

  isOrderIdKnown(orderId: string): boolean {
    return this.stmt('SELECT 1 FROM rows WHERE order_id = ?').get(orderId) !== undefined;
  }

  /** All placed orders (for reconciliation), newest first. */
  placedOrders(sinceMs: number): Row[] {
    const rows = this.stmt(`SELECT * FROM rows WHERE order_id IS NOT NULL AND coalesce(first_sent_at, 0) >= ? ORDER BY first_sent_at DESC`)
      .all(sinceMs) as RowRecord[];
    return rows.map(toRow);
  }

  /** How many of a batch's rows there are, were ever sent, and what they spent (completed, or cancelled without refund). */
  progress(batchId: string): { rows: number; sent: number; spentUsd: number } {
    return this.stmt(
      `SELECT count(*) AS rows,
         coalesce(sum(first_sent_at IS NOT NULL), 0) AS sent,
         coalesce(sum(CASE WHEN state = 'completed' OR (state = 'cancelled' AND coalesce(refunded, 0) = 0)
                      THEN coalesce(amount_usd, expected_usd, 0) ELSE 0 END), 0) AS spentUsd
       FROM rows WHERE batch_id = ?`,
    ).get(batchId) as { rows: number; sent: number; spentUsd: number };
  }

  /** Which of our rows holds this order, if any. */
  placedBy(orderId: string): { batchId: string; line: number } | undefined {
    return this.stmt('SELECT batch_id AS batchId, line FROM rows WHERE order_id = ?').get(orderId) as { batchId: string; line: number } | undefined;
  }

  /** When the row holding this order was first sent (null when unknown). */
  firstSentAtOf(orderId: string): number | null {
    const r = this.stmt('SELECT first_sent_at AS t FROM rows WHERE order_id = ?').get(orderId) as { t: number | null } | undefined;
    return r?.t ?? null;
  }

  /** How many orders we placed after this instant (how deep an order sent then sits in history, at least). */
  placedAfter(firstSentAt: number): number {
    return (this.stmt('SELECT count(*) AS n FROM rows WHERE order_id IS NOT NULL AND first_sent_at > ?').get(firstSentAt) as { n: number }).n;
  }

  /** Review rows not resolved, that entered review after `since`, whose recheck is due. */
  dueReviews(since: number, now: number, limit: number): Row[] {
    return (this.stmt(
      `SELECT * FROM rows WHERE state = 'review' AND next_poll_at <= ? AND resolution IS NULL AND coalesce(review_since, updated_at) >= ?
       ORDER BY next_poll_at LIMIT ?`,
    ).all(now, since, limit) as RowRecord[]).map(toRow);
  }

  /** When the next review recheck is due (rows that entered review after `since`). */
  nextReviewCheckAt(since: number): number | undefined {
    const r = this.stmt(
      `SELECT min(next_poll_at) AS t FROM rows WHERE state = 'review' AND resolution IS NULL AND coalesce(review_since, updated_at) >= ?`,
    ).get(since) as { t: number | null };
    return r.t ?? undefined;
  }

  /** Review rows (unresolved, or every row that was ever resolved too), newest first. */
  reviewRows(opts: { resolved?: boolean; limit?: number } = {}): Row[] {
    const where = opts.resolved ? `state = 'review' OR resolution IS NOT NULL` : `state = 'review'`;
    return (this.stmt(`SELECT * FROM rows WHERE ${where} ORDER BY coalesce(review_since, updated_at) DESC LIMIT ?`)
      .all(opts.limit ?? 1_000_000) as RowRecord[]).map(toRow);
  }

  /** Rows resolved (by an operator or the recheck) since `since`, for reconciliation. */
  resolvedSince(since: number): Row[] {
    return (this.stmt(`SELECT * FROM rows WHERE resolution IS NOT NULL AND resolved_at >= ? ORDER BY resolved_at`).all(since) as RowRecord[]).map(toRow);
  }

  /**
   * The newest purchase with this fingerprint placed by a batch before `seq` created since
   * `since`: a row an order exists or may exist for (claim/repeats.ts says which).
   */
  earlierPurchase(fingerprint: string, batchId: string, seq: number, since: number):
    { batchId: string; file: string; line: number; orderId: string | null; state: string; at: number } | undefined {
    return this.stmt(
      `SELECT r.batch_id AS batchId, b.source_name AS file, r.line, r.order_id AS orderId, r.state, coalesce(r.first_sent_at, b.created_at) AS at
       FROM rows r JOIN batches b ON b.id = r.batch_id
       WHERE r.fingerprint = ? AND r.batch_id != ? AND b.seq < ? AND b.created_at >= ?
         AND (r.state IN ('pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen', 'completed', 'review')
              OR (r.state = 'cancelled' AND coalesce(r.refunded, 0) = 0))
       ORDER BY b.seq DESC LIMIT 1`,
    ).get(fingerprint, batchId, seq, since) as { batchId: string; file: string; line: number; orderId: string | null; state: string; at: number } | undefined;
  }

  /** The row at a batch's input line. */
  byLine(batchId: string, line: number): Row | undefined {
    const r = this.stmt('SELECT * FROM rows WHERE batch_id = ? AND line = ?').get(batchId, line) as RowRecord | undefined;
    return r ? toRow(r) : undefined;
  }

  /**
   * Another row of ours for the same purchase (game, pack, player) that is in flight or in doubt:
   * `sending` (its first send may be on the wire right now), `resending`, `verifying` or
   * `searching`. Its order could be the one a history check is about to claim.
   */
  hasTwinInFlight(row: Row): boolean {
    return (
      this.stmt(
        `SELECT 1 FROM rows WHERE state IN ('sending', 'resending', 'verifying', 'searching') AND slug IS ? AND pack_name IS ?
           AND json_extract(request_json, '$.userId') IS ? AND NOT (batch_id = ? AND idx = ?)`,
      ).get(row.slug, row.packName, row.request?.userId ?? null, row.batchId, row.idx) !== undefined
    );
  }
}
