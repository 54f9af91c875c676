/**
 * One RawRow → the exact order body to send, or every problem with it, before anything is spent.
 *
 * Choices:
 *  - A row whose cells are all blank is invalid ("empty row"), so every input row has a result.
 *  - Keys/cards without a quantity (column absent or cell blank) order 1.
 *  - A quantity on a top-up line is refused unless it is "1" (one top-up per row; never sent:
 *    the API would reject it). More than one is never bought as one.
 *  - A key/card row with a number other than 1 in a column that is surely a quantity but not
 *    one topup reads (`QTY_ORDER`) is refused, never bought as 1 (column-report.ts).
 *  - Fields the line does not need are ignored, never sent.
 *  - trxids are compared case-insensitively for the duplicate check (the API might not tell
 *    `A1` from `a1`, and a replay would silently skip the second row). The first one wins.
 *  - pid plus slug/pack in one row must agree; pid decides which pack.
 *  - Which column feeds each field a game line needs is worked out once per line
 *    (line-columns.ts: API names, the catalog's labels, common names); a field no column
 *    provides is a file problem (file-problems.ts), reported once, not on every row.
 *  - ML lines: a userId written `777888999 (2005)` is split into userId and zoneId when the
 *    zoneId cell is blank; when both are given they must agree.
 *  - Workbook cells that are not what they show (cell-notes.ts) are refused in order columns.
 */
import type { OrderRequest } from '../api/schemas.js';
import { canonicalField, columnName, headerKey, type HeaderMap, type OrderField } from './columns.js';
import { isActive, type CatalogEntry, type CatalogIndex, type LineKind, type RequiredField } from './catalog-index.js';
import { BODY_ORDER, packFacts, type PackContext, type PackFacts, type RowProblem } from './pack-facts.js';
import { foldTrxid, trxidProblem } from '../kernel/identity.js';
import { idProblem, numberFormatDamage, parseUsd, parseWholeNumber, splitMlId } from './field-rules.js';
import { checkQuantity, fieldProblem, ordered } from './field-checks.js';
import { UNSAVED_FORMULA_FIX, noteProblem } from './cell-notes.js';
import { columnLetter } from './formats/xlsx-cells.js';
import { accountColumn } from './account-column.js';
import { FileProblems, type FileProblem } from './file-problems.js';
import { COMMON, headerNames, labelForms } from './line-columns.js';
import { columnReport, lookalikeColumns, type ColumnReport } from './column-report.js';
import { allBlank, type RawRow } from './formats/index.js';
import { roundCents } from '../kernel/money.js';

export type { FileProblem } from './file-problems.js';
export type { ColumnReading, ColumnReport } from './column-report.js';
export type { RowProblem } from './pack-facts.js';

export interface ValidOrder {
  /** Exactly the POST /orders body; `trxid` is '' when the file gave none. */
  request: OrderRequest;
  givenTrxid: string | undefined;
  slug: string;
  /** The catalog's name of the game (for the quote's breakdown). */
  gameName: string;
  packName: string;
  unitPriceUsd: number;
  quantity: number;
  /** unitPriceUsd × quantity, rounded to cents. */
  amountUsd: number;
  maxPriceUsd: number | undefined;
  kind: LineKind;
}

export type RowVerdict = { ok: true; order: ValidOrder } | { ok: false; problems: RowProblem[] };

/** Stateful: remembers the trxids of this file for the duplicate check, and the file's problems. */
export interface RowValidator {
  validate(row: RawRow): RowVerdict;
  /**
   * Problems with the file itself, known once every row has been validated: when there is one,
   * nothing in the file may be ordered, and the row problems carrying its key are its echoes.
   */
  fileProblems(): FileProblem[];
  /** How every column was read, and the warnings about the columns (once every row is validated). */
  columns(): ColumnReport;
}

export function formatProblems(problems: RowProblem[]): string {
  return problems.map((p) => `${p.column}: ${p.reason}`).join('; ');
}

const FIXED_FIELDS: readonly OrderField[] = ['pid', 'slug', 'pack', 'trxid', 'quantity', 'maxPriceUsd'];
const ALL_FIELDS: readonly OrderField[] = [
  'pid', 'slug', 'pack', 'trxid', 'userId', 'zoneId', 'serverId', 'region', 'moreId', 'quantity', 'maxPriceUsd',
];


/** The header, resolved once per file: where each field is and what the user calls its column. */
interface FileShape extends PackContext {
  /** Field → column index (the header's own map). */
  at: Partial<Record<OrderField, number>>;
  /** The column that pins rows to an account (account/routing.ts accountColumn), if any. */
  pinAt: number | undefined;
}

type Problems = RowProblem[];

function cellOf(cells: readonly string[], i: number | undefined): string {
  return i === undefined ? '' : (cells[i] ?? '').trim();
}

