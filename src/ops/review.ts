/**
 * An operator's decision on a review row (`topup review resolve`), through the same store
 * operation the recheck uses (store/settle.ts: the row settled and its batch reopened in one
 * transaction), recorded with who and when:
 *  - `--not-charged`: nothing was bought for it. The row ends `rejected` (so `topup retry` may
 *    buy it again, with a new trxid), its error saying who decided, when, and why it was in review.
 *  - `--charged ORDER_ID`: this order is the row's purchase. The order is read from the API and
 *    compared with the row (dispatch/order-match.ts); a final order settles the row at once, a processing
 *    one is followed by the daemon. An order the API does not know, one that is another purchase,
 *    or an API that cannot be reached, is refused unless `--force`: then the row is recorded as
 *    completed with that order id, saying the API did not confirm it.
 * The batch is reopened and its results written again as the next version, to the one file
 * <name>.reviewed.result.csv (never over the first result: outbox/paths.ts): here at once when
 * nothing is left to follow, else by the daemon once the order ends.
 */
import { Priority } from '../api/client.js';
import { auditCopy } from '../api/audit.js';
import type { Order } from '../api/schemas.js';
import { ApiError, ApiResponseShapeError, NotFoundError, UsageError, coerceError } from '../kernel/errors.js';
import { finishBatch } from '../outbox/finish.js';
import type { BatchSummary } from '../outbox/summary.js';
import type { Runtime } from '../runtime.js';
import { LIVE_STATES, type OrderFacts, type Row } from '../store/rows.js';
import { describeMismatches, factsFor, mismatches, needsCodes } from '../dispatch/order-match.js';
import { withOwnLease } from './lease.js';
import { settleAndReopen } from '../store/settle.js';

export interface ResolveRequest {
  batchId: string;
  line: number;
  /** The order the operator says this row bought; omitted with notCharged. */
  chargedOrderId?: string;
  notCharged?: boolean;
  by: string;
  force?: boolean;
}

export interface ResolveResult {
  row: Row;
  /** The result written again at once, or null when the daemon follows a processing order first. */
  summary: BatchSummary | null;
}

export async function resolveReview(rt: Pick<Runtime, 'account' | 'accounts' | 'accountOf' | 'batches' | 'clock' | 'config' | 'db' | 'log' | 'owner' | 'rows'>, req: ResolveRequest): Promise<ResolveResult> {
  if ((req.chargedOrderId === undefined) === (req.notCharged !== true)) {
    throw new UsageError('say what happened: --charged ORDER_ID or --not-charged');
  }
  const row = rt.rows.byLine(req.batchId, req.line);
  if (!row) throw new NotFoundError(`batch ${req.batchId} has no row at line ${req.line} (see topup review)`);
  if (row.state !== 'review' || row.resolution !== null) {
    throw new UsageError(`line ${req.line} of batch ${req.batchId} is not waiting for review (it is ${row.state}${row.resolution ? `, resolved as ${row.resolution}` : ''})`);
  }
  const now = rt.clock.now();
  const at = new Date(now).toISOString();
  const resolution = { by: req.by, at: now };
  // The row and its batch's reopening in one transaction (store/settle.ts).
  let ok: boolean;
  if (req.notCharged) {
    ({ settled: ok } = settleAndReopen(
      rt,
      row.batchId,
      row.idx,
      { state: 'rejected', error: `NOT CHARGED (resolved by ${req.by} on ${at}); it was in review: ${row.error ?? ''}`.trim(), note: null },
      { kind: 'not-charged', ...resolution },
      null,
    ));
  } else {
    const { facts, note, answer } = await chargedFacts(rt, row, req.chargedOrderId!, req.force === true, req.by, at);
    ({ settled: ok } = settleAndReopen(
      rt,
      row.batchId,
      row.idx,
      { state: facts.status, order: facts, error: facts.status === 'cancelled' ? (facts.error ?? null) : null, note },
      { kind: 'charged', ...resolution },
      answer,
    ));
  }
  if (!ok) throw new UsageError(`line ${req.line} of batch ${req.batchId} changed while deciding (another process settled it); look again with topup review`);
  rt.log.info({ batch: row.batchId, line: row.line, by: req.by, resolution: req.notCharged ? 'not-charged' : 'charged', orderId: req.chargedOrderId }, 'review row resolved');
  return { row: rt.rows.get(row.batchId, row.idx)!, summary: await finishIfIdle(rt, row.batchId) };
}

