/**
 * Spreadsheet formula injection (OWASP "CSV injection"): a cell starting with = + - @, a tab
 * or a carriage return may be run as a formula when the file is opened in Excel or Calc.
 * Such a cell is prefixed with a single quote, which spreadsheets show as text and do not
 * evaluate. Applied to every cell we write: the reseller's own columns, API error texts, codes.
 */
const TRIGGERS = new Set(['=', '+', '-', '@', '\t', '\r']);

export function safeCell(value: string): string {
  return value.length > 0 && TRIGGERS.has(value[0]!) ? `'${value}` : value;
}
