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
 * `topup retry` is (orderedAgain). Within one file, equal rows are separate purchases (two
 * top-ups for one player): each earlier purchase is repeated by one row at most. Which purchase a
 * row repeats, and what tells a key/card row's customers apart: RepeatMatcher.
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
 * A cell as compared: case and spaces aside, and a date or time by its numbers alone, so
 * "2026-11-26 09:14" and "26.11.2026 09:14" (Excel re-saving in another locale) are the same
 * value (an adversarial review: the re-drop of a re-saved file read as new customers). A value
 * of three or more numbers and nothing but separators between them counts as a date.
 */
function cellKey(v: string): string {
  const n = norm(v);
  if (/^[\d\s./:T-]+$/i.test(n)) {
    const nums = n.match(/\d+/g) ?? [];
    if (nums.length >= 3) return `#${nums.map(Number).sort((a, b) => a - b).join(',')}`;
  }
  return n;
}

/**
 * What tells a key/card row's purchase apart: its own columns with a value (name → cell key). A
 * column numbering the rows (its value is the row's position: 1, 2, 3 …) is left out: inserting
 * a row renumbers every row below it (an adversarial review's finding).
 */
function identity(header: readonly string[], cells: readonly string[], line: number | undefined, own = ownColumns(header)): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, i] of own) {
    const v = (cells[i] ?? '').trim();
    if (v === '') continue;
    if (line !== undefined && /^\d+$/.test(v) && [line - 1, line].includes(Number(v))) continue;
    out.set(k, cellKey(v));
  }
  return out;
}

/** Whether a row has a player (a top-up): its player fields identify the purchase. Else a key/card row. */
export function hasPlayer(header: readonly string[], cells: readonly string[]): boolean {
  try {
    const f = mapHeader([...header]).fields;
    return [f.userId, f.zoneId, f.serverId, f.moreId].some((i) => i !== undefined && (cells[i] ?? '').trim() !== '');
  } catch {
    return false;
  }
}

/**
 * Is `e` a purchase an order exists or may exist for? Not sent yet or in flight in its batch,
 * followed, completed, in review, or cancelled WITHOUT a refund; and, like topup retry, a row
 * cancelled for its player id (the same id fails again: fix it, or buy it on purpose with
 * `topup retry BATCH --include-player-failures` or `--repeats`). Rejected, invalid, skipped, or
 * cancelled with the money back are not: dropping them again is how a reseller tries again.
 */
function isPurchase(e: EarlierPurchase): boolean {
  return (
    ['pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen', 'completed', 'review'].includes(e.state) ||
    (e.state === 'cancelled' && (e.refunded !== true || isPlayerIdFailure(e.error)))
  );
}

/** A row as its file has it: the header, the row's cells (the reseller's own columns among them), its line. */
export interface RowInFile {
  header: readonly string[];
  cells: readonly string[];
  line?: number;
}

/** A list read front to back, skipping what was taken. */
class Queue {
  readonly #items: EarlierPurchase[] = [];
  #at = 0;
  push(e: EarlierPurchase): void {
    this.#items.push(e);
  }
  first(taken: ReadonlySet<EarlierPurchase>): EarlierPurchase | undefined {
    while (this.#at < this.#items.length && taken.has(this.#items[this.#at]!)) this.#at++;
    return this.#items[this.#at];
  }
}

/**
 * The earlier purchases of one fingerprint, each repeated by at most one row: a re-drop with one
 * more equal row than purchases made buys that one (equal rows in one file are separate
 * purchases; an adversarial review: both were skipped, and `--repeats` would have bought both).
 * Which purchase a row repeats:
 *  - a top-up (a player): any. The player and the pack are the purchase; the reseller's own
 *    columns change between two saves of one file (a row number shifted, a Status filled in, a
 *    date re-saved), and reading such a change as a new purchase bought every player again (an
 *    adversarial review). A second top-up for the same player within the window is skipped and
 *    says how to buy it on purpose: never bought twice by accident.
 *  - a key/card row (no player): one whose own columns with a value, where both files have the
 *    column, share at least one value (the same Customer, the same Order No), or that has no such
 *    column in common with it (nothing tells them apart: validate says to give the row a trxid).
 *    The afternoon file of new customers differs in every shared column and is bought.
 * Indexed (by column value, and by which columns have a value) so a day of thousands of cards of
 * one pack costs a lookup per row, not a scan.
 */
export class RepeatMatcher {
  readonly #taken = new Set<EarlierPurchase>();
  readonly #all = new Queue();
  /** `column\0value` → purchases with that value there. */
  readonly #byValue = new Map<string, Queue>();
  /** The columns with a value, joined → purchases with exactly those. */
  readonly #byColumns = new Map<string, { columns: string[]; q: Queue }>();
  /** Shared-column counts for the message, per purchase. */
  readonly #identity = new Map<EarlierPurchase, Map<string, string>>();

