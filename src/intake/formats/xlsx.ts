/**
 * Reads an .xlsx order file with exceljs's streaming WorkbookReader, after zip-guard.ts has
 * checked the archive, into the same header + rows the CSV reader gives.
 *
 * Choices:
 *  - The sheet named `orders` (any case, surrounding spaces ignored) if there is one, else the
 *    first visible sheet in tab order (a hidden first sheet is usually a lookup table).
 *  - The header is the first row with anything in it; rows above it that are blank are skipped.
 *    The header's width is its last non-blank cell.
 *  - `line` is the sheet's row number, so a problem names the row the reseller sees in Excel.
 *  - Blank rows between order rows become rows of their own (validation calls them "empty row"),
 *    as blank lines in a CSV do, so every row up to the last order has a result; blank rows after
 *    the last order (Excel keeps formatted empty rows) are ignored.
 *  - A non-blank cell right of the header's last column makes the row invalid, as an extra cell
 *    in a CSV does: the columns may have shifted.
 *  - Cells become text (xlsx-cells.ts); typed cells an id cannot be (dates, formulas, long or
 *    fractional numbers, numbers stored with an exponent, errors, booleans) carry a note the
 *    validator refuses in order columns.
 *  - At most MAX_XLSX_ROWS rows; more is a file error asking to split the file.
 *  - Known limit of exceljs 4.4.0: an inline (not shared) string with several formatted runs keeps
 *    only its last run. Excel itself writes shared strings, whose runs are all kept.
 */
import type ExcelJSModule from 'exceljs';
import { InputFileError } from '../../kernel/errors.js';
import { allBlank } from './csv.js';
import { cellText, shownOtherwise, columnLetter } from './xlsx-cells.js';
import type { CellNote, NumberColumns, OpenedTable, RawRow } from './types.js';
import { guardWorkbookZip, type WorkbookFacts } from './zip-guard.js';

/** The most data rows read from one sheet. */
export const MAX_XLSX_ROWS = 250_000;
const RUN = 1000;

interface SheetRow {
  number: number;
  values: unknown[];
  /** The cell's number format (styles are cached): what Excel shows may not be the number. */
  getCell?(col: number): { numFmt?: string | undefined };
}

interface SheetInfo {
  name: string;
  state?: string;
}

const RESAVE = 'open it in Excel (or LibreOffice), save it again as .xlsx, and drop the new file in; or save it as "CSV UTF-8"';

function unreadable(err: unknown): InputFileError {
  if (err instanceof InputFileError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new InputFileError(`the workbook cannot be read: it is damaged or not a real .xlsx file (${detail.slice(0, 200)}); ${RESAVE}`, { cause: err });
}

/**
 * How chooseSheet came to the sheet read, for messages naming it: a reseller whose orders sit on a
 * second sheet learns why the first was read and what to name the right one.
 */
function howChosen(sheets: readonly SheetInfo[], wanted: SheetInfo | undefined): string {
  if (wanted === undefined) return 'the first in the file; the workbook lists no sheets';
  if (wanted.name.trim().toLowerCase() === 'orders') return 'named "orders"';
  const first = wanted === sheets[0] ? 'the first' : wanted.state === undefined || wanted.state === 'visible' ? 'the first visible' : 'the first; none is visible';
  return `${first}; no sheet is named "orders"`;
}

/** The sheet to read: `orders` (any case), else the first visible one, else the first. */
export function chooseSheet<S extends SheetInfo>(sheets: readonly S[]): S | undefined {
  const named = sheets.find((s) => s.name.trim().toLowerCase() === 'orders');
  return named ?? sheets.find((s) => s.state === undefined || s.state === 'visible') ?? sheets[0];
}

/**
 * exceljs 4.4.0's streaming reader now and then loses a small part it read (seen under load: the
 * workbook's sheet list comes back undefined, about once in 300 reads of a valid file). The
 * archive has passed zip-guard.ts by then, so an exceljs failure before the header is read is
 * tried again, twice, before the file is called damaged.
 */
const TRIES = 3;

export async function openXlsx(path: string, opts: { maxRows?: number } = {}): Promise<OpenedTable> {
  let facts: WorkbookFacts;
  try {
    facts = await guardWorkbookZip(path);
  } catch (err) {
    if (err instanceof InputFileError) throw err;
    throw unreadable(err);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await openSheet(path, facts, opts.maxRows ?? MAX_XLSX_ROWS);
    } catch (err) {
      // Our own refusals carry no cause; exceljs's failures are wrapped with theirs.
      if (!(err instanceof InputFileError) || err.cause === undefined || attempt >= TRIES) throw err;
    }
  }
}

