/**
 * Reads a CSV order file (also .tsv / .txt, which are the same delimited text): header first,
 * then one RawRow per record, never the whole file in memory.
 *
 * Choices:
 *  - Delimiter: `,`, `;` or tab, whichever occurs most in the header line outside quotes (ties
 *    prefer `,`, then `;`). Excel's `sep=;` first line is honoured and skipped.
 *  - Line endings: LF, CRLF and lone CR, even mixed within one file. A file with no CR at all
 *    (known from the whole-file encoding check) is parsed with LF as the only record delimiter:
 *    the same records, without csv-parse trying three delimiters at every byte.
 *  - Quotes inside an unquoted field (`Ann "AJ" Lee`) are kept as text (csv-parse relax_quotes).
 *  - A record with fewer cells than the header, or with extra cells that are not empty, gets a
 *    parseError. Extra *empty* cells (a trailing `;`), or missing cells under blank header names
 *    at the end, are harmless: the named columns still line up.
 *  - An unclosed quote swallows the rest of the file into one record: that is one row with a
 *    parseError at the line where the quote opened.
 *  - A blank line is a row of one empty cell, not a parseError; validation reports it as "empty row".
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline, type Readable, type TransformCallback } from 'node:stream';
import { Parser, type CsvError, type Options } from 'csv-parse';
import { InputFileError } from '../../kernel/errors.js';
import { checkEncoding, sniffEncoding, toUtf8 } from '../encoding.js';
import type { OpenedTable, RawRow } from './types.js';

const HEAD_BYTES = 256 * 1024;

/** The header row and a stream of runs of rows (one run per chunk of the file). */
export async function openCsv(path: string): Promise<OpenedTable> {
  const head = await readHead(path);
  const sniffed = sniffEncoding(head);
  const text = await checkEncoding(path, sniffed);

  const headText = new TextDecoder(sniffed.encoding === 'utf8' ? 'utf-8' : sniffed.encoding === 'utf16le' ? 'utf-16le' : 'utf-16be').decode(
    head.subarray(sniffed.bomLength),
    { stream: true },
  );
  const { delimiter, sepLine } = detectDelimiter(headText);

  const parser = new ChunkedParser({
    delimiter,
    record_delimiter: text.hasCarriageReturn ? ['\r\n', '\n', '\r'] : ['\n'],
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: false,
    skip_records_with_error: true,
    // Pushed into the record stream so a skipped record keeps its place among the others.
    on_skip: (err) => {
      parser.push({ skipped: err ?? new Error('unreadable record') });
      return undefined;
    },
  });
  // Errors surface through the record reader below. UTF-8 goes to the parser as it is (past
  // any BOM); only UTF-16 needs a decoding stage.
  const surfaced = (): void => {};
  if (sniffed.encoding === 'utf8') pipeline(createReadStream(path, { start: sniffed.bomLength }), parser, surfaced);
  else pipeline(createReadStream(path), toUtf8(sniffed), parser, surfaced);

  const records = new RecordReader(parser);
  let first = await records.next();
  if (sepLine && first) first = await records.next();
  if (!first) {
    parser.destroy();
    throw new InputFileError('the file has no header row; expected a header naming the columns (pid, userId, …)');
  }
  if (first.parseError) {
    parser.destroy();
    throw new InputFileError(`the header row (line ${first.line}) cannot be read: ${first.parseError}`);
  }
  const columns = first.cells;
  const width = columns.length;
  // Cells under blank header names at the end may be missing: the named columns still line up.
  const minWidth = columns.reduce((last, c, i) => (c.trim() === '' ? last : i + 1), 0);
  let index = 0;
  const toRow = (rec: Rec): RawRow => {
    const row: RawRow = { index: index++, line: rec.line, cells: rec.cells };
    const problem = rec.parseError ?? raggedness(rec.cells, minWidth, width);
    if (problem !== undefined) row.parseError = problem;
    return row;
  };
  async function* batches(): AsyncGenerator<RawRow[]> {
    try {
      for (;;) {
        const recs = await records.nextRun();
        if (!recs) return;
        yield recs.map(toRow);
      }
    } finally {
      parser.destroy();
    }
  }
  return {
    columns,
    meta: { format: 'csv', delimiter, encoding: sniffed.encoding, bom: sniffed.bom },
    batches: batches(),
    close: () => void parser.destroy(),
  };
}

interface Rec {
  line: number;
  cells: string[];
  parseError?: string;
}

type ParserOutput = string[] | { skipped: CsvError | Error };

/**
 * csv-parse's stream parser, pushing the records of each input chunk as one array instead of
 * one object-mode push per record: the per-record stream bookkeeping cost more than a tenth of
 * the intake. Records (and skipped-record markers from on_skip) keep their order.
 */
class ChunkedParser extends Parser {
  #run: ParserOutput[] | null = null;

