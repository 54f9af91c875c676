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
import { Priority, type OrderAnswer } from '../api/client.js';
import { auditCopy } from '../api/audit.js';
import type { Order } from '../api/schemas.js';
import { ApiError, coerceError, type ApiAnswer } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import type { Account } from '../account/account.js';
import type { Row } from '../store/rows.js';
import { crashPoint } from '../kernel/crash-points.js';
import { describeMismatches, factsFor, MAX_CODE_READS, mismatches, needsCodes } from '../dispatch/order-match.js';

const HISTORY_WINDOW = 200;
const PAGE_SIZE = 50;
/** Orders read with GET /orders/:id in one round when history cannot serve them (the rest wait a round). */
const ONE_BY_ONE_PER_ROUND = 100;
/**
 * Gaps between reads of a completed key/card order that came without codes (at least the poll
 * interval each): suppliers deliver codes late, sometimes minutes late. About 4 minutes in all
 * before it is given up as "codes missing".
 */
const CODE_READ_GAPS_MS = [5_000, 15_000, 30_000, 60_000, 120_000];

/** 401/403: every route fails until the account works again; the runner pauses, rows are not blamed. */
export function isAccountProblem(err: unknown): boolean {
  return err instanceof ApiError && err.classification === 'account';
}

export interface PollRound {
  calls: number;
  updated: number;
}

/** What following orders touches: the rows it updates, the account's client and catalog, settings, log, clock, and this process's lease (owner) on the rows it writes. */
type PollerParts = Pick<Runtime, 'clock' | 'config' | 'log' | 'owner' | 'rows'>;

/** Follows the orders of one account (each account has its own poller: order ids and history are the account's own). */
export class Poller {
  readonly #rt: PollerParts;
  readonly #account: Account;
  /** A home with several accounts: only this account's rows are read by order id. */
  readonly #only: string | undefined;
  constructor(rt: PollerParts & Pick<Runtime, 'accounts'>, account: Account) {
    this.#rt = rt;
    this.#account = account;
    this.#only = rt.accounts.length > 1 || account.id !== 'default' ? account.id : undefined;
  }

  intervalMs(sendBacklog: boolean): number {
    return sendBacklog ? this.#rt.config.pollIntervalMs * 2 : this.#rt.config.pollIntervalMs;
  }

