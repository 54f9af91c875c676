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
import type { RowState } from '../store/row-states.js';
import type { EarlierPurchase } from '../store/repeat-reads.js';
import { QUANTITY_IF_WHOLE, headerKey, mapHeader, type OrderField } from '../intake/columns.js';
import { isPlayerIdFailure } from '../api/classify.js';
import { readCell, sameCell, type Cell } from './cell-compare.js';

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

export type { EarlierPurchase } from '../store/repeat-reads.js';

/** Order fields that make the purchase (they are in its fingerprint), never what tells customers apart. */
const PURCHASE_FIELDS: readonly OrderField[] = ['pid', 'slug', 'pack', 'trxid', 'quantity', 'maxPriceUsd'];
/** Amount / Count: the quantity when the rows show they are one (intake/column-report.ts), never a customer. */
const MAYBE_QUANTITY = new Set(QUANTITY_IF_WHOLE.map(headerKey));
/** Names of a column numbering the rows (its value follows the line: inserting a row renumbers every row below). */
const ROW_NUMBER_NAMES = new Set([
  '#', 'no', 'nr', 'n', 'nº', 'no#', 'num', 'number', 'row', 'row#', 'rowno', 'rownumber', 'line', 'lineno', 'linenumber', 'index', 'idx',
  'sn', 's/n', 'sno', 'srno', 'slno', 'sl', 'serial', 'serialno', 'seq', 'seqno', 'sequence', 'item', 'itemno', 'pos', 'position',
  'nomor', 'no urut', 'nourut', 'urut', 'lfdnr', 'nummer', 'numero', 'número', 'nro',
].map(headerKey));
/**
 * Names of a column of the reseller's progress and remarks: it changes between two saves of one
 * file (paid → sent, a note added) and never tells customers apart (an adversarial review: a
 * Status updated between saves bought every card again).
 */
const PROGRESS_NAMES = new Set([
  'status', 'state', 'stage', 'progress', 'delivered', 'delivery', 'deliverystatus', 'sent', 'done', 'paid', 'payment', 'paymentstatus',
  'checked', 'check', 'ok', 'tick', 'flag', 'processed', 'result', 'note', 'notes', 'comment', 'comments', 'remark', 'remarks', 'memo',
  'info', 'keterangan', 'catatan', 'estado', 'bemerkung', 'notiz', 'statut',
].map(headerKey));

/**
 * The columns that may tell a key/card row's customer apart, by header key → index: every
 * column but the purchase's own fields and Amount/Count. The player fields stay in: on a card
 * pack they are not sent, and their cells are the reseller's record of who it was for (an
 * adversarial review: a card row with a userId cell was read as a top-up).
 */
function identityColumns(header: readonly string[]): Map<string, number> {
  const purchase = new Set<number>();
  try {
    const f = mapHeader([...header]).fields;
    for (const k of PURCHASE_FIELDS) if (f[k] !== undefined) purchase.add(f[k]!);
  } catch {
    // A header that cannot be read has no columns to compare.
  }
  const out = new Map<string, number>();
  header.forEach((h, i) => {
    // A column without a heading is still the reseller's (carol and dave in it are two customers):
    // named by its position (an adversarial review: blank-headed customer columns were ignored).
    const k = headerKey(h) || `#col${i + 1}`;
    if (!purchase.has(i) && !MAYBE_QUANTITY.has(k) && !PROGRESS_NAMES.has(k) && !out.has(k)) out.set(k, i);
  });
  return out;
}

/** A row's identity: its identity columns with a value (header key → cell). */
type Identity = Map<string, Cell>;

function identity(header: readonly string[], cells: readonly string[], line: number | undefined, cols = identityColumns(header)): Identity {
  const out: Identity = new Map();
  for (const [k, i] of cols) {
    const raw = (cells[i] ?? '').trim();
    // A row-number column: its value follows the line (found by an adversarial review: a row
    // inserted at the top renumbered the rows below). Named as one and holding this line's number.
    if (line !== undefined && (ROW_NUMBER_NAMES.has(k) || k.startsWith('#col')) && /^\d+$/.test(raw) && [line - 1, line].includes(Number(raw))) continue;
    const c = readCell(raw);
    if (c) out.set(k, c);
  }
  return out;
}

