/**
 * The dialect a batch's result is written in, decided once when the batch is stored (load.ts)
 * and kept on the batch, so a result written after a restart looks the same.
 *
 * - CSV input: the result uses the input's delimiter (`,` `;` or tab) and has a UTF-8 BOM when
 *   the input had a BOM (UTF-8 or UTF-16: the result itself is always UTF-8). A semicolon-locale
 *   Excel that opened the input therefore shows the result in columns, with its names intact.
 * - .xlsx input (by the file name's extension): a workbook result is written too; the CSV result
 *   is comma-separated with a BOM, the form every Excel reads as UTF-8.
 * - `topup retry` batches read a CSV that topup wrote itself: they keep the dialect of the batch
 *   they retry, so staff get the retry's result in the form of the file they dropped.
 */
import type { Runtime } from '../runtime.js';
import type { Batch, InputDialect } from '../store/batches.js';
import { DEFAULT_DIALECT } from '../store/batches.js';

const DELIMITERS: readonly InputDialect['delimiter'][] = [',', ';', '\t'];

export function isWorkbookName(sourceName: string): boolean {
  return /\.xlsx$/i.test(sourceName);
}

export function inputDialect(rt: Runtime, batch: Batch, parsed: { delimiter?: string; bom?: boolean }): InputDialect {
  if (batch.retryOf) {
    const retried = rt.batches.get(batch.retryOf);
    if (retried) return retried.dialect;
  }
  if (isWorkbookName(batch.sourceName)) return { delimiter: ',', bom: true, xlsx: true };
  const delimiter = DELIMITERS.find((d) => d === parsed.delimiter) ?? DEFAULT_DIALECT.delimiter;
  return { delimiter, bom: parsed.bom === true, xlsx: false };
}
