/**
 * Edited re-drops are never bought twice. Resellers open a finished file, add a row or a
 * column, and drop it again: its bytes differ, so it is not a duplicate file, and every row
 * without its own trxid would get a new derived trxid and be bought again.
 *
 * So a row WITHOUT its own trxid that repeats a purchase (same pack, same player fields, same
 * quantity; case and spaces aside) placed by another batch within TOPUP_REPEAT_WINDOW (default
 * 24 h) is not bought: it is stored `skipped`, its error naming the earlier batch, line and order,
 * and `topup retry BATCH --repeats` buys exactly those rows on purpose. The other rows go ahead.
 *
 * "Another batch" is any batch opened before this one, whatever order the files were claimed in:
 * a file waiting for the catalog does not keep its place, so when its edited re-drop is stored
 * first, the re-drop buys and the waiting file skips (whichever opens first buys). The decision is
 * made in the very transaction that opens the batch (rows.skipRepeats), never while its rows are
 * read: two processes storing two edited copies at once both read before either opened, and both
 * would buy. A batch still being stored (`claimed`) has bought nothing yet and is not looked at.
 *
 * "Placed" means an order exists or may exist: rows pending or in flight in another batch,
 * followed, completed, in review, or cancelled WITHOUT a refund. A row that ended rejected,
 * invalid, skipped, or cancelled with its money back is not a purchase to protect: dropping it
 * again is how a reseller tries again.
 *
 * Rows with their own trxid keep the trxid rule (a used trxid is refused); a batch ordered again
 * on purpose (`topup submit --again`, `topup retry`) is not checked. Within one file, equal rows
 * are separate purchases (two top-ups for one player) and are not repeats of each other.
 */
import { createHash } from 'node:crypto';
import type { OrderRequest } from '../api/schemas.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import type { EarlierPurchase } from '../store/row-reads.js';

export { REPEAT_CODE } from '../store/rows.js';

const norm = (v: string | number | undefined): string => (v === undefined ? '' : String(v).trim().toLowerCase().replace(/\s+/g, ' '));

/** What makes two rows the same purchase, hashed: pack, player fields, quantity. */
export function purchaseFingerprint(request: Omit<OrderRequest, 'trxid'> & { trxid?: string }): string {
  const key = [request.pid, request.userId, request.zoneId, request.serverId, request.region, request.moreId, request.quantity ?? 1].map(norm).join('\u0000');
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

/** A batch ordered again on purpose: `topup submit --again` and `topup retry` salt its hash. */
export function orderedAgain(batch: Batch): boolean {
  return batch.origin === 'retry' || batch.contentHash.includes(':again:');
}

export type { EarlierPurchase } from '../store/row-reads.js';

/**
 * The earlier purchase this row would repeat, if any, for a dry run (topup validate, the console's
 * quote): a row of another stored batch within the window. The decision that counts is made when
 * the batch opens (rows.skipRepeats, in the opening transaction).
 */
export function findRepeat(rt: Runtime, fingerprint: string, now: number, batch?: Batch): EarlierPurchase | undefined {
  return rt.rows.earlierPurchase(fingerprint, batch?.id ?? '', now - rt.config.repeatWindowMs);
}

/** `batchId`: the batch the row is in (for the command that buys it again); none for a dry run. */
export function repeatMessage(e: EarlierPurchase, batchId?: string): string {
  const order = e.orderId ? `order ${e.orderId}, ${e.state}` : e.state;
  const how = batchId
    ? `To buy it again on purpose: topup retry ${batchId} --repeats (or give the row its own trxid)`
    : 'Give the row its own trxid to buy it again, or it will be skipped';
  return `repeats line ${e.line} of batch ${e.batchId} (${e.file}; ${order}, ${new Date(e.at).toISOString()}): not bought again. ${how}`;
}