/** Whether a purchase is a top-up (it names a player): its player fields identify it. Else a key/card purchase. */
export function isTopUp(request: Pick<OrderRequest, 'userId' | 'zoneId' | 'serverId' | 'moreId'> | null | undefined): boolean {
  return request != null && [request.userId, request.zoneId, request.serverId, request.moreId].some((x) => x !== undefined && x !== null && String(x).trim() !== '');
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

/** A row as its file has it: the header, the row's cells (the reseller's own columns among them), its line; `topUp`: its request names a player. */
export interface RowInFile {
  header: readonly string[];
  cells: readonly string[];
  line?: number;
  topUp: boolean;
}

/** Purchases in their order, read front to back past those taken. */
class Queue {
  readonly items: EarlierPurchase[] = [];
  #at = 0;
  push(e: EarlierPurchase): void {
    this.items.push(e);
  }
  /** Up to `limit` untaken purchases from the first untaken on. */
  *untaken(taken: ReadonlySet<EarlierPurchase>, limit = Infinity): Generator<EarlierPurchase> {
    while (this.#at < this.items.length && taken.has(this.items[this.#at]!)) this.#at++;
    let n = 0;
    for (let i = this.#at; i < this.items.length && n < limit; i++) {
      const e = this.items[i]!;
      if (taken.has(e)) continue;
      n++;
      yield e;
    }
  }
}

/** How far a partial match looks into one value's purchases: past it, a row is bought rather than stall the transaction that opens the batch. */
const PARTIAL_SCAN = 256;

export interface RepeatFound {
  e: EarlierPurchase;
  /** How many identity columns with a value the two share. */
  shared: number;
}

/**
 * The earlier purchases of one fingerprint, each repeated by at most one row (equal rows in one
 * file are separate purchases: a re-drop with one more equal row buys that one). Which one a row
 * repeats:
 *  - a top-up (its request names a player): any. The player and the pack are the purchase; the
 *    reseller's own columns change between two saves of one file (a row number shifted, a Status
 *    filled in, a date re-saved), and reading such a change as a new purchase bought every player
 *    again (an adversarial review). A second top-up of the pack for the same player in a later
 *    file is skipped and says how to buy it on purpose: never bought twice by accident.
 *  - a key/card row: one whose identity columns (identityColumns) agree with it wherever both have
 *    a value, and that shares at least one such value; or, when nothing of it has a value in a
 *    column the purchase has, one that has nothing to tell them apart (validate says to give the
 *    row a trxid). A column equal on every row (a Country, a Date, a Price) does not make two
 *    customers one: they differ in another. Rows are matched best first, whole files at once:
 *    rows whose identity equals a purchase's, then partial matches (a column added or filled in
 *    since), then rows with nothing to compare; so a new customer above an old one cannot take
 *    the old one's purchase (an adversarial review: the old one was then bought again).
 */
export class RepeatMatcher {
  readonly #taken = new Set<EarlierPurchase>();
  readonly #all = new Queue();
  readonly #identity = new Map<EarlierPurchase, Identity>();
  /** Whole identity (coarse keys, sorted) → purchases with exactly it. */
  readonly #bySignature = new Map<string, Queue>();
  /** `column\0key` → purchases with that value there. */
  readonly #byValue = new Map<string, Queue>();
  /** The columns with a value, joined → purchases with exactly those (for rows with nothing to compare). */
  readonly #byColumns = new Map<string, { columns: string[]; q: Queue }>();
  /** Every column some purchase has a value in: a row's columns outside it can match nothing. */
  readonly #known = new Set<string>();

  constructor(earlier: readonly EarlierPurchase[]) {
    const cols = new Map<readonly string[], Map<string, number>>();
    const queue = <K>(m: Map<K, Queue>, k: K): Queue => {
      let q = m.get(k);
      if (!q) m.set(k, (q = new Queue()));
      return q;
    };
    for (const e of earlier) {
      if (!isPurchase(e)) continue;
      this.#all.push(e);
      let c = cols.get(e.header);
      if (!c) cols.set(e.header, (c = identityColumns(e.header)));
      const id = identity(e.header, e.cells, e.line, c);
      this.#identity.set(e, id);
      queue(this.#bySignature, signature(id)).push(e);
      for (const [k, v] of id) {
        queue(this.#byValue, `${k}\u0000${v.key}`).push(e);
        this.#known.add(k);
      }
      const columns = [...id.keys()].sort();
      const ck = columns.join('\u0000');
      let g = this.#byColumns.get(ck);
      if (!g) this.#byColumns.set(ck, (g = { columns, q: new Queue() }));
      g.q.push(e);
    }
  }

  /** For the rows of one fingerprint, in file order: the purchase each repeats, if any (each taken once). */
  matchAll(rows: readonly RowInFile[]): (RepeatFound | undefined)[] {
    const out: (RepeatFound | undefined)[] = rows.map(() => undefined);
    const ids = rows.map((r) => (r.topUp ? undefined : identity(r.header, r.cells, r.line)));
    const give = (i: number, e: EarlierPurchase | undefined): void => {
      if (!e) return;
      this.#taken.add(e);
      const id = ids[i];
      out[i] = { e, shared: id ? [...id.keys()].filter((k) => this.#identity.get(e)!.has(k)).length : 0 };
    };
    // Top-ups: the player and the pack are the purchase.
    rows.forEach((r, i) => {
      if (r.topUp) give(i, first(this.#all.untaken(this.#taken, 1)));
    });
    // Key/card rows whose identity is a purchase's, an empty one included: a row with nothing in
    // its own columns repeats a purchase with nothing in them before a row with a Customer may
    // take it for want of anything to compare (found by the simulator: the Customer's own card,
    // refunded earlier, was then not bought again and the blank row's card was bought twice).
    ids.forEach((id, i) => {
      if (!id) return;
      const q = this.#bySignature.get(signature(id));
      if (q) give(i, first(filter(q.untaken(this.#taken), (e) => agrees(id, this.#identity.get(e)!) === id.size)));
    });
    // Partial matches (a column added or filled in since): agreeing wherever both have a value,
    // handed out best first across the whole file, so a row sharing one value (a walk-in's Date)
    // never takes the purchase of the row sharing two (an adversarial review: it did, in file order).
    const pairs: { i: number; e: EarlierPurchase; shared: number; order: number }[] = [];
    ids.forEach((id, i) => {
      if (!id || id.size === 0 || out[i]) return;
      const reachable = [...id.keys()].filter((k) => this.#known.has(k)).length;
      const lists = [...id].map(([k, v]) => this.#byValue.get(`${k}\u0000${v.key}`)).filter((q): q is Queue => q !== undefined);
      lists.sort((a, b) => a.items.length - b.items.length);
      const seen = new Set<EarlierPurchase>();
      let best = 0;
      for (const q of lists) {
        for (const e of q.untaken(this.#taken, PARTIAL_SCAN)) {
          if (seen.has(e)) continue;
          seen.add(e);
          const n = agrees(id, this.#identity.get(e)!);
          if (n <= 0) continue;
          pairs.push({ i, e, shared: n, order: pairs.length });
          best = Math.max(best, n);
        }
        if (best >= reachable) break;
      }
    });
    pairs.sort((a, b) => b.shared - a.shared || a.i - b.i || a.order - b.order);
    for (const p of pairs) if (!out[p.i] && !this.#taken.has(p.e)) give(p.i, p.e);
    // Nothing to compare: no column with a value in both. The rows that differ least go first: a
    // row with a value where the purchase's file had the column empty (a Customer the blank row
    // did not have) is a weaker match than a row empty there too (found by the simulator: the
    // named row took the blank row's purchase, and the blank row was bought twice).
    const cols = new Map<readonly string[], Set<string>>();
    const conflicts = (id: Identity, e: EarlierPurchase): number => {
      let c = cols.get(e.header);
      if (!c) cols.set(e.header, (c = new Set(identityColumns(e.header).keys())));
      let n = 0;
      for (const k of id.keys()) if (c.has(k)) n++;
      return n;
    };
    const best = (id: Identity): { e: EarlierPurchase; conflicts: number } | undefined => {
      let b: { e: EarlierPurchase; conflicts: number } | undefined;
      for (const g of this.#byColumns.values()) {
        if (g.columns.some((k) => id.has(k))) continue;
        const e = first(g.q.untaken(this.#taken, 1));
        if (!e) continue;
        const n = conflicts(id, e);
        if (!b || n < b.conflicts) b = { e, conflicts: n };
      }
      return b;
    };
    const rest = ids.flatMap((id, i) => (id && !out[i] ? [{ i, id, conflicts: best(id)?.conflicts ?? Infinity }] : []));
    rest.sort((a, b) => a.conflicts - b.conflicts || a.i - b.i);
    for (const r of rest) give(r.i, best(r.id)?.e);
    return out;
  }
}

/** A whole identity as one coarse key. */
function signature(id: Identity): string {
  return [...id].map(([k, v]) => `${k}\u0000${v.key}`).sort().join('\u0001');
}

/** How many values two identities share, or -1 when a column both have a value in differs. */
function agrees(a: Identity, b: Identity): number {
  let n = 0;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w === undefined) continue;
    if (!sameCell(v, w)) return -1;
    n++;
  }
  return n;
}

function first<T>(it: Iterable<T>): T | undefined {
  for (const x of it) return x;
  return undefined;
}
function* filter<T>(it: Iterable<T>, ok: (x: T) => boolean): Generator<T> {
  for (const x of it) if (ok(x)) yield x;
}

/**
 * The earlier purchases a dry run's rows repeat (topup validate, the console's quote), as the load
 * decides them: all rows of a fingerprint matched at once (RepeatMatcher.matchAll). The decision
 * that counts is made when the batch opens (skipRepeats).
 */
export function findRepeats(rt: Pick<Runtime, 'config' | 'rows'>, now: number, rows: readonly (RowInFile & { fingerprint: string; alts?: readonly string[] })[]): (RepeatFound | undefined)[] {
  return matchByFingerprint(rows, (fps) => new RepeatMatcher(rt.rows.earlierRows(fps, '', now - rt.config.repeatWindowMs)));
}

/**
 * Rows grouped by fingerprint; each group's earlier purchases are those with its fingerprint or
 * any of its rows' `alts` (the pid-based fingerprints of homes before several accounts, one per pid
 * the pack has at an account: placement.ts).
 */
function matchByFingerprint<R extends RowInFile & { fingerprint: string; alts?: readonly string[] }>(rows: readonly R[], matcher: (fingerprints: readonly string[]) => RepeatMatcher): (RepeatFound | undefined)[] {
  const groups = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const g = groups.get(r.fingerprint);
    if (g) g.push(i);
    else groups.set(r.fingerprint, [i]);
  });
  const out: (RepeatFound | undefined)[] = rows.map(() => undefined);
  for (const [fp, idx] of groups) {
    const fps = [fp, ...idx.flatMap((i) => rows[i]!.alts ?? [])];
    const found = matcher(fps).matchAll(idx.map((i) => rows[i]!));
    idx.forEach((i, j) => (out[i] = found[j]));
  }
  return out;
}

/**
 * Inside the transaction that opens the batch (load.ts): skips every row that repeats an earlier
 * purchase (store/rows.ts skipAsRepeat; store/invariants.ts). Returns how many.
 */
export function skipRepeats(rt: Pick<Runtime, 'rows'>, batch: Batch, header: readonly string[], since: number, now: number): number {
  const chain = rt.rows.retryChain(batch.retryOf);
  // A retry's chain rows that were skipped as repeats already stand for earlier purchases: they
  // are matched first, so the retry's rows cannot repeat those purchases a second time (an
  // adversarial review: the retry of an edited re-drop skipped the extra top-up that had failed,
  // as a repeat of the purchase the re-drop's own skipped row stood for).
  const candidates = rt.rows.repeatCandidates(batch.id).map((c) => ({ ...c, header, topUp: isTopUp(c.request) }));
  // A skipped row keeps no request; rows of one fingerprint are of one pack, so of one kind.
  const kind = new Map(candidates.map((c) => [c.fingerprint, c.topUp]));
  const standing = rt.rows.skippedAsRepeats(chain).map((c) => ({ ...c, topUp: kind.get(c.fingerprint) ?? false }));
  const all = matchByFingerprint([...standing, ...candidates], (fps) => new RepeatMatcher(rt.rows.earlierRows(fps, batch.id, since, chain)));
  const found = all.slice(standing.length);
  let n = 0;
  candidates.forEach((c, i) => {
    const f = found[i];
    if (f && rt.rows.skipAsRepeat(batch.id, c.idx, now, repeatMessage(f.e, { batchId: batch.id, card: !c.topUp, shared: f.shared }), { batchId: f.e.batchId, idx: f.e.idx })) n++;
  });
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

/**
 * reject_code of a row skipped because its trxid was bought (or may have been) by a row of an
 * earlier batch: the same purchase (the same file dropped again derives the same trxids), reported
 * with that row's batch, line, order and status. Never bought by `topup retry` (it is not a row
 * "not bought"), nor by `--repeats`.
 */
export const BOUGHT_BEFORE_CODE = 'TOPUP_BOUGHT_BEFORE';

/** States of a row whose trxid may have bought something (an order exists, may exist, or will be sent). */
const HOLDS_PURCHASE: ReadonlySet<RowState> = new Set<RowState>(['pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen', 'completed', 'cancelled', 'review']);

/**
 * Why a row whose trxid another row holds is not bought, when that row bought it or may have (claim/row-verdict.ts):
 * it is that purchase. Undefined when the holder bought nothing (refused, invalid, skipped): the
 * trxid rule's own message stands. Issue 29: such rows were reported `invalid` with "a new
 * purchase needs a new trxid", advice that buys them a second time.
 */
export function boughtBefore(rt: Pick<Runtime, 'batches' | 'rows'>, used: { batchId: string; idx: number }, trxid: string): string | undefined {
  const row = rt.rows.get(used.batchId, used.idx);
  if (!row || !HOLDS_PURCHASE.has(row.state)) return undefined;
  const file = rt.batches.get(used.batchId)?.sourceName;
  const where = `line ${row.line} of batch ${used.batchId}${file ? ` (${file})` : ''}`;
  const see = `not bought again: that batch reports it (topup status ${used.batchId})`;
  if (row.orderId !== null) {
    const refund = row.state === 'cancelled' ? (row.refunded === true ? ', refunded' : row.refunded === false ? ', not refunded' : '') : '';
    // "bought" only of an order that completed: a cancelled (refunded or not) or unfinished one was sent.
    const verb = row.state === 'completed' ? 'bought' : 'sent';
    // Order ids are each account's own numbering: with accounts, the one that has it (and the trxid
    // it was sent under, after a move) says which order this is (a new-user trial: ORD1000001 named
    // two orders, one at each account).
    const at = row.account !== 'default' ? ` at account ${row.account}${row.trxid !== null && row.trxid !== trxid ? ` under trxid ${row.trxid}` : ''}` : '';
    return `already ${verb} under trxid ${trxid}: ${where} ${verb} it as order ${row.orderId} (${row.state}${refund})${at}; ${see}`;
  }
  if (row.state === 'pending') return `already in ${where} under trxid ${trxid}, not sent yet: it is bought there; ${see}`;
  return `already sent under trxid ${trxid} by ${where}, which is ${row.state === 'review' ? 'in review' : 'in doubt'} (${row.state}): it may have been bought, and whether it was is settled there; ${see}`;
}
