/**
 * One way in for every order file: the extension picks the reader (CSV text or an .xlsx
 * workbook), both hand the same rows to the same pipeline, and every other kind of file is
 * refused with what to do instead.
 *
 * Choices:
 *  - By extension, not by content: a reseller names the file, and a workbook renamed `.csv` is
 *    told to get its `.xlsx` name back (encoding.ts) rather than read as something it is not named.
 *  - `.tsv` and `.txt` are read as delimited text like `.csv` (the delimiter is sniffed: a tab
 *    is one of the candidates); a `.txt` that is not a table is refused for lacking the header.
 *  - Only `.xlsx` workbooks are read; `.xlsm`/`.xlsb`/`.xls`/`.ods`/`.numbers` are refused with
 *    the menu path that saves the same sheet as .xlsx or CSV.
 *  - An `.xls` is looked into before it is described (refusedFile): many shops and web tools
 *    save CSV text, an .xlsx or an HTML table under an .xls name, and "an old Excel 97–2003
 *    workbook, open it in Excel" is wrong advice for those. CSV text named .xls is still refused,
 *    not read: the rename to .csv is one step, and topup never reads a file as something its
 *    name says it is not (the result would be named after an .xls that is not one).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { basename, extname } from 'node:path';
import { InputFileError } from '../../kernel/errors.js';
import { mapHeader } from '../columns.js';
import { openCsv } from './csv.js';
import type { FileFormat, OpenedTable, OrderFile } from './types.js';

export type { CellNote, FileFormat, OrderFile, ParsedFileHeader, RawRow } from './types.js';
export { allBlank } from './csv.js';

const SAVE = 'save it from your spreadsheet as .xlsx (Excel Workbook) or as "CSV UTF-8 (comma delimited)" and drop it in again';

/** Extensions (lower case, with the dot) and what to say when one arrives. */
const REFUSED: Readonly<Record<string, string>> = {
  '.xls': `this is an old Excel 97–2003 workbook (.xls), which topup does not read; open it in Excel and ${SAVE.replace('save it from your spreadsheet', 'save it')}`,
  '.xlsm': `this is a macro-enabled workbook (.xlsm); ${SAVE}`,
  '.xlsb': `this is a binary Excel workbook (.xlsb), which topup does not read; ${SAVE}`,
  '.ods': `this is an OpenDocument spreadsheet (.ods, LibreOffice / OpenOffice), which topup does not read; in LibreOffice use File > Save As and choose "Excel 2007-365 (.xlsx)" or "Text CSV (.csv)" with UTF-8, then drop that file in`,
  '.numbers': 'this is an Apple Numbers file, which topup does not read; in Numbers use File > Export To > Excel… (or CSV…) and drop that file in',
  '.pdf': `this is a PDF, not a table topup can read; ${SAVE}`,
  '.json': `this is a JSON file; topup reads order tables, not JSON; ${SAVE}`,
  '.zip': 'this is a ZIP archive; unpack it and drop the order file itself (.csv or .xlsx)',
};

const READERS: Readonly<Record<string, { format: FileFormat; open: (path: string) => Promise<OpenedTable> }>> = {
  '.csv': { format: 'csv', open: openCsv },
  '.tsv': { format: 'csv', open: openCsv },
  '.txt': { format: 'csv', open: openCsv },
  // Loaded on the first workbook: a CSV-only run never pays for the ZIP and exceljs code.
  '.xlsx': { format: 'xlsx', open: async (path) => (await import('./xlsx.js')).openXlsx(path) },
};

/** The format a file name will be read as, or the reason it will not be read. */
export function formatOfName(name: string): { format: FileFormat } | { refused: string } {
  const ext = extname(name).toLowerCase();
  const reader = READERS[ext];
  if (reader) return { format: reader.format };
  if (REFUSED[ext]) return { refused: REFUSED[ext] };
  if (ext === '') return { refused: `the file name has no extension, so topup cannot tell what it is; name it .csv (CSV text) or .xlsx (Excel workbook), or ${SAVE}` };
  return { refused: `topup does not read ${ext} files; it reads order tables as .csv (CSV text) or .xlsx (Excel workbook); ${SAVE}` };
}

