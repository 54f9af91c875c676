/**
 * Follows every `processing` order to `completed` or `cancelled`, spending as few calls as it can:
 *  - one GET /history?limit=200 reads the status of the newest 200 orders at once;
 *  - an order that has left the newest 200 is read from the history page it should be on
 *    (pageSize 50, its depth estimated from the orders we placed after it) when several share
 *    pages, else from GET /orders/:id;
 *  - each order is looked at no more often than every pollIntervalMs (default 5 s; the spec
 *    advises 3–10 s), and half as often while orders are waiting to be sent, since every poll
 *    spends budget an order could use.
 */
import { Priority } from '../api/client.js';
import type { Order } from '../api/schemas.js';
import { ApiError, coerceError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import type { Row } from '../store/rows.js';
import { crashPoint } from '../crash-points.js';

const HISTORY_WINDOW = 200;
const PAGE_SIZE = 50;

export interface PollRound {
  calls: number;
  updated: number;
}

export class Poller {
  readonly #rt: Runtime;
  constructor(rt: Runtime) {
    this.#rt = rt;
  }

  intervalMs(sendBacklog: boolean): number {
    return sendBacklog ? this.#rt.config.pollIntervalMs * 2 : this.#rt.config.pollIntervalMs;
  }

  /** Applies what the API says about one of our orders. True when the row reached an end. */
  apply(row: Row, order: Order, nextPollAt: number): boolean {
    const now = Date.now();
    if (order.status === 'processing') {
      this.#rt.rows.schedulePoll(row.batchId, row.idx, nextPollAt, true);
      return false;
    }
    crashPoint('before-final-commit');
    this.#rt.rows.recordOrder(
      row.batchId,
      row.idx,
      { orderId: row.orderId!, status: order.status, amountUsd: order.amountUsd, codes: order.codes, refunded: order.refunded, error: order.error },
      now,
      0,
    );
    this.#rt.log.debug({ batch: row.batchId, line: row.line, orderId: row.orderId, status: order.status }, 'order finished');
    return true;
  }

  /**
   * One round over the due `processing` rows. `processingTotal` is how many of our orders are
   * processing at all: a history sweep refreshes every one of them it sees, due or not, so the
   * polls of orders placed moments apart fall into step instead of costing a call each.
   */
  async round(due: readonly Row[], processingTotal: number, sendBacklog: boolean, signal?: AbortSignal): Promise<PollRound> {
    const result: PollRound = { calls: 0, updated: 0 };
    if (due.length === 0) return result;
    const next = Date.now() + this.intervalMs(sendBacklog);
    const byId = new Map(due.map((r) => [r.orderId!, r]));
    const opts = { priority: Priority.poll, ...(signal ? { signal } : {}) };

    if (due.length === 1 && processingTotal <= 1) {
      await this.#one(due[0]!, next, opts, result);
      return result;
    }
    // Newest 200 first: most processing orders are recent.
    const newest = await this.#rt.client.history({ limit: HISTORY_WINDOW }, opts);
    result.calls++;
    this.#absorb(newest.orders, byId, next, result);
    if (byId.size === 0) return result;

    // What is left is deeper than the newest 200 (or gone from history).
    const pages = this.#pagesFor([...byId.values()]);
    if (pages.size < byId.size) {
      for (const page of [...pages].sort((a, b) => a - b)) {
        if (byId.size === 0) break;
        const h = await this.#rt.client.history({ page, pageSize: PAGE_SIZE }, opts);
        result.calls++;
        this.#absorb(h.orders, byId, next, result);
        if (h.hasMore === false) break;
      }
    }
    for (const row of [...byId.values()]) await this.#one(row, next, opts, result);
    return result;
  }

  async #one(row: Row, next: number, opts: { priority: number; signal?: AbortSignal }, result: PollRound): Promise<void> {
    try {
      const order = await this.#rt.client.getOrder(row.orderId!, opts);
      result.calls++;
      if (this.apply(row, order, next)) result.updated++;
    } catch (err) {
      result.calls++;
      if (err instanceof ApiError && err.classification === 'not-found') {
        // The service created this order (it gave us the id); a 404 is a transient mismatch
        // or a sign the account changed. Keep looking, slowly, and say so; once it has not been
        // found for TOPUP_REVIEW_AFTER_MS, an operator decides.
        const now = Date.now();
        const since = this.#rt.rows.notFoundOnPoll(row.batchId, row.idx, next + 30_000, now);
        if (now - since >= this.#rt.config.reviewAfterMs) {
          const when = new Date(since).toISOString();
          const error = `REVIEW: the API gave order ${row.orderId} for this row but has not found it since ${when}; ask the supplier about this order before ordering it again`;
          if (this.#rt.rows.markReview(row.batchId, row.idx, error, now, 'processing')) result.updated++;
          this.#rt.log.error({ batch: row.batchId, line: row.line, orderId: row.orderId, since: when }, 'order still not found: marked for review');
          return;
        }
        this.#rt.log.warn({ batch: row.batchId, line: row.line, orderId: row.orderId }, 'order not found while polling; will look again');
        return;
      }
      this.#rt.rows.schedulePoll(row.batchId, row.idx, next);
      throw coerceError(err);
    }
  }

  /** Applies a page of history to every processing row of ours it mentions, due or not. */
  #absorb(orders: readonly Order[], byId: Map<string, Row>, next: number, result: PollRound): void {
    const byOrder = new Map(orders.filter((o) => o.orderId !== undefined).map((o) => [o.orderId!, o]));
    for (const row of this.#rt.rows.processingByOrderIds([...byOrder.keys()])) {
      byId.delete(row.orderId!);
      if (this.apply(row, byOrder.get(row.orderId!)!, next)) result.updated++;
    }
  }

  /**
   * History page (pageSize 50, from 1) each row should be on: its depth is at least the number
   * of orders we placed after it. Other clients of the same account only push it deeper, so a
   * row not found on its page is read with GET /orders/:id in the same round.
   */
  #pagesFor(rows: readonly Row[]): Set<number> {
    const pages = new Set<number>();
    for (const r of rows) {
      const depth = this.#rt.rows.placedAfter(r.firstSentAt ?? 0);
      pages.add(Math.floor(depth / PAGE_SIZE) + 1);
    }
    return pages;
  }
}
