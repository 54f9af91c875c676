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
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { extname } from 'node:path';
import { InputFileError } from '../../errors.js';
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

/**
 * Opens an order file of any accepted format: the header is read and mapped (file errors are
 * thrown as InputFileError), the rows are left to stream.
 */
export async function openOrderFile(path: string): Promise<OrderFile> {
  const which = formatOfName(path);
  if ('refused' in which) throw new InputFileError(which.refused);
  const table = await READERS[extname(path).toLowerCase()]!.open(path);
  try {
    return { header: { header: mapHeader(table.columns), ...table.meta }, batches: table.batches, close: table.close };
  } catch (err) {
    table.close();
    throw err;
  }
}

/** sha256 hex of the file's bytes, streamed. */
export async function contentHash(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
