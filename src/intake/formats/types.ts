/**
 * What every order-file format hands the row pipeline: a header (the column names as written)
 * and rows of text cells, whatever the file was. Formats differ only in how they get there.
 */
import type { HeaderMap } from '../columns.js';
import type { TextEncoding } from '../encoding.js';

export type FileFormat = 'csv' | 'xlsx';

/**
 * What a workbook cell was, when its text alone would hide it (CSV cells are text and never
 * carry one). The validator refuses these in the columns where they cannot be what was meant:
 *  - `inexact-number`: a number that is not a whole number of at most 15 digits (a spreadsheet
 *    keeps 15 significant digits, so a longer one has already lost its last digits);
 *  - `date`, `boolean`, `error` (`#N/A`): never an id, a quantity or a price;
 *  - `formula`: the text is the result cached at the last save, not what anyone typed;
 *  - `formula-unsaved`: a formula with no saved result at all (openpyxl and pandas write formulas
 *    so: only a spreadsheet program computes them), so its text is empty whatever it computes.
 */
export type CellNote = 'inexact-number' | 'date' | 'boolean' | 'error' | 'formula' | 'formula-unsaved';

export interface RawRow {
  /** 0-based data row (the header is not counted). */
  index: number;
  /** 1-based line in the file where the record starts (for a workbook: the sheet's row number). */
  line: number;
  /** Exactly as read: not padded, not trimmed. */
  cells: string[];
  /** Set when the record could not be read (ragged row, bad quote); cells may then be []. */
  parseError?: string;
  /** Column index → what the cell was, for workbook cells that were not plain text or whole numbers. */
  notes?: ReadonlyMap<number, CellNote>;
}

export interface ParsedFileHeader {
  header: HeaderMap;
  format: FileFormat;
  /** CSV only: the delimiter, the text encoding and whether the file began with a byte-order mark. */
  delimiter?: string;
  encoding?: TextEncoding;
  bom?: boolean;
  /** Workbooks only: the name of the sheet that was read. */
  sheet?: string;
  /** Workbooks only: how that sheet was chosen, e.g. `the first; no sheet is named "orders"`. */
  sheetChosen?: string;
  /** Workbooks only: the columns whose filled cells were all numbers, once every row is read. */
  numbers?: NumberColumns;
}

/**
 * Which columns of a workbook held numbers (number cells, not text that looks like one) in every
 * filled cell: the workbook result writes those back as numbers (outbox/result-xlsx.ts), so a
 * SUM over the reseller's own figures still works. Known only after the last row is read.
 */
export interface NumberColumns {
  /** 0-based column indexes, ascending; a column with no filled cell is not one. */
  columns(): number[];
}

export interface OrderFile {
  header: ParsedFileHeader;
  /** The rows, a buffered run at a time (in file order). */
  batches: AsyncIterable<RawRow[]>;
  /** Stops reading and releases the file; for callers that give up before reading the rows. */
  close(): void;
}

/**
 * What a format reader returns before the header is mapped to order fields (the same mapping
 * for every format, done once in formats/index.ts).
 */
export interface OpenedTable {
  columns: string[];
  meta: Omit<ParsedFileHeader, 'header'>;
  batches: AsyncIterable<RawRow[]>;
  close(): void;
}