  /**
   * Applies what the API says about one of our orders. True when the row reached an end.
   *  - An answer about another purchase (dispatch/order-match.ts) never settles the row: review.
   *  - A status word we do not know is not an end: the row stays processing on its doubt clock
   *    and ends review after TOPUP_REVIEW_AFTER_MS of nothing but unknown words.
   *  - A completed key/card order without codes is read again, MAX_CODE_READS times, then ends
   *    completed with a "codes missing" note (listed in the summary), never a silent empty cell.
   */
  apply(row: Row, order: Order, nextPollAt: number, answer: ApiAnswer): boolean {
    const rt = this.#rt;
    const now = this.#rt.clock.now();
    const copy = auditCopy(answer);
    const wrong = mismatches(row, order, this.#account.catalog.gameNamesOf(row));
    if (wrong.length > 0) {
      const error = `REVIEW: the API describes order ${row.orderId} as another purchase (${describeMismatches(wrong)}); check this order with the supplier before ordering the row again`;
      rt.log.error({ batch: row.batchId, line: row.line, orderId: row.orderId, mismatch: wrong }, 'a poll answer does not match the row: marked for review');
      return rt.rows.toReview('mismatch', row.batchId, row.idx, { owner: rt.owner, now }, error, { answer: copy });
    }
    if (!order.statusKnown) {
      const since = rt.rows.notSeen(row.batchId, row.idx, { owner: rt.owner, now }, nextPollAt, copy);
      if (since === undefined || now - since < rt.config.reviewAfterMs) return false;
      const error = `REVIEW: the API has reported order ${row.orderId} with the status "${order.statusWord ?? '(none)'}", which is not one this tool knows, since ${new Date(since).toISOString()}; ask the supplier what it means before ordering the row again`;
      return rt.rows.toReview('lost', row.batchId, row.idx, { owner: rt.owner, now }, error, { answer: copy });
    }
    if (order.status === 'processing') {
      rt.rows.seen(row.batchId, row.idx, now, nextPollAt, copy);
      return false;
    }
    const { facts, awaitingCodes } = factsFor(row, { ...order, orderId: row.orderId! });
    let note: string | null = null;
    if (awaitingCodes) {
      const reads = rt.rows.codesAwaited(row.batchId, row.idx, now, Math.max(nextPollAt, now + (CODE_READ_GAPS_MS[row.codeReads] ?? 0)), copy);
      if (reads < MAX_CODE_READS) return false;
      facts.status = 'completed';
      note = `CODES MISSING: the API reported order ${row.orderId} completed but gave no codes in ${reads} reads; ask the supplier for them`;
      rt.log.error({ batch: row.batchId, line: row.line, orderId: row.orderId }, 'completed key/card order without codes: listed as codes missing');
    }
    crashPoint('before-final-commit');
    rt.rows.finished(row.batchId, row.idx, { ...facts, status: facts.status as 'completed' | 'cancelled' }, now, { answer: copy, note });
    rt.log.debug({ batch: row.batchId, line: row.line, orderId: row.orderId, status: facts.status }, 'order finished');
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
    const next = this.#rt.clock.now() + this.intervalMs(sendBacklog);
    const byId = new Map(due.map((r) => [r.orderId!, r]));
    const opts = { priority: Priority.poll, ...(signal ? { signal } : {}) };

    if (due.length === 1 && processingTotal <= 1) {
      await this.#one(due[0]!, next, opts, result);
      return result;
    }
    // Newest 200 first: most processing orders are recent. History is a saving, not a need: if
    // it cannot be read, the due orders are read one by one (a bounded number per round).
    try {
      // partial: the poller only looks for its orders by id (absence: read one by one), so an
      // element it cannot read takes nothing from what it can (api/client.ts history).
      const newest = await this.#account.client.history({ limit: HISTORY_WINDOW, partial: true }, opts);
      result.calls++;
      this.#absorb(newest.orders, byId, next, result);
      if (byId.size === 0) return result;

      // What is left is deeper than the newest 200 (or gone from history).
      const pages = this.#pagesFor([...byId.values()]);
      if (pages.size < byId.size) {
        for (const page of [...pages].sort((a, b) => a - b)) {
          if (byId.size === 0) break;
          const h = await this.#account.client.history({ page, pageSize: PAGE_SIZE, partial: true }, opts);
          result.calls++;
          this.#absorb(h.orders, byId, next, result);
          if (h.hasMore === false) break;
        }
      }
    } catch (err) {
      if (isAccountProblem(err)) throw err;
      result.calls++;
      this.#rt.log.warn({ err: coerceError(err).message, orders: byId.size }, 'order history cannot be read; polling orders one by one');
    }
    let read = 0;
    for (const row of [...byId.values()]) {
      if (read++ >= ONE_BY_ONE_PER_ROUND) {
        this.#rt.rows.schedulePoll(row.batchId, row.idx, next);
        continue;
      }
      await this.#one(row, next, opts, result);
    }
    return result;
  }

  async #one(row: Row, next: number, opts: { priority: number; signal?: AbortSignal }, result: PollRound): Promise<void> {
    let order: OrderAnswer;
    try {
      order = await this.#account.client.getOrder(row.orderId!, opts);
      result.calls++;
    } catch (err) {
      result.calls++;
      if (isAccountProblem(err) || (opts.signal?.aborted ?? false)) throw err;
      this.#unreadable(row, err, next);
      if (this.#rt.rows.get(row.batchId, row.idx)?.state === 'review') result.updated++;
      return;
    }
    if (this.apply(row, order, next, order.answer)) result.updated++;
  }

  /**
   * The API gave this row's order id but a poll did not show the order: a 404, or an answer that
   * cannot be read (an HTML page, success:false, an unknown shape). Keep looking, slowly, and say
   * so; once nothing readable has come for TOPUP_REVIEW_AFTER_MS (the row's doubt clock), an
   * operator decides.
   */
  #unreadable(row: Row, err: unknown, next: number): void {
    const rt = this.#rt;
    const now = this.#rt.clock.now();
    const notFound = err instanceof ApiError && err.classification === 'not-found';
    const answer = auditCopy((err as { answer?: ApiAnswer }).answer);
    const since = rt.rows.notSeen(row.batchId, row.idx, { owner: rt.owner, now }, next + (notFound ? 30_000 : 0), answer);
    if (since === undefined) return; // moved on meanwhile, or no longer ours
    const what = notFound ? 'has not found it' : `has not answered readably about it (${coerceError(err).message})`;
    if (now - since >= rt.config.reviewAfterMs) {
      const when = new Date(since).toISOString();
      const error = `REVIEW: the API gave order ${row.orderId} for this row but ${what} since ${when}; ask the supplier about this order before ordering it again`;
      rt.rows.toReview('lost', row.batchId, row.idx, { owner: rt.owner, now }, error, { answer });
      rt.log.error({ batch: row.batchId, line: row.line, orderId: row.orderId, since: when }, 'order still not readable: marked for review');
      return;
    }
    rt.log.warn({ batch: row.batchId, line: row.line, orderId: row.orderId, why: coerceError(err).message }, 'order not readable while polling; will look again');
  }

  /** Applies a page of history to every processing row of ours it mentions, due or not. */
  #absorb(orders: readonly Order[], byId: Map<string, Row>, next: number, result: PollRound): void {
    const byOrder = new Map(orders.filter((o) => o.orderId !== undefined).map((o) => [o.orderId!, o]));
    const at = this.#rt.clock.now();
    for (const row of this.#rt.rows.processingByOrderIds([...byOrder.keys()], this.#only)) {
      const o = byOrder.get(row.orderId!)!;
      // History lists often leave codes out: a key order it shows completed without codes is read
      // with GET /orders/:id (if due now), and only that read counts towards "codes missing".
      if (o.status === 'completed' && needsCodes(row) && (o.codes?.length ?? 0) === 0) continue;
      byId.delete(row.orderId!);
      if (this.apply(row, o, next, { route: 'GET /history', status: 200, at, body: o.raw })) result.updated++;
    }
  }

  /**
   * History page (pageSize 50, from 1) each row should be on: its depth is at least the number
   * of orders we placed after it. Other clients of the same account only push it deeper, so a
   * row not found on its page is read with GET /orders/:id in the same round.
   */
  #pagesFor(rows: readonly Row[]): Set<number> {
    // Every row's depth from one ordered read (a count per row would read the history once per row).
    const depths = this.#rt.rows.placedAfter(rows.map((r) => r.firstSentAt ?? 0));
    return new Set(depths.map((depth) => Math.floor(depth / PAGE_SIZE) + 1));
  }
}