/** exceljs is loaded on the first workbook only: it costs ~20 MB, which a CSV-only daemon never pays. */
let excel: Promise<typeof ExcelJSModule> | undefined;

async function openSheet(path: string, facts: WorkbookFacts, maxRows: number): Promise<OpenedTable> {
  const ExcelJS = await (excel ??= import('exceljs').then((m) => m.default));
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(path, {
    sharedStrings: 'cache',
    // Styles are needed to tell a date from a number; hyperlinks and other parts are not read.
    styles: 'cache',
    hyperlinks: 'ignore',
    worksheets: 'emit',
    entries: 'ignore',
  });
  tagSheetParts(reader);
  // The sheet is chosen from the workbook's own list (zip-guard.ts), never from what exceljs has
  // parsed by the time a sheet streams past: it names a sheet only when xl/workbook.xml came
  // earlier in the archive, and otherwise every sheet was nameless and the first was read.
  const wanted = chooseSheet(facts.sheets.filter((sh) => sh.part === undefined || sh.part.startsWith('xl/worksheets/')));
  let sheetName = '';
  /** Cells of the sheet read whose number was stored as `1.2E+5` or `123.0` (zip-guard.ts). */
  let writtenNumbers: ReadonlySet<string> = new Set();
  let closed = false;
  const stopReading = (): void => {
    closed = true;
    (reader as unknown as { stream?: { destroy?: () => void } }).stream?.destroy?.();
  };

  async function* sheetRows(): AsyncGenerator<SheetRow> {
    let found = false;
    for await (const ws of reader) {
      const sheet = ws as unknown as { name: string; [PART]?: string; iterator?: { destroy?: () => void; on?: (event: string, fn: () => void) => void } } & AsyncIterable<SheetRow>;
      // Without a list in the workbook (no xl/workbook.xml), the first sheet in the archive.
      const isWanted = wanted === undefined ? true : sheet[PART] === wanted.part;
      if (found || !isWanted) {
        // Not read: release the part's stream (a temp file when exceljs had to park it). exceljs
        // removes that temp file as soon as we move on, which can be before the stream has opened
        // it: the ENOENT then comes as an 'error' nobody listens to, and it killed the daemon
        // (seen once in the bad-input corpus under a loaded full test run). A discarded part's
        // stream has nothing to report.
        sheet.iterator?.on?.('error', () => {});
        sheet.iterator?.destroy?.();
        continue;
      }
      found = true;
      sheetName = wanted?.name ?? sheet.name;
      writtenNumbers = facts.writtenNumbers.get(sheet[PART] ?? '') ?? new Set();
      for await (const row of sheet) {
        if (closed) return;
        yield row;
      }
    }
    if (!found) {
      const where = wanted?.part === undefined ? '' : `, whose cells should be in ${wanted.part}`;
      throw new InputFileError(`the workbook has no sheet to read${wanted ? ` (looked for "${wanted.name}"${where})` : ''}; ${RESAVE}`);
    }
  }

  const rows = sheetRows();
  const next = async (): Promise<SheetRow | undefined> => {
    try {
      const r = await rows.next();
      return r.done ? undefined : r.value;
    } catch (err) {
      stopReading();
      throw unreadable(err);
    }
  };

  let header: SheetRow | undefined;
  for (let r = await next(); r !== undefined; r = await next()) {
    if (!allBlank(Array.from(r.values, (v) => cellText(v).text))) {
      header = r;
      break;
    }
  }
  if (!header) {
    stopReading();
    throw new InputFileError(`the sheet "${sheetName || 'first'}" is empty; expected a header row naming the columns (pid, userId, …) and order rows below it`);
  }
  const headerCells = Array.from(header.values, (v) => cellText(v).text);
  let width = 0;
  for (let c = 1; c < headerCells.length; c++) if ((headerCells[c] ?? '').trim() !== '') width = c;
  const columns = Array.from({ length: width }, (_, i) => headerCells[i + 1] ?? '');

  const numbers = new ColumnKinds();

  async function* batches(): AsyncGenerator<RawRow[]> {
    let index = 0;
    let nextLine = header!.number + 1;
    let run: RawRow[] = [];
    const push = (row: RawRow): void => {
      if (index >= maxRows) {
        throw new InputFileError(`the sheet "${sheetName}" has more than ${maxRows.toLocaleString('en-US')} order rows; split the orders into smaller files`);
      }
      index++;
      run.push(row);
    };
    try {
      for (let r = await next(); r !== undefined; r = await next()) {
        const row = toRow(r, width, index, writtenNumbers, numbers);
        if (row === undefined) continue; // blank: emitted only if an order row follows
        for (; nextLine < r.number; nextLine++) push({ index, line: nextLine, cells: [] });
        row.index = index;
        push(row);
        nextLine = r.number + 1;
        if (run.length >= RUN) {
          yield run;
          run = [];
        }
      }
      if (run.length > 0) yield run;
    } finally {
      stopReading();
    }
  }

  return { columns, meta: { format: 'xlsx', sheet: sheetName, sheetChosen: howChosen(facts.sheets, wanted), numbers }, batches: batches(), close: stopReading };
}

