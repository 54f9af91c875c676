/**
 * Review rows are not final answers, only undecided ones. For TOPUP_REVIEW_RECHECK_DAYS after a
 * row entered review (default 7), it is looked for again now and then: a row with an order id by
 * GET /orders/:id, a row without one by its own trxid in GET /history (one call serves every such
 * row). When its order appears, and it is the row's purchase (dispatch/order-match.ts), the row settles
 * (`resolution = found`): final rows at once, a processing order followed by the poller. Its batch
 * is reopened, in the same transaction (store/settle.ts), so its results are written again as the
 * next version (never over the first).
 *
 * Cadence: every 15 minutes in the first day, then every 2 hours; reports-level priority, so it
 * never takes budget from orders or polls. Nothing is sent: only reads.
 */
import { Priority } from '../api/client.js';
import { auditCopy } from '../api/audit.js';
import type { History, Order } from '../api/schemas.js';
import { ApiError, coerceError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import { FOREIGN_ORDER_CODE, type Row } from '../store/rows.js';
import { settleAndReopen } from '../store/settle.js';
import { factsFor, foreignOrderProblem, mismatches, mustProve, originOf, serverOffset } from '../dispatch/order-match.js';
import { trxidKey } from '../kernel/identity.js';

const EARLY_MS = 15 * 60_000;
const LATER_MS = 2 * 3_600_000;
const DAY_MS = 86_400_000;
const PER_TICK = 20;

export function nextRecheck(row: Row, now: number): number {
  const since = row.reviewSince ?? row.updatedAt;
  return now + (now - since < DAY_MS ? EARLY_MS : LATER_MS);
}

/** What rechecking review rows touches: the store (a found row settles and its batch reopens, store/settle.ts), the account's client and catalog, settings, log, clock. */
type RecheckParts = Pick<Runtime, 'accountOf' | 'batches' | 'clock' | 'config' | 'db' | 'log' | 'rows'>;

export class ReviewRecheck {
  readonly #rt: RecheckParts;
  /** A 401/403 from an account: it pauses that account (the runner's), and its rows wait for the next round. */
  readonly #onAccountProblem: (err: ApiError, account: string) => void;
  constructor(rt: RecheckParts, onAccountProblem: (err: ApiError, account: string) => void = (err) => { throw err; }) {
    this.#rt = rt;
    this.#onAccountProblem = onAccountProblem;
  }

  #windowStart(now: number): number {
    return now - this.#rt.config.reviewRecheckMs;
  }

  nextDueAt(now = this.#rt.clock.now()): number | undefined {
    if (this.#rt.config.reviewRecheckMs === 0) return undefined;
    return this.#rt.rows.nextReviewCheckAt(this.#windowStart(now));
  }

  /** One round over the due review rows. Returns how many settled. */
  async tick(now = this.#rt.clock.now(), signal?: AbortSignal): Promise<number> {
    const rt = this.#rt;
    if (rt.config.reviewRecheckMs === 0) return 0;
    const due = rt.rows.dueReviews(this.#windowStart(now), now, PER_TICK);
    if (due.length === 0) return 0;
    const opts = { priority: Priority.report, ...(signal ? { signal } : {}) };
    // Each account's history is read once a round, and only for that account's rows.
    const histories = new Map<string, History>();
    const troubled = new Set<string>();
    // The rows not settled this round, written together when the round ends (rows.scheduleReviewChecks).
    const later: { batchId: string; idx: number; at: number; answer: string | null }[] = [];
    const lookAgain = (row: Row, answer: string | null): void => {
      later.push({ batchId: row.batchId, idx: row.idx, at: nextRecheck(row, rt.clock.now()), answer });
    };
    let settled = 0;
    try {
      for (const row of due) {
        if (troubled.has(row.account)) {
          lookAgain(row, null);
          continue;
        }
        const account = rt.accountOf(row.account);
        try {
          let order: Order | undefined;
          let copy: string | null = null;
          if (row.orderId !== null) {
            try {
              const o = await account.client.getOrder(row.orderId, opts);
              order = o;
              copy = auditCopy(o.answer);
            } catch (err) {
              if (!(err instanceof ApiError && err.classification === 'not-found')) throw err;
            }
          } else if (row.trxid !== null && row.rejectCode !== FOREIGN_ORDER_CODE) {
            // (A row whose trxid the API tied to an order its sends did not make is never looked up
            // by it: that lookup can only find the same foreign order again.)
            let history = histories.get(row.account);
            if (!history) histories.set(row.account, (history = await account.client.history({ limit: 200, partial: true }, opts)));
            const trxid = trxidKey(row.trxid);
            order = history.orders.find((o) => o.trxid !== undefined && trxidKey(o.trxid) === trxid);
            if (order) copy = auditCopy({ route: 'GET /history', status: 200, at: rt.clock.now(), body: order.raw });
          }
          if (order && this.#settle(row, order, copy)) settled++;
          else lookAgain(row, copy);
        } catch (err) {
          if (signal?.aborted) throw err;
          lookAgain(row, null);
          if (err instanceof ApiError && err.classification === 'account') {
            troubled.add(row.account);
            this.#onAccountProblem(err, row.account);
            continue;
          }
          rt.log.debug({ batch: row.batchId, line: row.line, err: coerceError(err).message }, 'review recheck could not read the API');
        }
      }
    } finally {
      // Also when the round is cut short (shutdown, an account problem thrown): what was looked at waits its turn.
      rt.rows.scheduleReviewChecks(later);
    }
    return settled;
  }

  /** The order was found: settle the row if it is this row's purchase and its status is known. */
  #settle(row: Row, order: Order, copy: string | null): boolean {
    const rt = this.#rt;
    if (order.orderId === undefined || !order.statusKnown) return false;
    const account = rt.accountOf(row.account);
    const names = account.catalog.gameNamesOf(row);
    if (mismatches(row, order, names).length > 0) return false;
    // Made before the row's first send (another purchase under its trxid), or not known when under
    // a trxid the file gave: the same proof as the sender's and the history check's (dispatch/order-match.ts).
    const came = row.orderId === null ? 'history' : 'fresh';
    if (mustProve(row, originOf(order, row.firstSentAt, came, serverOffset(account.lastServerDate))) && foreignOrderProblem(row, order, names) !== null) return false;
    if (row.orderId === null && rt.rows.isOrderIdKnown(order.orderId, row.account)) return false;
    const now = rt.clock.now();
    const { facts, awaitingCodes } = factsFor(row, order as Order & { orderId: string });
    const note = `found by the review recheck on ${new Date(now).toISOString()}: order ${order.orderId} (${order.statusWord ?? order.status})`;
    // The row and its batch's reopening in one transaction (store/settle.ts).
    const { settled, reopened } = settleAndReopen(
      rt,
      row.batchId,
      row.idx,
      { state: facts.status, order: facts, error: facts.status === 'cancelled' ? (facts.error ?? row.error) : null, note: awaitingCodes ? `${note}; codes not delivered yet` : note },
      { kind: 'found', by: 'topup review recheck', at: now },
      copy,
    );
    if (!settled) return false;
    rt.log.warn(
      { batch: row.batchId, line: row.line, orderId: order.orderId, status: facts.status, newResultVersion: reopened },
      'a review row\'s order appeared: settled; the batch results are written again as a new version',
    );
    return true;
  }
}
