/**
 * What the pipeline asks of the rows table: one row, a batch's rows and counts, which rows are
 * due to be sent or polled, and the lookups verification and reports need. Read-only; every
 * change of a row's state is in rows.ts.
 */
import type { Statement } from 'better-sqlite3';
import { placeholders, statementCache, type Db } from './db.js';
import { emptyCounts, toRow, type Row, type RowRecord, type RowState, type StateCounts } from './row-record.js';
import { roundCents } from '../money.js';

/** Rows owed a send, and rows whose order is followed by polling. */
const UNSENT: readonly RowState[] = ['pending', 'sending'];
const FOLLOWED: readonly RowState[] = ['processing', 'verifying'];

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

  /** USD still to be spent on rows that have not been sent (pending) in a batch. */
  unsentTotal(batchId: string): number {
    const r = this.stmt(`SELECT coalesce(sum(expected_usd), 0) AS usd FROM rows WHERE batch_id = ? AND state = 'pending'`).get(batchId) as {
      usd: number;
    };
    return roundCents(r.usd);
  }

  /**
   * Rows that may be (re)sent now, oldest batch first. `sending` rows come first: they are owed
   * an answer. Batches in `scope.newOrders` send pending rows too; batches in
   * `scope.resendsOnly` (waiting for balance, say) only resend rows already in doubt.
   */
  sendable(scope: SendScope, now: number, limit: number): Row[] {
    const { newOrders, resendsOnly } = scope;
    if (newOrders.length + resendsOnly.length === 0) return [];
    const rows = this.stmt(
        `SELECT r.* FROM rows r JOIN batches b ON b.id = r.batch_id
         WHERE ((r.batch_id IN (${placeholders(newOrders)}) AND r.state IN ('pending', 'sending'))
             OR (r.batch_id IN (${placeholders(resendsOnly)}) AND r.state = 'sending'))
           AND r.next_try_at <= ?
         ORDER BY (r.state = 'sending') DESC, b.seq, r.idx LIMIT ?`,
      )
      .all(...newOrders, ...resendsOnly, now, limit) as RowRecord[];
    return rows.map(toRow);
  }

  /** The earliest time any row `sendable` could return becomes due. */
  nextTryAt(scope: SendScope): number | undefined {
    const a = this.#aggregate('min(next_try_at)', scope.newOrders, UNSENT);
    const b = this.#aggregate('min(next_try_at)', scope.resendsOnly, ['sending']);
    const due = [a, b].filter((x): x is number => x !== null);
    return due.length > 0 ? Math.min(...due) : undefined;
  }

  /** One aggregate over the rows of these batches in these states; null when there are none. */
  #aggregate(expr: string, batchIds: readonly string[], states: readonly RowState[]): number | null {
    if (batchIds.length === 0) return null;
    const sql = `SELECT ${expr} AS v FROM rows WHERE batch_id IN (${placeholders(batchIds)}) AND state IN (${placeholders(states)})`;
    return (this.stmt(sql).get(...batchIds, ...states) as { v: number | null }).v;
  }

  /** Processing/verifying rows whose next look is due. */
  duePolls(batchIds: readonly string[], now: number, limit: number): Row[] {
    if (batchIds.length === 0) return [];
    const rows = this.stmt(
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
    const rows = this.stmt(`SELECT * FROM rows WHERE order_id IN (${placeholders(orderIds)}) AND state = 'processing'`)
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

  /** Another row of ours for the same purchase (game, pack, player) that is itself still in doubt. */
  hasTwinInDoubt(row: Row): boolean {
    return (
      this.stmt(
        `SELECT 1 FROM rows WHERE state IN ('sending', 'verifying') AND uncertain = 1 AND slug IS ? AND pack_name IS ?
           AND json_extract(request_json, '$.userId') IS ? AND NOT (batch_id = ? AND idx = ?)`,
      ).get(row.slug, row.packName, row.request?.userId ?? null, row.batchId, row.idx) !== undefined
    );
  }
}
