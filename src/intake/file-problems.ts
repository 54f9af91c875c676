/**
 * Problems with the file rather than with its rows: a field a game in the file needs that no
 * column provides, or that two columns could both provide. The validator notes them row by row
 * as it goes (one counter per game line and field, not a list of rows); once every row is read,
 * `problems()` turns them into one message each.
 *
 * Choice: a missing column refuses the whole file, not just the rows that need it. A file
 * whose columns do not fit its orders was put together wrongly, and ordering the rows that
 * happen to fit (the gift cards of a file whose Player ID column was not recognised) is the
 * purchase nobody meant. It is only a file problem when NO row of that game got the field
 * any other way (an ML `777888999 (2005)` id brings its zone along); otherwise the rows that
 * lack it are ordinary invalid rows.
 */
import type { HeaderMap } from './columns.js';
import { guessColumn, type LineField } from './line-columns.js';

export interface FileProblem {
  /** Rows' problems caused by this one carry the same key (RowProblem.fileProblem). */
  key: string;
  message: string;
}

interface Tally {
  field: LineField;
  label: string;
  game: string;
  /** Columns used for other fields of this line (not offered as the missing one). */
  used: ReadonlySet<number>;
  rows: number;
  firstLine: number;
  /** Rows of this line that had the field from elsewhere (the ML split). */
  supplied: number;
  /** Set when two columns (or one column for two fields) could be this field. */
  ambiguous?: readonly number[];
}

export function fileProblemKey(slug: string, field: LineField): string {
  return `${slug.toLowerCase()}\u0000${field}`;
}

export class FileProblems {
  readonly #header: HeaderMap;
  readonly #tallies = new Map<string, Tally>();

  constructor(header: HeaderMap) {
    this.#header = header;
  }

  /** A row of this line lacks the field because no (single) column provides it. */
  lacking(key: string, facts: Omit<Tally, 'rows' | 'firstLine' | 'supplied'>, line: number): void {
    const t = this.#tallies.get(key);
    if (t) t.rows++;
    else this.#tallies.set(key, { ...facts, rows: 1, firstLine: line, supplied: 0 });
  }

  /** A row of this line had the field without a column for it. */
  supplied(key: string, facts: Omit<Tally, 'rows' | 'firstLine' | 'supplied'>, line: number): void {
    let t = this.#tallies.get(key);
    if (!t) this.#tallies.set(key, (t = { ...facts, rows: 0, firstLine: line, supplied: 0 }));
    t.supplied++;
  }

  problems(): FileProblem[] {
    const out: FileProblem[] = [];
    for (const [key, t] of this.#tallies) {
      if (t.ambiguous) out.push({ key, message: this.#ambiguity(t) });
      else if (t.supplied === 0 && t.rows > 0) out.push({ key, message: this.#missing(t) });
    }
    return out;
  }

  #missing(t: Tally): string {
    const rows = t.rows === 1 ? `its row (line ${t.firstLine})` : `its ${t.rows.toLocaleString('en-US')} rows (the first on line ${t.firstLine})`;
    const guess = guessColumn(this.#header, t.used, t.field, t.label);
    const fix =
      guess === undefined
        ? `add a column named "${t.field}" (or "${t.label}") and fill it in`
        : `rename column "${this.#header.columns[guess]?.trim()}" to "${t.field}"`;
    return `the file has no ${t.label} column (${t.field}), which ${t.game} needs for ${rows}; ${fix}`;
  }

  #ambiguity(t: Tally): string {
    const cols = (t.ambiguous ?? []).map((i) => `"${this.#header.columns[i]?.trim()}"`);
    const what =
      cols.length > 1
        ? `columns ${cols.join(' and ')} could each be the ${t.label} (${t.field}) of ${t.game}`
        : `column ${cols[0]} could be more than one field of ${t.game}, among them the ${t.label} (${t.field})`;
    return `${what}; rename the column that holds it to "${t.field}" so there is no doubt`;
  }
}
