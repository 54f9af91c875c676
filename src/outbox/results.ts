/**
 * What a result holds, one row per input row in input order: the input's own columns, then
 * the result columns, in this order —
 *
 *   trxid, orderId, status, packName, amountUsd, refunded, netUsd, codes, finishedAt, error
 *
 * and `mode` = SANDBOX last in runs against the built-in sandbox, so a rehearsal's file is never
 * mistaken for a real one. A batch with rows on a named account (a home with accounts.toml) has
 * three more, after `error`: `account` (the account that placed the row, or holds it),
 * `sentTrxid` (the trxid the supplier has it under: the row's own, or `<own>-<account>` after a
 * move) and `refusedBy` (the accounts that refused it with nothing created before it moved, each
 * with the trxid it had there and why, docs/accounts.md).
 *
 * The `trxid` cell (ours, or the input's own trxid column filled in place) is always the row's own
 * trxid (store/row-record.ts ownTrxid), never the moved one: it is the reseller's key to join the
 * result to their records (a new-user trial: a move overwrote their trxid cell).
 *
 * A batch some of whose rows were player-checked (docs/player-checks.md) has `playerName` after
 * `error` (before the account columns): the name the check gave, `not found` for a row held
 * because its player does not exist, blank for a row not checked.
 *
 * - The header appears once. When the input has a trxid column (any spelling the intake accepts:
 *   `trxid`, `trxId`, `idtrx`, …) that column is filled in place with the row's trxid and no
 *   second `trxid` column is added.
 * - A result column whose name the input already uses (compared as the intake compares header
 *   names: ignoring case, spaces, `_` and `-`) is named with the prefix `result_` instead, e.g.
 *   `result_status`; again, should the input use that name too.
 * - amountUsd: the order's price as the supplier charged it when the order was placed (our own
 *   price check's figure if the supplier's answer had none), on every placed order (completed or
 *   cancelled), refunded or not. netUsd: what the row cost in the end, charged minus refunded:
 *   amountUsd for a completed order and for a cancelled one not refunded, 0 for a refunded one.
 *   Summing netUsd gives the summary's spentUsd to the cent (both come from store/cost.ts rowMoney,
 *   the rule SPENT).
 *   Both are blank for rows that placed no order, and for `review` rows, whose charge is unknown
 *   (the summary lists them).
 * - finishedAt: when the row reached its status, UTC to the second (`2025-03-01T10:04:05Z`): the
 *   row's last change in the store, since no transition leaves a final state. For `completed`
 *   that is when an answer or a poll first showed the order completed, so it trails the
 *   supplier's own completion by at most a poll interval.
 * - Partial results (partial.ts) show rows not finished yet as `pending` (not sent yet) or
 *   `in progress` (sent, outcome not known yet), with only trxid, orderId and packName filled.
 */
import { trxidColumn } from '../intake/columns.js';
import type { Runtime } from '../runtime.js';
import type { Batch, InputDialect } from '../store/batches.js';
import type { Row } from '../store/rows.js';
import { ownTrxid } from '../store/row-record.js';
import { rowMoney } from '../store/cost.js';

export { rowMoney } from '../store/cost.js';

export const RESULT_COLUMNS = ['trxid', 'orderId', 'status', 'packName', 'amountUsd', 'refunded', 'netUsd', 'codes', 'finishedAt', 'error'] as const;
export type ResultColumn = (typeof RESULT_COLUMNS)[number] | 'playerName' | 'account' | 'sentTrxid' | 'refusedBy' | 'mode';
export const CLASH_PREFIX = 'result_';

/** The column set of one batch's result. */
export interface ResultLayout {
  /** The input's columns; every row is cut or padded to this width. */
  width: number;
  /** The input column that receives the row's trxid, if the input has one. */
  trxidCol: number | null;
  /** Our columns in order, as computed by resultCells (trxid left out when filled in place). */
  ours: ResultColumn[];
  /** The whole header row, names as written. */
  header: string[];
}

