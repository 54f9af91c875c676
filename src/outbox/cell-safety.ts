/**
 * Spreadsheet formula injection (OWASP "CSV injection"): Excel and Calc may run a CSV cell as a
 * formula — one that opens a link (HYPERLINK), starts a program (DDE `cmd|'/C calc'!A0`), or reads
 * other cells — when the file is opened. Such a cell gets a single `'` in front, which makes it
 * text. Applied to every CSV cell we write (the reseller's own columns, the header, API error
 * texts, codes) and to the CSV reports. Workbook (.xlsx) results need no `'`: their cells are
 * typed text cells, which no spreadsheet evaluates.
 *
 * Exactly these cells get a `'`:
 *  1. a cell starting with `=`, `@`, a tab or a carriage return (OWASP's list, always);
 *  2. a cell starting with `+` or `-`, unless the whole cell is inert (below);
 *  3. a cell starting with spaces or line breaks followed by one of the above (an importer that
 *     trims cells would otherwise meet the trigger).
 *
 * Inert `+`/`-` cells are left exactly as they are, because no spreadsheet can read a function, a
 * cell reference, a program call or a sum into them (no letters, nothing to compute):
 *  - a signed number, digit groups joined by `.` `,` or a space: `-5`, `+5`, `-12.50`, `-1,5`,
 *    `-1 234,56`;
 *  - a phone number: `+`, then only digits, spaces and `-` `.` `/` `(` `)`, where at least two digit
 *    groups stand side by side with only spaces or a parenthesis between them (`62 812`, `1 (555)`):
 *    `+62 812-555-0101`, `+1 (555) 123-4567`, `+44 20 7946 0958`. Two numbers side by side are no
 *    formula a spreadsheet can compute, so the whole cell cannot be one;
 *  - only `+`/`-` signs, as placeholders: `-`, `--`.
 * Anything else starting with `+`/`-` is guarded: `+1+1`, `-2+3` and `+1 - 1` (a spreadsheet would
 * show the result), `-A1`, `+HYPERLINK(…)`, and `+62-812-555-0101`: written without spaces a phone
 * number is a subtraction that Excel would replace by -1406.
 */
const ALWAYS = new Set(['=', '@', '\t', '\r']);
const SIGNED_NUMBER = /^[+-][0-9]+(?:[ .,][0-9]+)*$/;
const PHONE = /^\+[0-9][0-9 ()./-]*[0-9)]$/;
/** Two operands with no operator between them: `2 8`, `1 (`, `) 1`, `7(`. */
const SIDE_BY_SIDE = /[0-9)] +[0-9(]|[0-9]\(|\)[0-9(]/;
const SIGNS_ONLY = /^[+-]+$/;

function inert(value: string): boolean {
  if (SIGNED_NUMBER.test(value) || SIGNS_ONLY.test(value)) return true;
  return PHONE.test(value) && SIDE_BY_SIDE.test(value);
}

/** Whether a CSV cell needs the `'` (the rules above). */
export function needsGuard(value: string): boolean {
  if (value.length === 0) return false;
  const first = value[0]!;
  if (ALWAYS.has(first)) return true;
  const rest = value.replace(/^[ \n\u00a0]+/, '');
  if (rest.length === 0) return false;
  const lead = rest[0]!;
  if (ALWAYS.has(lead)) return true;
  return (lead === '+' || lead === '-') && !inert(rest);
}

export function safeCell(value: string): string {
  return needsGuard(value) ? `'${value}` : value;
}
