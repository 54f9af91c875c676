/**
 * Two cells of a reseller's own column compared as a spreadsheet may have rewritten them between
 * two saves of one file (claim/repeats.ts: which purchase a key/card row repeats): case and spaces
 * aside, dates in either locale and with Excel's ways with times, numbers by their value.
 */
/** A date (and time) as written, read in the ways spreadsheets write it. */
interface DateCell {
  y: number;
  /** Month and day in order when the format says which is which; `ambiguous`: 01/02 may be either. */
  m: number;
  d: number;
  ambiguous: boolean;
  /** Minutes of the day; null: no time written (a date alone, or Excel's midnight). */
  minute: number | null;
  /** Seconds; null: not written (Excel drops them when it re-saves a time as h:mm). */
  second: number | null;
}

const TIME = String.raw`(?:[ t]+(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(am|pm|a\.m\.|p\.m\.)?)?`;
const ISO_DATE = new RegExp(String.raw`^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})${TIME}$`);
const OTHER_DATE = new RegExp(String.raw`^(\d{1,2})([./-])(\d{1,2})\2(\d{2}|\d{4}),?${TIME}$`);

function readDate(v: string): DateCell | undefined {
  const time = (h?: string, mi?: string, se?: string, half?: string): Pick<DateCell, 'minute' | 'second'> | undefined => {
    if (h === undefined) return { minute: null, second: null };
    let hour = Number(h);
    if (half !== undefined) {
      if (hour < 1 || hour > 12) return undefined;
      hour = (hour % 12) + (half.startsWith('p') ? 12 : 0);
    }
    if (hour > 23 || Number(mi) > 59) return undefined;
    return { minute: hour * 60 + Number(mi), second: se === undefined ? null : Number(se) };
  };
  let m = ISO_DATE.exec(v);
  if (m) {
    const t = time(m[4], m[5], m[6], m[7]);
    return t && { y: Number(m[1]), m: Number(m[2]), d: Number(m[3]), ambiguous: false, ...t };
  }
  m = OTHER_DATE.exec(v);
  if (m) {
    const t = time(m[5], m[6], m[7], m[8]);
    const y = Number(m[4]) + (m[4]!.length === 2 ? 2000 : 0);
    // 26.11.2026 is day.month (the dotted European form); 11/26/2026 or 26/11/2026 may be either.
    return t && { y, m: Number(m[3]), d: Number(m[1]), ambiguous: m[2] !== '.', ...t };
  }
  return undefined;
}

/**
 * Two dates are one when their days are, and their times where both have one: to the minute when
 * either has no seconds (Excel re-saves 09:14:33 as 9:14), and a date without a time matches any
 * time that day (Excel writes a midnight date-time as the date alone, and a column formatted to
 * show dates only as dates).
 */
function sameDate(a: DateCell, b: DateCell): boolean {
  if (a.y !== b.y) return false;
  const straight = a.m === b.m && a.d === b.d;
  const crossed = a.m === b.d && a.d === b.m;
  if (!(straight || ((a.ambiguous || b.ambiguous) && crossed))) return false;
  if (a.minute === null || b.minute === null) return true;
  if (a.minute !== b.minute) return false;
  return a.second === null || b.second === null || a.second === b.second;
}

/** A number as a spreadsheet may rewrite it: 000123 → 123, 6,49 → 6.49. Long digit strings keep their digits. */
const NUMBER = /^[+-]?\d+(?:[.,]\d+)?$/;
function numberKey(v: string): string | undefined {
  if (!NUMBER.test(v)) return undefined;
  const digits = v.replace(/[^\d]/g, '');
  if (digits.length > 15) return v.replace(/^([+-]?)0+(?=\d)/, '$1');
  return String(Number(v.replace(',', '.')));
}

/**
 * A cell as compared (case and spaces aside): `key` is coarse (equal cells have equal keys; used to
 * index), `same` decides. A date by its parts, so "2026-11-26 09:14" and "26.11.2026 09:14" (Excel
 * re-saving in another locale) are one value and "09:14" and "14:09" are two; a number by its
 * value, so Excel dropping leading zeros changes nothing. A number Excel turned into scientific
 * notation (4.91701E+11) has lost its digits: it tells nothing, like an empty cell.
 */
export interface Cell {
  key: string;
  norm: string;
  date: DateCell | undefined;
}
export function readCell(raw: string): Cell | undefined {
  const n = raw.trim().toLowerCase().replace(/\s+/g, ' ');
  if (n === '' || /^[+-]?\d(?:[.,]\d+)?e\+\d+$/.test(n)) return undefined;
  const date = readDate(n);
  // The key holds the day only: times compare in sameDate, with its tolerances.
  if (date) return { key: `#d${date.y}:${Math.min(date.m, date.d)}-${Math.max(date.m, date.d)}`, norm: n, date };
  const num = numberKey(n);
  return { key: num === undefined ? n : `#n${num}`, norm: num ?? n, date: undefined };
}
export function sameCell(a: Cell, b: Cell): boolean {
  if (a.date && b.date) return sameDate(a.date, b.date);
  return a.key === b.key && a.norm === b.norm;
}

