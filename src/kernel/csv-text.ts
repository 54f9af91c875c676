/**
 * The one way this project writes CSV text. csv-stringify quotes a cell holding the record
 * delimiter, but with `\n` as the delimiter a bare carriage return goes out unquoted, and
 * Excel and LibreOffice read a bare CR as the end of a row: `'\r=1+1` became a row `'` and a
 * row whose first cell `=1+1` the spreadsheet ran (found by the LibreOffice round trip in
 * test/security/formula.test.ts). Quoting every cell that holds a CR or LF keeps it one cell.
 */
import { stringify, type Options } from 'csv-stringify/sync';

export function csvText(rows: readonly (readonly unknown[])[], opts: Options = {}): string {
  return stringify(rows as unknown[][], { ...opts, quoted_match: /[\r\n]/ });
}