/** Where a worksheet reader's cells come from: `xl/worksheets/sheet2.xml`. */
const PART = Symbol('topup.part');

/**
 * Tags every worksheet exceljs 4.4.0 emits with the part it streams (it knows only the number in
 * `sheetN.xml`, and a name only when xl/workbook.xml came earlier), so the sheet is matched by its
 * part against the workbook's own list. exceljs reads only parts named `xl/worksheets/sheetN.xml`.
 */
function tagSheetParts(reader: unknown): void {
  const r = reader as { model?: { sheets?: unknown[] }; _parseWorksheet?: (iterator: unknown, sheetNo: string) => Iterable<{ value?: Record<symbol, unknown> }> };
  const parse = r._parseWorksheet;
  // exceljs is pinned (package.json); a version without this method fails the workbook tests.
  if (typeof parse !== 'function') throw new Error('exceljs has no _parseWorksheet: the pinned version was changed');
  r._parseWorksheet = function* (iterator: unknown, sheetNo: string) {
    // exceljs reads `this.model.sheets` here, and has no model before xl/workbook.xml: a sheet
    // streamed ahead of it threw "Cannot read properties of undefined (reading 'sheets')". An
    // empty list leaves the sheet nameless, which is all we need (the part tells which it is);
    // xl/workbook.xml, when it comes, replaces the model as before.
    r.model ??= { sheets: [] };
    for (const event of parse.call(r, iterator, sheetNo)) {
      if (event.value) event.value[PART] = `xl/worksheets/sheet${sheetNo}.xml`;
      yield event;
    }
  };
}

/** Per column: did every filled cell hold a number? (see types.ts NumberColumns) */
class ColumnKinds implements NumberColumns {
  readonly #numeric: (boolean | undefined)[] = [];
  seen(col: number, isNumber: boolean): void {
    if (this.#numeric[col] !== false) this.#numeric[col] = isNumber;
  }
  columns(): number[] {
    const out: number[] = [];
    this.#numeric.forEach((n, i) => {
      if (n === true) out.push(i);
    });
    return out;
  }
}

/** A sheet row as a RawRow, or undefined when every cell is blank. */
function toRow(r: SheetRow, width: number, index: number, writtenNumbers: ReadonlySet<string>, kinds: ColumnKinds): RawRow | undefined {
  const cells: string[] = new Array<string>(width).fill('');
  let notes: Map<number, CellNote> | undefined;
  let beyond: string | undefined;
  let blank = true;
  const values = r.values;
  for (let c = 1; c < values.length; c++) {
    const v = values[c];
    if (v === undefined || v === null) continue;
    const cell = cellText(v);
    const { text } = cell;
    // A whole number the file stored as `1.2E+5` or `123.0`: not what anyone typed as an id.
    const note =
      cell.note ??
      (typeof v === 'number' && ((writtenNumbers.size > 0 && writtenNumbers.has(`${columnLetter(c)}${r.number}`)) || shownOtherwise(v, r.getCell?.(c).numFmt))
        ? 'inexact-number'
        : undefined);
    const filled = text.trim() !== '' || note !== undefined;
    if (filled) blank = false;
    if (c > width) {
      if (filled && beyond === undefined) beyond = `cell ${columnLetter(c)}${r.number} holds "${text.slice(0, 40)}", but its column has no header; give the column a header or clear the cell`;
      continue;
    }
    cells[c - 1] = text;
    if (filled) kinds.seen(c - 1, typeof v === 'number' && Number.isFinite(v));
    if (note !== undefined) (notes ??= new Map()).set(c - 1, note);
  }
  if (blank) return undefined;
  const row: RawRow = { index, line: r.number, cells };
  if (notes) row.notes = notes;
  if (beyond) row.parseError = beyond;
  return row;
}