/**
 * `availability: false` leaves out what the catalog says of the pack *now* (its stock, its price
 * against the row's maxPriceUsd): for an API order accepted (202) before the store was lost and
 * accepted again from the journal (orders/journal.ts recoverFromJournal). It may have been bought
 * already, taking the stock or before the price rose; refused now, it was held by no row and its
 * purchase reported nowhere but as "needs a person" (the simulator's `restore`, seed 4 #27). Stored,
 * it is looked up at the supplier before anything is sent; one not bought meets the price cap at
 * its send (`price-rose`) and the supplier's stock as any row does.
 */
export interface RowValidatorOptions {
  availability?: boolean;
  /**
   * The price cap is judged where the row is placed, not here: in a home with several accounts the
   * catalog is merged (the first account that knows a pid answers), so its price is one account's
   * only, and a row another account sells within its cap would be refused (trial s35 M1). The
   * router (account/routing.ts) then refuses a row only when no account it may go to sells within it.
   */
  capAtPlacement?: boolean;
}

export function createRowValidator(header: HeaderMap, catalog: CatalogIndex, opts: RowValidatorOptions = {}): RowValidator {
  const availability = opts.availability !== false;
  const trxidLines = new Map<string, number>();
  const names = {} as Record<OrderField, string>;
  for (const f of ALL_FIELDS) names[f] = columnName(header, f);
  const fixedByCol = new Map<number, OrderField>();
  for (const f of FIXED_FIELDS) if (header.fields[f] !== undefined) fixedByCol.set(header.fields[f], f);
  const shape: FileShape = {
    at: header.fields,
    names,
    packColumn: header.fields.pid !== undefined ? 'pid' : 'pack',
    header,
    fixedByCol,
    headerNames: headerNames(header),
    linePlans: new Map(),
    pinAt: accountColumn(header.columns),
  };
  const fileProblems = new FileProblems(header);
  const facts = new Map<CatalogEntry, PackFacts>();
  const factsOf = (entry: CatalogEntry): PackFacts => {
    let f = facts.get(entry);
    if (f === undefined) facts.set(entry, (f = packFacts(entry, shape)));
    return f;
  };
  const at = shape.at;
  // A column named like a line field (`Player ID`, `zone`, `Riot ID (name#tag)`) is understood, not a lookalike.
  const lineNamed = (key: string): OrderField | undefined => COMMON[key];
  const lookalikes = lookalikeColumns(header, (key) => lineNamed(key) ?? lineNamed(labelForms(key).at(-1) ?? key));
  // Columns that are surely a quantity but not read as one: a key/card row with a value in them is not bought as 1.
  // Own columns' formula cells without a saved value, by column (their cells, in the file's order).
  const unsavedOwn = new Map<number, string[]>();
  const unreadQuantity = at.quantity === undefined ? lookalikes.filter((l) => l.surelyQuantity).map((l) => l.index) : [];

  return {
    fileProblems: () => fileProblems.problems(),
    columns: () => {
      const plans = [...shape.linePlans.values()];
      const labelled = new Map<string, OrderField>();
      for (const p of plans) for (const [f, label] of p.labels) for (const form of labelForms(label)) labelled.set(form, f);
      const lineFieldOf = (i: number): OrderField | undefined => {
        const cell = header.columns[i] ?? '';
        const key = headerKey(cell);
        return canonicalField(cell) ?? COMMON[key] ?? labelled.get(key) ?? labelForms(cell).map((k) => labelled.get(k) ?? COMMON[k]).find((f) => f !== undefined);
      };
      const report = columnReport(header, plans.map((p) => ({ game: p.gameName, at: p.columns.at })), lookalikes, lineFieldOf);
      for (const [col, cells] of unsavedOwn) {
        report.warnings.push(
          `column "${header.columns[col]?.trim() ?? ''}" (${columnLetter(col + 1)}): ${cells.length} formula cell(s) without a saved value (${cells.slice(0, 5).join(', ')}${cells.length > 5 ? ' …' : ''}) come out empty in the result; ${UNSAVED_FORMULA_FIX}`,
        );
      }
      return report;
    },
    validate(row: RawRow): RowVerdict {
      if (row.parseError !== undefined) return { ok: false, problems: [{ column: 'row', reason: row.parseError }] };
      const cells = row.cells;
      if (allBlank(cells)) {
        return { ok: false, problems: [{ column: 'row', reason: 'empty row (every cell is blank)' }] };
      }
      const problems: Problems = [];

      const trxid = cellOf(cells, at.trxid);
      if (trxid !== '') {
        // A spreadsheet's damage named as such, then the one trxid rule (kernel/identity.ts: well-formed
        // text, no spaces or controls, no formula, its length), the order API's too.
        const bad = numberFormatDamage(trxid) ?? trxidProblem(trxid);
        const folded = foldTrxid(trxid);
        const firstLine = trxidLines.get(folded);
        if (bad) add(problems, shape, 'trxid', bad);
        else if (firstLine !== undefined) {
          add(problems, shape, 'trxid', `"${trxid}" is already used on line ${firstLine} of this file; each order needs its own trxid`);
        }
        if (firstLine === undefined) trxidLines.set(folded, row.line);
      }

      const maxPriceText = cellOf(cells, at.maxPriceUsd);
      const maxPriceUsd = maxPriceText === '' ? undefined : parseUsd(maxPriceText);
      if (maxPriceText !== '' && maxPriceUsd === undefined) add(problems, shape, 'maxPriceUsd', `must be a price in USD like 1.50 (got "${maxPriceText}")`);

      const entry = findPack(cells, shape, problems, catalog);
      if (!entry) {
        const q = cellOf(cells, at.quantity);
        if (q !== '' && parseWholeNumber(q) === undefined) add(problems, shape, 'quantity', `must be a whole number (got "${q}")`);
        if (row.notes !== undefined) notedCells(row, shape, undefined, problems);
        return { ok: false, problems };
      }

      const { product } = entry;
      const pack = factsOf(entry);
      for (const p of pack.problems) problems.push(p);

      const request: OrderRequest = { pid: product.id, trxid };
      const split = pack.splitsZone ? splitMlId(cellOf(cells, pack.columns.at.userId)) : undefined;
      const required = entry.required;
      for (let k = 0; k < required.length; k++) {
        const req = required[k] as RequiredField;
        const col = pack.cols[k];
        let text = cellOf(cells, col);
        if (split !== undefined && req.field === 'userId') text = split.userId;
        else if (split !== undefined && req.field === 'zoneId') text = zoneFromSplit(text, split.zoneId, pack, row.line, fileProblems, problems);
        const value = requiredValue(req, col, entry, pack, text, row.line, fileProblems, problems);
        if (value !== undefined) request[req.field] = value;
      }

      const quantity = checkQuantity(entry, cellOf(cells, at.quantity), problems, shape.names.quantity, availability);
      if (entry.kind === 'stock' && quantity !== undefined) request.quantity = quantity;
      if (entry.kind === 'stock' && unreadQuantity.length > 0) unreadQuantityProblems(cells, unreadQuantity, header, problems);

      if (availability && maxPriceUsd !== undefined && opts.capAtPlacement !== true && product.price > maxPriceUsd + 1e-9) {
        add(problems, shape, 'maxPriceUsd', `the pack now costs ${product.price} USD, above your maximum of ${maxPriceUsd} USD`);
      }
      if (row.notes !== undefined) notedCells(row, shape, pack, problems, unsavedOwn);

      if (problems.length > 0 || quantity === undefined) return { ok: false, problems };
      return {
        ok: true,
        order: {
          request: pack.inBodyOrder ? request : ordered(request, BODY_ORDER),
          givenTrxid: trxid === '' ? undefined : trxid,
          slug: product.slug,
          gameName: product.gameName || product.slug,
          packName: product.serviceName,
          unitPriceUsd: product.price,
          quantity,
          amountUsd: roundCents(product.price * quantity),
          maxPriceUsd,
          kind: entry.kind,
        },
      };
    },
  };
}

