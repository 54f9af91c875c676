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
 * on purpose (`topup submit --again`, `topup retry --repeats`) is not checked; an ordinary
 * `topup retry` is (orderedAgain). Within one file, equal rows
 * are separate purchases (two top-ups for one player) and are not repeats of each other.
 */
import { createHash } from 'node:crypto';
import type { OrderRequest } from '../api/schemas.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import type { EarlierPurchase } from '../store/row-reads.js';
import { mapHeader } from '../intake/columns.js';
import { isPlayerIdFailure } from '../api/classify.js';

export { REPEAT_CODE } from '../store/rows.js';

const norm = (v: string | number | undefined): string => (v === undefined ? '' : String(v).trim().toLowerCase().replace(/\s+/g, ' '));

/** What makes two rows the same purchase, hashed: pack, player fields, quantity. */
export function purchaseFingerprint(request: Omit<OrderRequest, 'trxid'> & { trxid?: string }): string {
  const key = [request.pid, request.userId, request.zoneId, request.serverId, request.region, request.moreId, request.quantity ?? 1].map(norm).join('\u0000');
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

/**
 * A batch that buys again on purpose, so no repeat check: `topup submit --again`, and
 * `topup retry --repeats` (it buys the rows skipped as repeats). An ordinary `topup retry` is NOT:
 * it tries again purchases that were not bought (refused, refunded, cancelled before they were
 * sent), and one of them may have been bought since by another batch, say an edited re-drop of the
 * same file (found by the simulator: a retry of a cancelled batch and the re-drop both bought).
 */
export function orderedAgain(batch: Batch): boolean {
  if (batch.origin === 'retry') return batch.retryOf === null;
  return batch.contentHash.includes(':again:');
}

/**
 * Whether a row of this batch is checked against earlier purchases: rows without their own trxid,
 * and every row of an ordinary retry (its trxids are new ones the retry gave, not the reseller's).
 */
export function checksRepeat(batch: Batch, givenTrxid: string | undefined): boolean {
  return givenTrxid === undefined || (batch.origin === 'retry' && batch.retryOf !== null);
}

export type { EarlierPurchase } from '../store/row-reads.js';

/** A row as its file has it: the header and the row's cells (the reseller's own columns among them). */
export interface RowInFile {
  header: readonly string[];
  cells: readonly string[];
}

const nameKey = (h: string): string => h.trim().toLowerCase().replace(/[\s_.-]+/g, '');

/** The file's own columns (not read as an order field), by normalised name → index. */
function ownColumns(header: readonly string[]): Map<string, number> {
  const fields = new Set<number>();
  try {
    for (const i of Object.values(mapHeader([...header]).fields)) if (i !== undefined) fields.add(i);
  } catch {
    // A header that cannot be read has no columns to compare.
  }
  const own = new Map<string, number>();
  header.forEach((h, i) => {
    const k = nameKey(h);
    if (k !== '' && !fields.has(i) && !own.has(k)) own.set(k, i);
  });
  return own;
}

/**
 * The reseller's own columns both files have (a Customer, an Order No, a note): equal in every one
 * (spaces and case aside), or there is none to compare. A column the re-drop added is not shared,
 * so an edited copy still repeats; the afternoon's file of new customers differs in them.
 */
function sameOwnColumns(mine: RowInFile, earlier: RowInFile): { same: boolean; shared: number } {
  const a = ownColumns(mine.header);
  const b = ownColumns(earlier.header);
  let shared = 0;
  for (const [k, i] of a) {
    const j = b.get(k);
    if (j === undefined) continue;
    shared++;
    if (norm(mine.cells[i] ?? '') !== norm(earlier.cells[j] ?? '')) return { same: false, shared };
  }
  return { same: true, shared };
}

/**
 * Is `e` a purchase that `mine` repeats? One rule, for the opening's decision (load.ts, in the
 * transaction that opens the batch) and the dry run's (topup validate, the console's quote):
 *  - `e` is a purchase an order exists or may exist for: not sent yet or in flight in its batch,
 *    followed, completed, in review, or cancelled WITHOUT a refund; and, like topup retry, a row
 *    cancelled for its player id (the same id fails again: fix it, or buy it on purpose with
 *    `topup retry BATCH --include-player-failures` or `--repeats`). Rejected, invalid, skipped, or
 *    cancelled with the money back are not: dropping them again is how a reseller tries again;
 *  - and the reseller's own columns both files have are the same (sameOwnColumns).
 */
export function repeatOf(mine: RowInFile, earlier: readonly EarlierPurchase[]): { e: EarlierPurchase; shared: number } | undefined {
  for (const e of earlier) {
    const purchase =
      ['pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen', 'completed', 'review'].includes(e.state) ||
      (e.state === 'cancelled' && (e.refunded !== true || isPlayerIdFailure(e.error)));
    if (!purchase) continue;
    const cols = sameOwnColumns(mine, e);
    if (cols.same) return { e, shared: cols.shared };
  }
  return undefined;
}

/**
 * The earlier purchase this row would repeat, if any, for a dry run (topup validate, the console's
 * quote). The decision that counts is made when the batch opens (skipRepeats).
 */
export function findRepeat(rt: Pick<Runtime, 'config' | 'rows'>, fingerprint: string, mine: RowInFile, now: number): { e: EarlierPurchase; shared: number } | undefined {
  return repeatOf(mine, rt.rows.earlierRows(fingerprint, '', now - rt.config.repeatWindowMs));
}

/**
 * Inside the transaction that opens the batch (load.ts): skips every row that repeats an earlier
 * purchase (store/rows.ts skipAsRepeat; store/invariants.ts). Returns how many.
 */
export function skipRepeats(rt: Pick<Runtime, 'rows'>, batch: Batch, header: readonly string[], since: number, now: number): number {
  let n = 0;
  for (const c of rt.rows.repeatCandidates(batch.id, since, batch.retryOf)) {
    const found = repeatOf({ header, cells: c.cells }, rt.rows.earlierRows(c.fingerprint, batch.id, since, batch.retryOf));
    if (found && rt.rows.skipAsRepeat(batch.id, c.idx, now, repeatMessage(found.e, { batchId: batch.id, card: isCardCells(header, c.cells), shared: found.shared }))) n++;
  }
  return n;
}

/** A key/card row: it has a quantity and no player (nothing but the pack and quantity tells purchases apart). */
function isCardCells(header: readonly string[], cells: readonly string[]): boolean {
  try {
    const f = mapHeader([...header]).fields;
    return f.userId === undefined || (cells[f.userId] ?? '').trim() === '';
  } catch {
    return false;
  }
}

/**
 * Why a row is not bought. `batchId`: the batch the row is in (for the command that buys it
 * again); none for a dry run. A key/card row repeated by pack and quantity alone, with no own
 * column of the reseller's to tell customers apart, says so: a new customer's card needs a trxid.
 */
export function repeatMessage(e: EarlierPurchase, opts: { batchId?: string; card?: boolean; shared?: number } = {}): string {
  const order = e.orderId ? `order ${e.orderId}, ${e.state}` : e.state;
  const player = e.state === 'cancelled' && isPlayerIdFailure(e.error) ? ` It was cancelled for its player id (${e.error}): the same id fails again; fix it in the file.` : '';
  const apart = opts.card && !opts.shared
    ? ' Nothing but the pack and quantity tells this key/card row from that purchase: if it is a new customer\'s, give the row its own trxid (or a column such as Customer or Order No).'
    : '';
  const how = opts.batchId
    ? ` To buy it again on purpose: topup retry ${opts.batchId} --repeats (or give the row its own trxid)`
    : ' Give the row its own trxid to buy it again, or it will be skipped';
  return `repeats line ${e.line} of batch ${e.batchId} (${e.file}; ${order}, ${new Date(e.at).toISOString()}): not bought again.${player}${apart}${how}`;
}
