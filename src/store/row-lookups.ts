/**
 * The rows table looked up by the supplier's order: which row holds an order id, when it was
 * first sent, how deep in history an order sits, and the review rows with their rechecks. For
 * verification (poll/verify.ts), `review resolve`, reconciliation and reports; the engine's reads
 * (what is due to be sent or polled) are in row-reads.ts, which this extends. Read-only.
 */
import { orderIdFoldSql } from '../kernel/identity.js';
import { placeholders } from './db.js';
import { toRow, type Row, type RowRecord } from './row-record.js';
import { PLACED_STATES } from './row-states.js';
import { IN_REVIEW_INDEX, rowStates } from './state-sql.js';
import { RowReads } from './row-reads.js';

export class RowLookups extends RowReads {
  /**
   * Our placed, followed rows holding these order ids (on `account`: order ids are each account's
   * own numbering, and two suppliers both have an ORD1000001).
   */
  processingByOrderIds(orderIds: readonly string[], account?: string): Row[] {
    if (orderIds.length === 0) return [];
    const rows = (
      account === undefined
        ? this.stmt(`SELECT * FROM rows WHERE order_id IN (${placeholders(orderIds)}) AND state IN (${rowStates(PLACED_STATES)})`).all(...orderIds)
        : this.stmt(`SELECT * FROM rows WHERE order_id IN (${placeholders(orderIds)}) AND account = ? AND state IN (${rowStates(PLACED_STATES)})`).all(...orderIds, account)
    ) as RowRecord[];
    return rows.map(toRow);
  }

  /** Does a row of ours hold this order (of this account: order ids are each account's own)? */
  isOrderIdKnown(orderId: string, account?: string): boolean {
    if (account === undefined) return this.stmt('SELECT 1 FROM rows WHERE order_id = ?').get(orderId) !== undefined;
    return this.stmt('SELECT 1 FROM rows WHERE order_id = ? AND account = ?').get(orderId, account) !== undefined;
  }

  /** All placed orders (for reconciliation), newest first. */
  placedOrders(sinceMs: number): Row[] {
    const rows = this.stmt(`SELECT * FROM rows WHERE order_id IS NOT NULL AND coalesce(first_sent_at, 0) >= ? ORDER BY first_sent_at DESC`)
      .all(sinceMs) as RowRecord[];
    return rows.map(toRow);
  }

  /**
   * Which of our rows holds this order, if any: the id as written, else under the order id's one
   * fold (kernel/identity.ts foldOrderId: any letter case, any space around it; suppliers look ids
   * up case-insensitively, so `ord-ä7` typed by a person is the order a row holds as `ORD-Ä7`).
   * The second look scans: it serves operator actions only.
   */
  placedBy(orderId: string, account?: string): { batchId: string; idx: number; line: number } | undefined {
    type Holder = { batchId: string; idx: number; line: number };
    // With `account`: held on that account only (order ids are each account's own numbering).
    const on = account === undefined ? '' : ' AND account = @account';
    const p = account === undefined ? { orderId } : { orderId, account };
    return (
      (this.stmt(`SELECT batch_id AS batchId, idx, line FROM rows WHERE order_id = @orderId${on}`).get(p) as Holder | undefined) ??
      (this.stmt(`SELECT batch_id AS batchId, idx, line FROM rows WHERE order_id IS NOT NULL AND ${orderIdFoldSql('order_id')} = ${orderIdFoldSql('@orderId')}${on} LIMIT 1`).get(p) as Holder | undefined)
    );
  }

  /** When the row holding this order was first sent (null when unknown). */
  firstSentAtOf(orderId: string, account?: string): number | null {
    // With `account`: that account's order (order ids are each account's own numbering: the same
    // id at another account says nothing about this account's history; an adversarial review).
    const r = (
      account === undefined
        ? this.stmt('SELECT first_sent_at AS t FROM rows WHERE order_id = ?').get(orderId)
        : this.stmt('SELECT first_sent_at AS t FROM rows WHERE order_id = ? AND account = ?').get(orderId, account)
    ) as { t: number | null } | undefined;
    return r?.t ?? null;
  }

  /**
   * For each instant, how many orders we placed after it (how deep an order sent then sits in
   * history, at least). One walk down rows_placed from the newest order, as deep as the oldest
   * instant asked about: the poller asks for every row of a round at once.
   */
  placedAfter(instants: readonly number[]): number[] {
    if (instants.length === 0) return [];
    const asked = instants.map((t, i) => ({ t, i })).sort((a, b) => b.t - a.t);
    const out = new Array<number>(instants.length).fill(0);
    const oldest = asked[asked.length - 1]!.t;
    let k = 0;
    let n = 0;
    for (const r of this.stmt(`SELECT first_sent_at AS t FROM rows WHERE order_id IS NOT NULL AND first_sent_at > ? ORDER BY first_sent_at DESC`)
      .iterate(oldest) as Iterable<{ t: number }>) {
      while (k < asked.length && r.t <= asked[k]!.t) out[asked[k++]!.i] = n;
      n++;
    }
    while (k < asked.length) out[asked[k++]!.i] = n;
    return out;
  }

  /** Review rows not resolved, that entered review after `since`, whose recheck is due. */
  dueReviews(since: number, now: number, limit: number): Row[] {
    return (this.stmt(
      `SELECT * FROM rows WHERE ${IN_REVIEW_INDEX} AND next_poll_at <= ? AND resolution IS NULL AND coalesce(review_since, updated_at) >= ?
       ORDER BY next_poll_at LIMIT ?`,
    ).all(now, since, limit) as RowRecord[]).map(toRow);
  }

  /** When the next review recheck is due (rows that entered review after `since`). */
  nextReviewCheckAt(since: number): number | undefined {
    const r = this.stmt(
      `SELECT min(next_poll_at) AS t FROM rows WHERE ${IN_REVIEW_INDEX} AND resolution IS NULL AND coalesce(review_since, updated_at) >= ?`,
    ).get(since) as { t: number | null };
    return r.t ?? undefined;
  }

  /** Review rows (unresolved, or every row that was ever resolved too), newest first. */
  reviewRows(opts: { resolved?: boolean; limit?: number } = {}): Row[] {
    const where = opts.resolved ? `${IN_REVIEW_INDEX} OR resolution IS NOT NULL` : IN_REVIEW_INDEX;
    return (this.stmt(`SELECT * FROM rows WHERE ${where} ORDER BY coalesce(review_since, updated_at) DESC LIMIT ?`)
      .all(opts.limit ?? 1_000_000) as RowRecord[]).map(toRow);
  }

  /** Rows resolved (by an operator or the recheck) since `since`, for reconciliation. */
  resolvedSince(since: number): Row[] {
    return (this.stmt(`SELECT * FROM rows WHERE resolution IS NOT NULL AND resolved_at >= ? ORDER BY resolved_at`).all(since) as RowRecord[]).map(toRow);
  }
}
