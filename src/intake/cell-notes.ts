/**
 * What to say about a workbook cell that is not what it shows (formats/types.ts CellNote), by
 * the order field its column feeds. Ids (pid, trxid, userId, zoneId, serverId, moreId) take
 * only text or whole numbers of at most 15 digits; no order column takes a date, a formula, an
 * error or TRUE/FALSE. Columns that feed no order field are carried through as text.
 */
import type { OrderField } from './columns.js';
import { SPREADSHEET_HINT } from './field-rules.js';
import type { CellNote } from './formats/types.js';

const ID_FIELDS: ReadonlySet<string> = new Set<OrderField>(['pid', 'trxid', 'userId', 'zoneId', 'serverId', 'moreId']);

/** What a formula with no saved value needs, said the same in a refusal and in a warning. */
export const UNSAVED_FORMULA_FIX = 'open and save the workbook in Excel or LibreOffice (they compute the formulas and save their values), or write values instead of formulas';

export function noteProblem(note: CellNote, field: OrderField | 'account', text: string, cell?: string): string | undefined {
  const shown = `"${text}"`;
  switch (note) {
    case 'formula-unsaved':
      return `${cell ? `cell ${cell} is ` : 'the cell is '}a formula without a saved value (the workbook was written by a program that does not compute formulas, e.g. openpyxl or pandas), so its ${field} is unknown: ${UNSAVED_FORMULA_FIX}`;
    case 'inexact-number':
      if (!ID_FIELDS.has(field)) return undefined;
      return `${shown}: ${SPREADSHEET_HINT} (a number cell keeps at most 15 digits, and an id has no decimals or exponent)`;
    case 'formula':
      return `the cell is a formula (its saved result is ${shown}), not a typed value; copy the column and paste it back as values, then save`;
    case 'date':
      return `the cell is a date (${text}); format the column as Text and type the value again`;
    case 'error':
      return `the cell shows the spreadsheet error ${text}`;
    case 'boolean':
      return `the cell is ${text}, a yes/no value, not ${ID_FIELDS.has(field) ? 'an id' : `a ${field}`}`;
  }
}
