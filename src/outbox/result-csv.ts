/**
 * outbox/<name>.result.csv, in the input's dialect (dialect.ts): its delimiter, its line ending,
 * a UTF-8 BOM when the input had one, and where cells are separated by `;` (the spreadsheet
 * convention of locales that write decimals with a comma) money with a decimal comma, `12,50`,
 * so Excel there sums it.
 * Every text cell goes through safeCell (cell-safety.ts); money cells are our own non-negative
 * figures and need no guard.
 */
import { csvText } from '../kernel/csv-text.js';
import type { InputDialect } from '../store/batches.js';
import { DEFAULT_DIALECT } from '../store/batches.js';
import type { Row } from '../store/rows.js';
import { writeFileAtomic, writeFileAtomicPaced } from './atomic-write.js';
import { safeCell } from './cell-safety.js';
import { csvMoney, resultCells, resultLayout, type ResultCell, type ResultLayout } from './results.js';

function* csvChunks(layout: ResultLayout, dialect: InputDialect, pages: Iterable<ResultCell[][]>): Generator<string> {
  const opts = { delimiter: dialect.delimiter, record_delimiter: dialect.eol ?? '\n' };
  // Excel's `sep=;` line, when the input had one: the result opens split into columns where the input did.
  const sep = dialect.sepLine ? `sep=${dialect.delimiter}${opts.record_delimiter}` : '';
  yield (dialect.bom ? '\uFEFF' : '') + sep + csvText([layout.header.map(safeCell)], opts);
  for (const page of pages) {
    yield csvText(page.map((cells) => cells.map((c) => (typeof c === 'number' ? csvMoney(c, dialect) : safeCell(c)))), opts);
  }
}

/** Written a page at a time, letting the daemon's other work run in between. */
export function writeResultCsv(path: string, layout: ResultLayout, dialect: InputDialect, pages: Iterable<ResultCell[][]>): Promise<void> {
  return writeFileAtomicPaced(path, csvChunks(layout, dialect, pages));
}

export interface ResultFileInput {
  path: string;
  header: readonly string[];
  rows: Iterable<Row>;
  sandbox: boolean;
  dialect?: InputDialect;
  partial?: boolean;
}

/** The same file from rows in hand (tests, tools), a thousand rows per chunk, in one go. */
export function writeResultFile(input: ResultFileInput): void {
  const layout = resultLayout(input.header, input.sandbox);
  function* pages(): Generator<ResultCell[][]> {
    let page: ResultCell[][] = [];
    for (const row of input.rows) {
      page.push(resultCells(row, layout, input.partial));
      if (page.length >= 1000) {
        yield page;
        page = [];
      }
    }
    if (page.length > 0) yield page;
  }
  writeFileAtomic(input.path, csvChunks(layout, input.dialect ?? DEFAULT_DIALECT, pages()));
}