  constructor(options: Options) {
    // A run is a whole chunk of records: two buffered runs are plenty to keep the parse busy.
    // Parser hands its options on to stream.Transform, whose option this is (csv-parse's type omits it).
    super({ ...options, readableHighWaterMark: 2 } as Options);
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) this.#endRun();
    else if (this.#run !== null) {
      this.#run.push(chunk as ParserOutput);
      return true;
    }
    return super.push(chunk, encoding);
  }

  override _transform(chunk: Buffer, encoding: BufferEncoding, callback: TransformCallback): void {
    this.#run = [];
    super._transform(chunk, encoding, (err) => {
      this.#endRun();
      callback(err);
    });
  }

  override _flush(callback: TransformCallback): void {
    this.#run = [];
    super._flush((err) => {
      this.#endRun();
      callback(err);
    });
  }

  #endRun(): void {
    const run = this.#run;
    this.#run = null;
    if (run !== null && run.length > 0) super.push(run);
  }
}

/**
 * Reads runs of records from the parser with `read()`, one await per chunk of the file.
 * Line numbers are counted, not asked of csv-parse (its per-record `info` costs more than the
 * parse itself, and its line count is wrong for a quoted CRLF): a record starts one line after
 * the one before ends, and ends as many lines later as there are line breaks inside its cells.
 */
class RecordReader {
  readonly #parser: Readable;
  #line = 1;
  #ended = false;
  #error: unknown;
  #wake: (() => void) | null = null;
  /** Records already read from the parser but not yet handed out (only the header's run). */
  #pending: Rec[] = [];

  constructor(parser: Readable) {
    this.#parser = parser;
    const wake = (): void => {
      const w = this.#wake;
      this.#wake = null;
      w?.();
    };
    parser.on('readable', wake);
    parser.on('end', () => {
      this.#ended = true;
      wake();
    });
    parser.on('error', (err) => {
      this.#error = err;
      wake();
    });
  }

  /** The next run of records, or `undefined` at the end of the file. */
  async nextRun(): Promise<Rec[] | undefined> {
    if (this.#pending.length > 0) {
      const run = this.#pending;
      this.#pending = [];
      return run;
    }
    for (;;) {
      if (this.#error !== undefined) throw asInputError(this.#error);
      const out = this.#parser.read() as ParserOutput[] | null;
      if (out !== null) return out.map((o) => this.#record(o));
      if (this.#ended) return undefined;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  /** One record, for the header: `undefined` at the end of the file. */
  async next(): Promise<Rec | undefined> {
    while (this.#pending.length === 0) {
      const run = await this.nextRun();
      if (!run) return undefined;
      this.#pending = run;
    }
    return this.#pending.shift();
  }

  #record(out: ParserOutput): Rec {
    const line = this.#line;
    if (!Array.isArray(out)) {
      // With relax_quotes and relax_column_count the only error left is a quote still open at
      // the end of the file, so nothing follows it.
      return { line, cells: [], parseError: describeSkip(out.skipped) };
    }
    this.#line += 1 + breaksIn(out);
    return { line, cells: out };
  }
}

function asInputError(err: unknown): InputFileError {
  if (err instanceof InputFileError) return err;
  return new InputFileError(`the file cannot be read as CSV: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

function breaksIn(cells: readonly string[]): number {
  let n = 0;
  for (const c of cells) {
    if (c.indexOf('\n') < 0 && c.indexOf('\r') < 0) continue;
    n += c.match(/\r\n|\r|\n/g)?.length ?? 0;
  }
  return n;
}

function describeSkip(err: CsvError | Error): string {
  const code = (err as Partial<CsvError>).code;
  if (code === 'CSV_QUOTE_NOT_CLOSED') return 'a quoted field starts here and is never closed (missing ")';
  return `this record cannot be read as CSV (${err.message})`;
}

function raggedness(cells: string[], minWidth: number, width: number): string | undefined {
  // The common case first: a row as wide as the header is never ragged.
  if (cells.length === width) return undefined;
  if (allBlank(cells)) return undefined;
  if (cells.length < minWidth) return `row has ${cells.length} cells but the header has ${width} columns`;
  if (cells.length > width && cells.slice(width).some((c) => c.trim() !== '')) {
    return `row has ${cells.length} cells but the header has ${width} columns`;
  }
  return undefined;
}

async function readHead(path: string): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, bytesRead);
  } catch (err) {
    throw new InputFileError(`the file cannot be read: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  } finally {
    await fh.close();
  }
}

const CANDIDATES = [',', ';', '\t'] as const;

/** Counts candidate delimiters in the first record outside quotes. */
export function detectDelimiter(text: string): { delimiter: string; sepLine: boolean } {
  const sep = /^sep=([,;\t|])[ \t]*(\r\n|\n|\r|$)/i.exec(text);
  if (sep) return { delimiter: sep[1] as string, sepLine: true };
  const counts = new Map<string, number>(CANDIDATES.map((c) => [c, 0]));
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, (counts.get(ch) as number) + 1);
  }
  let best: string = ',';
  for (const c of CANDIDATES) if ((counts.get(c) as number) > (counts.get(best) as number)) best = c;
  return { delimiter: best, sepLine: false };
}

/** True when no cell holds anything but whitespace (checked without allocating trimmed copies). */
export function allBlank(cells: readonly string[]): boolean {
  for (const c of cells) if (c.length > 0 && NON_BLANK.test(c)) return false;
  return true;
}
const NON_BLANK = /\S/;