const normalise = (name: string): string => name.trim().toLowerCase().replace(/[\s_-]+/g, '');

export function resultLayout(inputHeader: readonly string[], sandbox: boolean, accounts = false, players = false): ResultLayout {
  // The column the intake read the trxid from, under any spelling it accepts (intake/columns.ts).
  const trxidCol = trxidColumn(inputHeader) ?? -1;
  const ours: ResultColumn[] = [...RESULT_COLUMNS, ...(players ? (['playerName'] as const) : []), ...(accounts ? (['account', 'sentTrxid', 'refusedBy'] as const) : []), ...(sandbox ? (['mode'] as const) : [])].filter((c) => c !== 'trxid' || trxidCol < 0);
  const taken = new Set(inputHeader.filter((c) => c.trim() !== '').map(normalise));
  const names = ours.map((col) => {
    let name: string = col;
    while (taken.has(normalise(name))) name = `${CLASH_PREFIX}${name}`;
    taken.add(normalise(name));
    return name;
  });
  return { width: inputHeader.length, trxidCol: trxidCol < 0 ? null : trxidCol, ours, header: [...inputHeader, ...names] };
}

/** `accounts`: the batch has rows on a named account (rows.ts hasNamedAccounts): the account columns are shown. */
export function batchLayout(batch: Batch, accounts = false, players = false): ResultLayout {
  return resultLayout(batch.header ?? [], batch.sandbox, accounts, players);
}

/** Money cells are numbers (the writers format them); every other cell is text. */
export type ResultCell = string | number;

const FINAL = new Set(['completed', 'cancelled', 'rejected', 'invalid', 'skipped', 'review']);

/** The status a row shows. Rows not final appear only in partial results. */
export function resultStatus(row: Row, partial = false): string {
  if (FINAL.has(row.state)) return row.state;
  if (!partial) throw new Error(`row ${row.idx} of ${row.batchId} is not final (${row.state})`);
  return row.state === 'pending' ? 'pending' : 'in progress';
}