async function chargedFacts(rt: Pick<Runtime, 'accountOf' | 'rows'>, row: Row, typedId: string, force: boolean, by: string, at: string): Promise<{ facts: OrderFacts; note: string; answer: string | null }> {
  // The row's own account: an order id means an order only at the account that numbered it.
  const account = rt.accountOf(row.account);
  // An id copied from a web page or a spreadsheet cell brings invisible white space (a
  // non-breaking space, a tab) that SQL's trim() keeps: trimmed here, once, for every use below
  // (an adversarial review: the held-order check missed ORD-77\u00a0 and --force took it).
  const orderId = typedId.trim();
  if (orderId === '') throw new UsageError('the order id is empty');
  // An order another row holds is never this row's, --force or not: under the id typed, and
  // under the id the API answers with (a supplier reaches one order by more than one id: the
  // panel's ORD… and the API's numeric id; an adversarial review settled a review row with the
  // order another row held, one charge for two "completed" rows).
  const refuseHeld = (id: string, as = ''): void => {
    const holder = rt.rows.placedBy(id, row.account);
    if (holder && !(holder.batchId === row.batchId && holder.idx === row.idx)) {
      throw new UsageError(`order ${orderId}${as} already belongs to batch ${holder.batchId}, line ${holder.line}`);
    }
  };
  refuseHeld(orderId);
  let order: (Order & { answer: ApiError['answer'] }) | undefined;
  let why: string | undefined;
  try {
    order = await account.client.getOrder(orderId, { priority: Priority.lookup });
  } catch (err) {
    if (err instanceof ApiResponseShapeError && err.aboutOrder !== undefined) refuseHeld(err.aboutOrder, ` (the API answers with order ${err.aboutOrder})`);
    if (err instanceof ApiError && err.classification === 'not-found') why = `the API does not know order ${orderId}`;
    else why = `the API could not be asked about order ${orderId} (${coerceError(err).message})`;
  }
  if (order?.orderId !== undefined) refuseHeld(order.orderId, ` (the API answers with order ${order.orderId})`);
  if (order) {
    const wrong = mismatches(row, order, account.catalog.gameNamesOf(row));
    if (wrong.length > 0) why = `order ${orderId} is another purchase (${describeMismatches(wrong)})`;
  }
  if (why !== undefined && !force) throw new UsageError(`${why}; check the id, or record it anyway with --force`);
  if (order && why === undefined) {
    // The API's own spelling of the id: the one later polls and history name.
    const { facts } = factsFor(row, { ...order, orderId: order.orderId ?? orderId });
    if (!order.statusKnown) facts.status = 'processing';
    return { facts, note: `charged: order ${orderId} named by ${by} on ${at}, confirmed by the API (${order.statusWord ?? order.status})`, answer: auditCopy(order.answer) };
  }
  // A key/card row recorded this way has no codes: said as every completed row without its codes
  // is (results, summary), so nobody hands out nothing (found by the simulator: a forced resolution
  // completed a card row silently).
  const codes = needsCodes(row) ? 'CODES MISSING: recorded without the API\'s codes; ask the supplier for them. ' : '';
  return {
    facts: { orderId: order?.orderId ?? orderId, status: 'completed', amountUsd: row.expectedUsd ?? undefined },
    note: `${codes}charged: order ${orderId} recorded by ${by} on ${at} WITHOUT confirmation from the API (${why})`,
    answer: null,
  };
}

/**
 * Writes the batch's next result version now, if nothing is left to follow and no process holds
 * it: under a lease of this action's own (ops/lease.ts), given back alone, so a daemon's runner
 * beside it keeps every batch it drives.
 */
async function finishIfIdle(rt: Pick<Runtime, 'account' | 'accounts' | 'accountOf' | 'batches' | 'clock' | 'config' | 'db' | 'log' | 'owner' | 'rows'>, batchId: string): Promise<BatchSummary | null> {
  const counts = rt.rows.counts(batchId);
  if (LIVE_STATES.some((st) => counts[st] > 0)) return null;
  return withOwnLease(rt, batchId, async () => {
    const batch = rt.batches.get(batchId)!;
    if (batch.state !== 'open') return null;
    return finishBatch(rt, batch);
  });
}
