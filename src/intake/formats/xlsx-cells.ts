/**
 * A workbook cell, as exceljs's streaming reader hands it over, → the text the row pipeline
 * reads, plus a note when the text alone would hide what the cell was (see CellNote).
 *
 * What exceljs gives (lib/stream/xlsx/worksheet-reader.js): a string for shared and inline
 * strings; `{ richText: [{ text }] }` for formatted shared strings; a number (parseFloat of the
 * stored value) for number cells; a Date for number cells whose style is a date format (only
 * when styles are read); a boolean; `{ error: '#N/A' }`; and `{ formula, result }` for any cell
 * with a formula, `result` being the value cached at the last save (absent when none was saved).
 */
import type { CellNote } from './types.js';

/** Excel keeps 15 significant digits of a number: a longer whole number has lost digits already. */
const MAX_EXACT_ID = 1e15;

export interface CellText {
  text: string;
  note?: CellNote;
}

const PLAIN: CellText = { text: '' };

export function cellText(value: unknown): CellText {
  if (value === null || value === undefined) return PLAIN;
  if (typeof value === 'string') return { text: value };
  if (typeof value === 'number') return numberText(value);
  if (typeof value === 'boolean') return { text: value ? 'TRUE' : 'FALSE', note: 'boolean' };
  if (value instanceof Date) return { text: dateText(value), note: 'date' };
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if ('formula' in v || 'sharedFormula' in v) {
      // No saved result (openpyxl writes `<f>…</f><v></v>`; exceljs then gives no result, or NaN
      // for an empty number): the cell reads empty, and must say so (trial s34: a note cell came
      // out empty with no word).
      const r = v.result;
      const unsaved = r === undefined || r === null || r === '' || (typeof r === 'number' && Number.isNaN(r));
      return { text: formulaResult(r), note: unsaved ? 'formula-unsaved' : 'formula' };
    }
    if ('error' in v) return { text: String(v.error ?? '#ERROR'), note: 'error' };
    if (Array.isArray(v.richText)) return { text: (v.richText as { text?: unknown }[]).map((r) => (typeof r.text === 'string' ? r.text : '')).join('') };
    if (typeof v.text === 'string') return { text: v.text };
  }
  return { text: String(value), note: 'error' };
}

function numberText(n: number): CellText {
  if (!Number.isFinite(n)) return { text: '', note: 'error' };
  // A whole number below 10^21 prints without an exponent; anything else is written out in full.
  const text = Number.isInteger(n) && Math.abs(n) < 1e21 ? String(n) : n.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20 });
  return Number.isSafeInteger(n) && n >= 0 && n < MAX_EXACT_ID ? { text } : { text, note: 'inexact-number' };
}

/** `2024-01-05`, or `2024-01-05T10:30:00` when the cell has a time (exceljs gives dates in UTC). */
function dateText(d: Date): string {
  if (Number.isNaN(d.getTime())) return '';
  const iso = d.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19);
}

function formulaResult(result: unknown): string {
  if (result === undefined || result === null) return '';
  if (typeof result === 'number' && Number.isNaN(result)) return '';
  return cellText(result).text;
}

/** `A`, `B`, … `AA` for a 1-based column number: how a person finds the cell. */
export function columnLetter(n: number): string {
  let s = '';
  for (let c = n; c > 0; c = Math.floor((c - 1) / 26)) s = String.fromCharCode(65 + ((c - 1) % 26)) + s;
  return s;
}

/**
 * A whole number whose id is not what the cell holds, though the number itself is exact:
 *  - a zero-padded format (`000000000000`): Excel shows 000081234567, the cell holds 81234567,
 *    and the player id is the one shown;
 *  - 12 digits or more with at most 6 significant ones (123457000000): a CSV whose ids Excel
 *    had already shown as 1,23457E+11 and that was saved again as a workbook. The digits after
 *    the sixth are gone; no real id is expected to end in six zeros.
 * Both get the `inexact-number` note, which refuses the cell in an id column with the "format the
 * column as Text" hint, like the rounded numbers of a CSV.
 */
export function shownOtherwise(n: number, numFmt: string | undefined): boolean {
  if (!Number.isInteger(n) || n < 0) return false;
  const digits = String(n);
  if (numFmt !== undefined && /^0+$/.test(numFmt) && numFmt.length > digits.length) return true;
  return n >= 1e11 && digits.replace(/0+$/, '').length <= 6;
}