/** What an .xls really holds, from its first bytes. */
function xlsContent(head: Buffer): 'ole2' | 'zip' | 'markup' | 'text' | 'binary' {
  if (head.subarray(0, 4).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0]))) return 'ole2';
  if (head.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) return 'zip';
  let text: string;
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    const le = head[0] === 0xff;
    const body = Buffer.from(head.subarray(2, 2 + ((head.length - 2) & ~1)));
    if (!le) body.swap16();
    text = body.toString('utf16le');
  } else {
    // The head may end inside a character: only the part before the last few bytes must be UTF-8.
    const start = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    const body = head.subarray(start, Math.max(start, head.length - (head.length >= 4096 ? 3 : 0)));
    if (body.includes(0) || !isUtf8(body)) return 'binary';
    text = body.toString('utf8');
  }
  if (/^\s*</.test(text)) return 'markup';
  return /[\r\n,;\t]/.test(text) || text.trim() !== '' ? 'text' : 'binary';
}

/**
 * Why a file is not read, looking into an .xls to say what it really is; undefined when its
 * format is one topup reads.
 */
export async function refusedFile(path: string): Promise<string | undefined> {
  const which = formatOfName(path);
  if (!('refused' in which)) return undefined;
  if (extname(path).toLowerCase() !== '.xls') return which.refused;
  let head: Buffer;
  try {
    const fh = await open(path, 'r');
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      head = buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch {
    return which.refused;
  }
  const stem = basename(path).slice(0, -'.xls'.length) || 'orders';
  switch (head.length === 0 ? 'binary' : xlsContent(head)) {
    case 'text':
      return `this file is named .xls but is not an Excel workbook: it holds CSV text (the kind of .xls many shops and web tools export); rename it to "${stem}.csv" and drop it in again (or save it from your spreadsheet as "CSV UTF-8 (comma delimited)")`;
    case 'zip':
      return `this file is named .xls but is an Excel workbook of the current kind (.xlsx); rename it to "${stem}.xlsx" and drop it in again`;
    case 'markup':
      return `this file is named .xls but holds a web page (HTML/XML), not an Excel workbook (some shops export tables this way); open it in Excel and ${SAVE.replace('save it from your spreadsheet', 'save it')}`;
    default:
      return which.refused;
  }
}

/**
 * Opens an order file of any accepted format: the header is read and mapped (file errors are
 * thrown as InputFileError), the rows are left to stream.
 */
export async function openOrderFile(path: string): Promise<OrderFile> {
  const refused = await refusedFile(path);
  if (refused !== undefined) throw new InputFileError(refused);
  const table = await READERS[extname(path).toLowerCase()]!.open(path);
  try {
    return { header: { header: mapHeader(table.columns), ...table.meta }, batches: table.batches, close: table.close };
  } catch (err) {
    table.close();
    // A workbook's header error names the sheet read and why that one: the orders may sit on
    // another sheet (a "Read me" first, the orders second), which is then the thing to fix.
    if (err instanceof InputFileError && table.meta.format === 'xlsx' && table.meta.sheet) {
      throw new InputFileError(`read the sheet "${table.meta.sheet}" (${table.meta.sheetChosen ?? 'the sheet read'}): ${err.message}`);
    }
    if (err instanceof InputFileError && table.meta.format === 'csv') {
      const other = otherDelimiter(table.columns, table.meta.delimiter);
      if (other !== undefined) throw new InputFileError(`${err.message}. ${other}`);
    }
    throw err;
  }
}

const DELIMITER_NAMES: Readonly<Record<string, string>> = { ',': "','", ';': "';'", '\t': "'\\t' (a tab)", '|': "'|'" };

/**
 * When a text file's header is refused, whether it was split on the wrong delimiter: a header
 * that, split on another of , ; tab |, names the columns topup needs. The trial's file used one
 * topup did not pick (a '|' file, or a `sep=,` line over ';' rows), and the message only said the
 * pid column was missing. Returns the sentence naming it, or undefined.
 */
export function otherDelimiter(columns: readonly string[], used: string | undefined): string | undefined {
  for (const d of [';', '\t', '|', ',']) {
    if (d === used || !columns.some((c) => c.includes(d))) continue;
    const split = columns.flatMap((c) => c.split(d)).map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
    try {
      mapHeader(split);
    } catch {
      continue;
    }
    const how = d === '|'
      ? 'topup finds , ; and tab by itself; for \'|\' put the line sep=| first in the file, or save it again as CSV'
      : `topup read it as ${DELIMITER_NAMES[used ?? ','] ?? `'${used}'`}-separated (a sep= line, or more of those in the header); remove the sep= line or save the file again with one delimiter`;
    return `This file seems to use ${DELIMITER_NAMES[d]} as its delimiter (its header then names ${split.slice(0, 4).map((c) => `"${c}"`).join(', ')}${split.length > 4 ? ', …' : ''}): ${how}`;
  }
  return undefined;
}

/** sha256 hex of the file's bytes, streamed. */
export async function contentHash(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