  constructor(earlier: readonly EarlierPurchase[]) {
    const owns = new Map<readonly string[], Map<string, number>>();
    for (const e of earlier) {
      if (!isPurchase(e)) continue;
      this.#all.push(e);
      let own = owns.get(e.header);
      if (!own) owns.set(e.header, (own = ownColumns(e.header)));
      const id = identity(e.header, e.cells, e.line, own);
      this.#identity.set(e, id);
      for (const [k, v] of id) {
        const key = `${k}\u0000${v}`;
        let q = this.#byValue.get(key);
        if (!q) this.#byValue.set(key, (q = new Queue()));
        q.push(e);
      }
      const columns = [...id.keys()].sort();
      const ck = columns.join('\u0000');
      let g = this.#byColumns.get(ck);
      if (!g) this.#byColumns.set(ck, (g = { columns, q: new Queue() }));
      g.q.push(e);
    }
  }

  /** The purchase `mine` repeats (taken: no other row repeats it), with how many own columns the two share. */
  take(mine: RowInFile): { e: EarlierPurchase; shared: number } | undefined {
    const found = this.#find(mine);
    if (!found) return undefined;
    this.#taken.add(found.e);
    return found;
  }

  #find(mine: RowInFile): { e: EarlierPurchase; shared: number } | undefined {
    const id = identity(mine.header, mine.cells, mine.line);
    const shared = (e: EarlierPurchase): number => [...id.keys()].filter((k) => this.#identity.get(e)?.has(k)).length;
    if (hasPlayer(mine.header, mine.cells)) {
      const e = this.#all.first(this.#taken);
      return e ? { e, shared: shared(e) } : undefined;
    }
    // The same customer (or order number): a value they share.
    for (const [k, v] of id) {
      const e = this.#byValue.get(`${k}\u0000${v}`)?.first(this.#taken);
      if (e) return { e, shared: shared(e) };
    }
    // Nothing to tell them apart: no column with a value in both.
    for (const g of this.#byColumns.values()) {
      if (g.columns.some((k) => id.has(k))) continue;
      const e = g.q.first(this.#taken);
      if (e) return { e, shared: 0 };
    }
    return undefined;
  }
}

/**
 * The earlier purchases a dry run's rows repeat (topup validate, the console's quote), as the load
 * decides them: one matcher per fingerprint, so equal rows take one purchase each. The decision
 * that counts is made when the batch opens (skipRepeats).
 */
export function repeatFinder(rt: Pick<Runtime, 'config' | 'rows'>, now: number): (fingerprint: string, mine: RowInFile) => { e: EarlierPurchase; shared: number } | undefined {
  const matchers = new Map<string, RepeatMatcher>();
  return (fingerprint, mine) => {
    let m = matchers.get(fingerprint);
    if (!m) matchers.set(fingerprint, (m = new RepeatMatcher(rt.rows.earlierRows(fingerprint, '', now - rt.config.repeatWindowMs))));
    return m.take(mine);
  };
}

/**
 * Inside the transaction that opens the batch (load.ts): skips every row that repeats an earlier
 * purchase (store/rows.ts skipAsRepeat; store/invariants.ts). Returns how many.
 */
export function skipRepeats(rt: Pick<Runtime, 'rows'>, batch: Batch, header: readonly string[], since: number, now: number): number {
  const chain = rt.rows.retryChain(batch.retryOf);
  const matchers = new Map<string, RepeatMatcher>();
  let n = 0;
  for (const c of rt.rows.repeatCandidates(batch.id, since, chain)) {
    let m = matchers.get(c.fingerprint);
    if (!m) matchers.set(c.fingerprint, (m = new RepeatMatcher(rt.rows.earlierRows(c.fingerprint, batch.id, since, chain))));
    const found = m.take({ header, cells: c.cells, line: c.line });
    if (found && rt.rows.skipAsRepeat(batch.id, c.idx, now, repeatMessage(found.e, { batchId: batch.id, card: !hasPlayer(header, c.cells), shared: found.shared }))) n++;
  }
  return n;
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
