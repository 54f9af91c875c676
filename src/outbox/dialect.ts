/**
 * The dialect a batch's result is written in, decided once when the batch is stored (load.ts)
 * and kept on the batch, so a result written after a restart looks the same.
 *
 * - CSV input: the result uses the input's delimiter (`,` `;` or tab) and has a UTF-8 BOM when
 *   the input had a BOM (UTF-8 or UTF-16: the result itself is always UTF-8). A semicolon-locale
 *   Excel that opened the input therefore shows the result in columns, with its names intact.
 *   Its lines end as the input's first line did: CR LF (Excel, Windows tools) or LF. Read from the
 *   claimed file's first bytes here, so the parser need not report it.
 * - .xlsx input (by the file name's extension): a workbook result is written too; the CSV result
 *   is comma-separated with a BOM, the form every Excel reads as UTF-8. The input's columns that
 *   held numbers in every filled cell are kept (numberColumns): the workbook result writes them
 *   as numbers again.
 * - `topup retry` batches read a CSV that topup wrote itself: they keep the dialect of the batch
 *   they retry, so staff get the retry's result in the form of the file they dropped.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { Runtime } from '../runtime.js';
import type { Batch, InputDialect } from '../store/batches.js';
import { DEFAULT_DIALECT } from '../store/batches.js';
import type { NumberColumns } from '../intake/formats/types.js';

const DELIMITERS: readonly InputDialect['delimiter'][] = [',', ';', '\t'];

export function isWorkbookName(sourceName: string): boolean {
  return /\.xlsx$/i.test(sourceName);
}

export function inputDialect(rt: Pick<Runtime, 'config' | 'batches'>, batch: Batch, parsed: { delimiter?: string; bom?: boolean; numbers?: NumberColumns }): InputDialect {
  if (batch.retryOf) {
    const retried = rt.batches.get(batch.retryOf);
    // The retry's own file is a CSV topup wrote, with columns of its own: number columns of the
    // workbook retried are not known there, so its workbook result has text cells.
    if (retried) {
      const { numberColumns: _, ...dialect } = retried.dialect;
      return dialect;
    }
  }
  if (isWorkbookName(batch.sourceName)) {
    // Read once every row is (load.ts stores the dialect after the last row).
    const numberColumns = parsed.numbers?.columns() ?? [];
    return { delimiter: ',', bom: true, xlsx: true, ...(numberColumns.length > 0 ? { numberColumns } : {}) };
  }
  const delimiter = DELIMITERS.find((d) => d === parsed.delimiter) ?? DEFAULT_DIALECT.delimiter;
  const path = join(rt.config.home, batch.jobFile);
  const crlf = lineEndingOf(path) === '\r\n';
  return { delimiter, bom: parsed.bom === true, xlsx: false, ...(crlf ? { eol: '\r\n' as const } : {}), ...(startsWithSepLine(path, delimiter) ? { sepLine: true as const } : {}) };
}

const SNIFF_BYTES = 64 * 1024;

/** Whether the file (UTF-8, after a BOM) begins with Excel's `sep=X` line for the delimiter it was read with. */
export function startsWithSepLine(path: string, delimiter: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const buf = Buffer.alloc(16);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const head = buf.subarray(0, n).toString('utf8').replace(/^\uFEFF/, '');
    const m = /^sep=(.)[ \t]*(?:\r\n|\n|\r)/i.exec(head);
    return m !== null && m[1] === delimiter;
  } finally {
    closeSync(fd);
  }
}

/**
 * How the file's first line ends: CR LF in UTF-8 (0D 0A) or UTF-16 of either byte order (0D 00 0A
 * 00, 00 0D 00 0A), else LF (also when the file cannot be read, or has a single line).
 */
export function lineEndingOf(path: string): '\r\n' | '\n' {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '\n';
  }
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const n = readSync(fd, buf, 0, SNIFF_BYTES, 0);
    const lf = buf.subarray(0, n).indexOf(0x0a);
    if (lf < 1) return '\n';
    if (buf[lf - 1] === 0x0d) return '\r\n';
    return lf >= 2 && buf[lf - 1] === 0x00 && buf[lf - 2] === 0x0d ? '\r\n' : '\n';
  } finally {
    closeSync(fd);
  }
}