/** A key/card row with a number of codes in a column topup does not read as the quantity: refused, never bought as 1. */
function unreadQuantityProblems(cells: readonly string[], cols: readonly number[], header: HeaderMap, problems: Problems): void {
  for (const i of cols) {
    const text = cellOf(cells, i);
    if (text === '' || text === '1') continue;
    const name = header.columns[i]?.trim() ?? '';
    problems.push({
      column: name,
      reason: `"${text}" looks like the number of codes to buy, but "${name}" is not a column name topup reads as the quantity, so the row is not bought (not even as 1); rename the column to "quantity"`,
    });
  }
}

function add(problems: Problems, shape: FileShape, field: OrderField, reason: string): void {
  problems.push({ column: shape.names[field], reason });
}

/** Workbook cells that are not what they show, in the columns this row orders from. */
function notedCells(row: RawRow, shape: FileShape, pack: PackFacts | undefined, problems: Problems, unsavedOwn?: Map<number, string[]>): void {
  for (const [col, note] of row.notes ?? []) {
    const field = shape.fixedByCol.get(col) ?? pack?.columns.byCol.get(col);
    if (field === undefined) {
      if (note !== 'formula-unsaved') continue;
      const cell = `${columnLetter(col + 1)}${row.line}`;
      // The `account` column pins a row (claim/placement.ts, read there, not here): read empty,
      // the row would be routed anywhere instead. Refused like an order column's cell (in a home
      // without an accounts file it is the reseller's own; an uncomputed one is refused there too).
      if (col === shape.pinAt) {
        problems.push({ column: shape.header.columns[col]?.trim() || 'account', reason: noteProblem(note, 'account', '', cell)! });
        continue;
      }
      // A column of the reseller's own, carried through: its formula without a saved value comes
      // out empty in the result; said once per column (columns(): a warning), not refused.
      if (unsavedOwn !== undefined && pack !== undefined) unsavedOwn.set(col, [...(unsavedOwn.get(col) ?? []), cell]);
      continue;
    }
    const reason = noteProblem(note, field, row.cells[col] ?? '', `${columnLetter(col + 1)}${row.line}`);
    if (reason !== undefined) problems.push({ column: shape.header.columns[col]?.trim() || field, reason });
  }
}

