/**
 * outbox/<name>.result.xlsx: the same columns and rows as the CSV result, for batches dropped as
 * .xlsx workbooks.
 *
 * - Every cell is a text cell (an inline string), whatever it looks like: ids keep their leading
 *   zeros and all their digits, and a value such as `=1+1` or `+62 812` is text, never a formula.
 *   So no cell gets the `'` the CSV result uses.
 * - amountUsd and netUsd are number cells shown with two decimals (`0.00`: 3.10, not 3.1): staff
 *   sum them.
 * - The input's own columns that held numbers in every filled cell (InputDialect.numberColumns,
 *   e.g. a shop's price or reference number) are number cells again, so a SUM over them works;
 *   every other input cell stays text.
 * - No other cell styles: exceljs styles every cell one by one, which tripled the time of a
 *   100,000-row workbook (3 s → 9 s); the header row is frozen instead. The money format is one
 *   shared style of Excel's built-in format 2 (`0.00`), given to the money cells only (moneyStyle).
 * - Characters XML cannot hold (control characters other than tab and line breaks) are left out;
 *   a cell longer than Excel's limit of 32,767 characters is cut there.
 * - Written with exceljs's streaming writer, a page of rows at a time, to a temporary file (mode
 *   0600) beside the result, then fsynced and renamed, as atomic-write.ts does: a reader sees the
 *   old file or the whole new one, and a 100,000-row result never sits in memory as a workbook.
 */
import { createWriteStream, rmSync } from 'node:fs';
import { once } from 'node:events';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type ExcelJS from 'exceljs';
import type { ResultCell, ResultLayout } from './results.js';
import { commitTemp, openTemp } from './atomic-write.js';

const EXCEL_CELL_MAX = 32_767;

/** Loaded at the first workbook written: exceljs adds about 28 MB to every daemon's memory (measured), and most homes never write one. */
let excel: Promise<typeof ExcelJS> | undefined;

/** A literal `_x0041_` would be read back as `A` (OOXML's escape for characters): escape it. */
function textCell(value: string): ExcelJS.CellRichTextValue | null {
  if (value === '') return null;
  let text = value.length > EXCEL_CELL_MAX ? value.slice(0, EXCEL_CELL_MAX) : value;
  if (text.includes('_x')) text = text.replace(/_x[0-9A-Fa-f]{4}_/g, (m) => `_x005F${m}`);
  return { richText: [{ text }] };
}

interface Piped {
  _writableState?: { needDrain?: boolean };
}

/**
 * exceljs's sheet stream hands its XML to the zip without waiting for it (exceljs 4.4.0's
 * StreamBuf ignores write()'s answer), so a fast writer would hold the whole sheet in memory.
 * Waiting for the zip's input to drain after each page keeps memory flat. Bounded: a drain that
 * does not come within 2 s only costs memory, never a stuck write.
 */
async function zipCaughtUp(sheet: ExcelJS.Worksheet): Promise<void> {
  await nextTurn();
  const pipes = (sheet as unknown as { stream?: { pipes?: (Piped & NodeJS.EventEmitter)[] } }).stream?.pipes ?? [];
  for (const p of pipes) {
    if (!p._writableState?.needDrain) continue;
    const timer = new AbortController();
    await Promise.race([once(p, 'drain', { signal: timer.signal }), sleep(2_000, undefined, { signal: timer.signal })]).catch(() => undefined);
    timer.abort();
  }
}

/** Excel's built-in number format 2 is `0.00`: no numFmts entry needed. */
const BUILTIN_TWO_DECIMALS = 2;
const MONEY = '0.00';

/**
 * useStyles: false keeps exceljs's style table a stub that gives every cell style 0 (the fast
 * path, see the top). It gets one more style here, `0.00`, handed to cells whose numFmt is MONEY
 * and to no other: the per-cell style work stays off for every other cell.
 */
function moneyStyle(book: unknown): void {
  const styles = (book as { styles?: { addStyleModel?: (model: { numFmt?: string } | undefined, type: unknown) => number; model?: { styles?: object[] } } }).styles;
  const base = styles?.addStyleModel;
  const table = styles?.model?.styles;
  // exceljs is pinned (package.json); the result tests check the format, should this ever miss.
  if (!styles || typeof base !== 'function' || !Array.isArray(table)) return;
  let moneyId: number | undefined;
  styles.addStyleModel = (model, type) => {
    if (model?.numFmt !== MONEY) return base.call(styles, model, type);
    moneyId ??= table.push({ numFmtId: BUILTIN_TWO_DECIMALS, fontId: 0, fillId: 0, borderId: 0, xfId: 0, applyNumberFormat: true }) - 1;
    return moneyId;
  };
}

/** A cell of a number column: the number its text was read from; text when it is not one (blank, edited). */
function ownNumber(value: ResultCell): ExcelJS.CellValue {
  if (typeof value === 'number') return value;
  const n = value.trim() === '' ? Number.NaN : Number(value);
  return Number.isFinite(n) ? n : textCell(value);
}

export async function writeResultXlsx(path: string, layout: ResultLayout, pages: Iterable<ResultCell[][]>, numberColumns: readonly number[] = []): Promise<void> {
  const { stream: { xlsx } } = await (excel ??= import('exceljs').then((m) => m.default));
  const { fd, tmp } = openTemp(path);
  const stream = createWriteStream(tmp, { fd, autoClose: false });
  // A write error (disk full) must fail this write, not the process: exceljs listens for errors
  // only once it finalises, and would wait for 'finish' forever after an earlier one.
  const failed = new Promise<never>((_, reject) => stream.on('error', reject));
  failed.catch(() => undefined);
  try {
    const book = new xlsx.WorkbookWriter({ stream, useStyles: false, useSharedStrings: false });
    moneyStyle(book);
    const sheet = book.addWorksheet('result', { views: [{ state: 'frozen', ySplit: 1 }] });
    // 1-based sheet columns of amountUsd and netUsd; the input's number columns (not the trxid, which we fill).
    const money = layout.ours.flatMap((c, i) => (c === 'amountUsd' || c === 'netUsd' ? [layout.width + i + 1] : []));
    const numeric = new Set(numberColumns.filter((c) => c < layout.width && c !== layout.trxidCol));
    sheet.columns = layout.header.map((name) => ({ width: Math.min(Math.max(name.length + 2, 10), 40) }));
    sheet.addRow(layout.header.map(textCell)).commit();
    for (const page of pages) {
      for (const cells of page) {
        const row = sheet.addRow(cells.map((c, i) => (numeric.has(i) ? ownNumber(c) : typeof c === 'number' ? c : textCell(c))));
        for (const col of money) {
          const cell = row.getCell(col);
          if (typeof cell.value === 'number') cell.numFmt = MONEY;
        }
        row.commit();
      }
      // Sends and polls run between pages, and the zip takes what the page wrote.
      await Promise.race([zipCaughtUp(sheet), failed]);
    }
    sheet.commit();
    await Promise.race([book.commit(), failed]);
  } catch (err) {
    // destroy() closes the descriptor even with autoClose off: wait for it, then drop the file.
    await new Promise<void>((resolve) => stream.destroy().once('close', () => resolve()));
    rmSync(tmp, { force: true });
    throw err;
  }
  commitTemp(fd, tmp, path);
}