function isoSecond(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The purchase a row skipped as a repeat stands for, as its result names it. */
export interface RepeatedPurchase {
  /** Its own trxid (the one its file gave or derived: ownTrxid). */
  trxid: string | null;
  /** The trxid it was sent under (differs after a move to another account). */
  sentTrxid: string | null;
  orderId: string | null;
  /** The account that bought it (or holds it); null for one never stored for sending. */
  account: string | null;
}

/**
 * `earlier`: for a row skipped as a repeat, the row whose purchase it is (rows.repeat_of): its trxid,
 * order id, account and sent trxid fill the row's own empty cells, so the reseller finds the
 * purchase the row repeats (a new-user trial: both cells were empty, only the error's words named
 * the order; then, for a moved purchase, the account was blank, and its order id means a different
 * order at each account).
 */
export function resultCells(row: Row, layout: ResultLayout, partial = false, earlier: RepeatedPurchase | null = null): ResultCell[] {
  const cells = row.cells.slice(0, layout.width);
  while (cells.length < layout.width) cells.push('');
  const own = ownTrxid(row);
  if (layout.trxidCol !== null && own !== null) cells[layout.trxidCol] = own;
  else if (layout.trxidCol !== null && earlier?.trxid && (cells[layout.trxidCol] ?? '').trim() === '') cells[layout.trxidCol] = earlier.trxid;
  const final = FINAL.has(row.state);
  const money = rowMoney(row);
  const value = (col: ResultColumn): ResultCell => {
    switch (col) {
      case 'trxid':
        return own ?? earlier?.trxid ?? '';
      case 'orderId':
        return row.orderId ?? earlier?.orderId ?? '';
      case 'status':
        return resultStatus(row, partial);
      case 'packName':
        return row.packName ?? '';
      case 'amountUsd':
        return money.amountCents === null ? '' : money.amountCents / 100;
      case 'refunded':
        return row.state === 'cancelled' ? String(row.refunded === true) : '';
      case 'netUsd':
        return money.netCents === null ? '' : money.netCents / 100;
      case 'codes':
        return row.state === 'completed' ? row.codes.join(' ') : '';
      case 'finishedAt':
        return final ? isoSecond(row.updatedAt) : '';
      case 'error':
        // A completed key/card order without codes says so here, never a silent empty codes cell.
        if (row.state === 'completed') return row.note?.startsWith('CODES MISSING') ? row.note : '';
        return final ? (row.error ?? '') : '';
      case 'playerName':
        // The name the supplier's check gave; "not found" for a row held for it; blank: not checked.
        return row.rejectCode === 'TOPUP_PLAYER_NOT_FOUND' ? 'not found' : (row.playerName ?? '');
      case 'account':
        return row.request === null ? (earlier?.account ?? '') : row.account;
      case 'sentTrxid':
        return row.request === null ? (earlier?.sentTrxid ?? '') : (row.trxid ?? '');
      case 'refusedBy':
        return row.moves.map((m) => `${m.from} (trxid ${m.trxid}): ${m.why}`).join('; ');
      case 'mode':
        return 'SANDBOX';
    }
  };
  return [...cells, ...layout.ours.map(value)];
}

/**
 * A line of the batch's final file that no stored row stands for (late-lines.ts): `skipped`, with
 * why in `error`; its own cells as they are now, and nothing else, since nothing was sent for it.
 */
export function lateLineCells(line: { cells: readonly string[]; why: string }, layout: ResultLayout): ResultCell[] {
  const cells = line.cells.slice(0, layout.width);
  while (cells.length < layout.width) cells.push('');
  const value = (col: ResultColumn): ResultCell => (col === 'status' ? 'skipped' : col === 'error' ? line.why : col === 'mode' ? 'SANDBOX' : '');
  return [...cells, ...layout.ours.map(value)];
}

/**
 * A batch's rows as result cells, a page at a time: no SQLite statement stays open between pages,
 * so an async writer may yield between them while sends and polls use the database.
 */
export function* resultPages(rt: Pick<Runtime, 'rows'>, batchId: string, layout: ResultLayout, partial = false, pageSize = 1000): Generator<ResultCell[][]> {
  let from = 0;
  for (;;) {
    const rows = rt.rows.page(batchId, from, pageSize);
    if (rows.length === 0) return;
    yield rows.map((r) => resultCells(r, layout, partial, r.repeatOf ? repeatedPurchase(rt, r) : null));
    from = rows[rows.length - 1]!.idx + 1;
  }
}

/** How a money cell is written in a CSV: two decimals; a decimal comma where `;` separates cells. */
export function csvMoney(usd: number, dialect: InputDialect): string {
  const text = usd.toFixed(2);
  return dialect.delimiter === ';' ? text.replace('.', ',') : text;
}

/**
 * The purchase a row skipped as a repeat stands for, as it is now (an order placed since the skip
 * shows its id): the row its repeat_of names, followed through rows that were themselves skipped as
 * repeats (a re-drop of a re-drop) to the one that holds a trxid. Null when none is found.
 */
function repeatedPurchase(rt: Pick<Runtime, 'rows'>, row: Row): RepeatedPurchase | null {
  let ref = row.repeatOf ?? null;
  // A chain is a few re-drops long; the bound only guards against a cycle no writer makes.
  for (let hop = 0; ref && hop < 16; hop++) {
    const earlier = rt.rows.get(ref.batchId, ref.idx);
    if (!earlier) return null;
    if (earlier.trxid !== null || earlier.orderId !== null) {
      return { trxid: ownTrxid(earlier), sentTrxid: earlier.trxid, orderId: earlier.orderId, account: earlier.request === null ? null : earlier.account };
    }
    ref = earlier.repeatOf ?? null;
  }
  return null;
}