/** The zone to use on an ML row whose userId carried one: the zoneId cell's when it agrees or is blank. */
function zoneFromSplit(cell: string, zone: string, pack: PackFacts, line: number, files: FileProblems, problems: Problems): string {
  if (cell === '') {
    if (pack.columns.at.zoneId === undefined) files.supplied(pack.keys.zoneId, pack.facts('zoneId'), line);
    return zone;
  }
  if (cell !== zone) {
    problems.push({ column: pack.names.zoneId, reason: `"${cell}" disagrees with the zone ${zone} written with the id in ${pack.names.userId}; give the zone once` });
  }
  return cell;
}




function findPack(cells: readonly string[], shape: FileShape, problems: Problems, catalog: CatalogIndex): CatalogEntry | undefined {
  const pid = cellOf(cells, shape.at.pid);
  if (pid !== '') {
    const entry = catalog.byPid(pid);
    if (!entry) {
      add(problems, shape, 'pid', numberFormatDamage(pid) ?? `no pack with pid "${pid}" in the catalog`);
      return undefined;
    }
    const slug = cellOf(cells, shape.at.slug);
    const pack = cellOf(cells, shape.at.pack);
    const fold = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');
    if (slug !== '' && fold(slug) !== fold(entry.product.slug)) add(problems, shape, 'slug', `"${slug}" does not match pid ${pid}, which is ${entry.product.slug}`);
    if (pack !== '' && fold(pack) !== fold(entry.product.serviceName)) {
      add(problems, shape, 'pack', `"${pack}" does not match pid ${pid}, which is "${entry.product.serviceName}"`);
    }
    return entry;
  }
  const slug = cellOf(cells, shape.at.slug);
  const pack = cellOf(cells, shape.at.pack);
  if (slug === '' && pack === '') {
    add(problems, shape, 'pid', 'missing: give a pid, or a slug and a pack');
    return undefined;
  }
  if (slug === '') return void add(problems, shape, 'slug', 'missing: a pack name needs its game slug (or give a pid)');
  if (pack === '') return void add(problems, shape, 'pack', `missing: give the pack name for ${slug} (or a pid)`);

  const found = catalog.bySlugPack(slug, pack);
  if (found) return found;
  const candidates = catalog.slugPackCandidates(slug, pack);
  const active = candidates.filter((e) => isActive(e.product.status));
  if (active.length > 1) {
    add(problems, shape, 'pack', `"${pack}" names ${active.length} packs of ${slug} (pids ${active.map((e) => e.product.id).join(', ')}); use the pid column`);
    return undefined;
  }
  if (candidates[0]) return candidates[0];
  const slugKnown = catalog.line(slug) !== undefined || catalog.products.some((p) => p.slug.toLowerCase() === slug.toLowerCase());
  if (!slugKnown) add(problems, shape, 'slug', `no game with slug "${slug}" in the catalog`);
  else add(problems, shape, 'pack', `no pack named "${pack}" for ${slug} in the catalog`);
  return undefined;
}

/** Checks one field the line needs; returns the value to send (an option's value where options are listed). */
function requiredValue(
  req: RequiredField,
  col: number | undefined,
  entry: CatalogEntry,
  pack: PackFacts,
  value: string,
  line: number,
  files: FileProblems,
  problems: Problems,
): string | undefined {
  const { field, label } = req;
  if (value === '') {
    if (col !== undefined) {
      problems.push({ column: pack.names[field], reason: `missing: ${pack.game} needs ${label || field}` });
      return undefined;
    }
    const key = pack.keys[field];
    const facts = pack.facts(field);
    files.lacking(key, facts, line);
    const reason = facts.ambiguous
      ? `more than one column could be ${label || field}; see the file's problem`
      : `missing: the file has no ${field} column, and ${pack.game} needs ${label || field}`;
    problems.push({ column: pack.names[field], reason, fileProblem: key });
    return undefined;
  }
  const reason = fieldProblem(field, entry, pack.game, value);
  if (typeof reason === 'object') return reason.send;
  if (reason === undefined) return value;
  problems.push({ column: pack.names[field], reason });
  return undefined;
}
