/**
 * After a restore, a file row that the catalog refuses NOW may be a purchase made before: the pack
 * withdrawn since it was bought, its last stock taken by this very row, its price risen above the
 * row's cap since. Refused at intake (born `invalid`) or at its send (`price-rose`), it was never
 * looked up, and its order, paid for, was held by no row (stop 37's review: a withdrawn pack; one
 * account with a price above the cap; test/rev37b/*).
 *
 * So while a row loaded now may have been bought already (store/backup.ts mayHoldBoughtRows: a
 * copy not yet reconciled, or the window after a restore open for files), a row that would be
 * refused for any reason but its trxid is stored `pending` with the request its cells give, and held
 * by a per-row lookup mark (store/backup.ts OrderLookup, with `refusal`): the store refuses its
 * intent while the mark is there (rows.ts), so nothing of it is sent. The lookup
 * (ops/restore-reconcile.ts lookUpOrders, and the reconcile itself) reads every account: found
 * bought, it is settled with its order; found nowhere, it is refused with the error it would have
 * had, in the transaction that removes its mark; its account unable to say, it goes to review.
 * A row the catalog takes without its stock and cap but refuses with them (a valid request) is held
 * the same way without a refusal: found nowhere, it is sent and meets the cap and the stock there.
 *
 * Money: the provisional request is never sent (the mark, then the refusal, in one transaction).
 */
import { canonicalField } from '../intake/columns.js';
import type { HeaderMap } from '../intake/columns.js';
import type { OrderRequest } from '../api/schemas.js';
import type { RawRow } from '../intake/formats/index.js';
import { foldTrxid, trxidProblem } from '../kernel/identity.js';
import type { Db } from '../store/db.js';
import type { NewRow } from '../store/row-record.js';
import { boughtRowsSince, type OrderLookup } from '../store/backup.js';

const LINE_FIELDS = ['userId', 'zoneId', 'serverId', 'region', 'moreId'] as const;

/** What the loader needs to hold rows of one batch: whether it may, and from when to look. */
export class HeldRefusals {
  readonly #batchId: string;
  readonly #since: number;
  readonly #accounts: string[];
  readonly #seen = new Set<string>();
  readonly marks: OrderLookup[] = [];

  private constructor(batchId: string, since: number, accounts: string[]) {
    this.#batchId = batchId;
    this.#since = since;
    this.#accounts = accounts;
  }

  /** Null when no row loaded now may have been bought before (the usual case). */
  static open(db: Db, configured: readonly string[], batchId: string, now: number): HeldRefusals | null {
    const since = boughtRowsSince(db, now);
    if (since === null) return null;
    // Every account that may have bought it: those configured and every one the store knew since.
    const known = (db.prepare('SELECT name FROM account_identities WHERE removed_at IS NULL OR removed_at >= ? ORDER BY name').all(since) as { name: string }[]).map((r) => r.name);
    return new HeldRefusals(batchId, since, [...new Set([...configured, ...known])]);
  }

  /** A trxid this file gives twice is refused as it is (which row would the purchase be?). */
  seen(trxid: string): boolean {
    const k = foldTrxid(trxid);
    if (this.#seen.has(k)) return true;
    this.#seen.add(k);
    return false;
  }

  /**
   * A row refused for `error`: held (its NewRow, pending, and its mark) when its trxid can be
   * looked up; undefined when it cannot (a malformed or repeated trxid, or one another batch holds).
   */
  hold(raw: RawRow, header: HeaderMap, trxid: string, account: string, error: string, now: number): NewRow | undefined {
    if (trxidProblem(trxid) !== undefined || this.seen(trxid)) return undefined;
    const request = provisionalRequest(raw.cells, header, trxid);
    this.marks.push({ batchId: this.#batchId, idx: raw.index, trxid, line: raw.line, at: now, since: this.#since, accounts: this.#accounts, refusal: error });
    return {
      idx: raw.index,
      line: raw.line,
      cells: raw.cells,
      request,
      error: null,
      productId: request.pid,
      ...(request.quantity !== undefined ? { quantity: request.quantity } : {}),
      account,
      pinned: false,
    };
  }

  /** A valid row the catalog refuses now (stock, cap): looked up before it is sent, no refusal of ours. */
  lookUpFirst(raw: RawRow, trxid: string, now: number): void {
    this.marks.push({ batchId: this.#batchId, idx: raw.index, trxid, line: raw.line, at: now, since: this.#since, accounts: this.#accounts });
  }
}

/** The request a row's cells give by the API's own column names: what a lookup compares an order with, never sent. */
export function provisionalRequest(cells: readonly string[], header: HeaderMap, trxid: string): OrderRequest {
  const cell = (i: number | undefined): string => (i === undefined ? '' : (cells[i] ?? '').trim());
  const request: OrderRequest = { pid: cell(header.fields.pid), trxid };
  for (const f of LINE_FIELDS) {
    const i = header.fields[f] ?? header.columns.findIndex((c) => canonicalField(c) === f);
    const v = i === -1 ? '' : cell(i);
    if (v !== '') request[f] = v;
  }
  const q = cell(header.fields.quantity);
  if (/^\d+$/.test(q) && Number(q) > 0) request.quantity = Number(q);
  return request;
}
