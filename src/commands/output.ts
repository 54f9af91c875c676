/**
 * How a command prints what it read: a human table by default, `--json` or `--csv` for
 * scripts. Only data goes to stdout; messages for the operator go to stderr.
 */
import type { Command } from 'commander';
import { csvText } from '../kernel/csv-text.js';
import { safeCell } from '../outbox/cell-safety.js';
import { UsageError } from '../kernel/errors.js';
import { roundCents } from '../kernel/money.js';

export type Cell = string | number | boolean | null | undefined;
export interface Column<T> {
  title: string;
  get: (row: T) => Cell;
  /** Numbers read better right-aligned. */
  right?: boolean;
}

export type Format = 'table' | 'json' | 'csv';

export function addFormatOptions(cmd: Command): Command {
  return cmd.option('--json', 'print JSON (for scripts)').option('--csv', 'print CSV (for spreadsheets and scripts)');
}

export function formatOf(opts: { json?: boolean; csv?: boolean }): Format {
  if (opts.json && opts.csv) throw new UsageError('choose one of --json and --csv');
  return opts.json ? 'json' : opts.csv ? 'csv' : 'table';
}

const text = (c: Cell): string => (c === null || c === undefined ? '' : String(c));

export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((r) => columns.map((c) => text(c.get(r)).replace(/\s+/g, ' ')));
  const widths = columns.map((c, i) => Math.max(c.title.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]): string =>
    r.map((v, i) => (columns[i]!.right ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(columns.map((c) => c.title)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

/** CSV for people who open it in a spreadsheet: every cell formula-safe. */
export function renderCsv<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  return csvText([columns.map((c) => safeCell(c.title)), ...rows.map((r) => columns.map((c) => safeCell(text(c.get(r)))))]);
}

export function printList<T>(format: Format, rows: readonly T[], columns: readonly Column<T>[], json: unknown = rows): void {
  if (format === 'json') process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  else if (format === 'csv') process.stdout.write(renderCsv(rows, columns));
  else process.stdout.write(rows.length === 0 ? '(none)\n' : renderTable(rows, columns));
}

export function usd(n: number | null | undefined): string {
  return n === null || n === undefined ? '' : roundCents(n).toFixed(2);
}

export function when(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

/**
 * A time in a sentence a person reads: `2026-11-28 06:14:26 UTC`. Every time topup prints is UTC
 * (the store, the result files, the logs); a time without its zone reads as local time, which on
 * most resellers' machines it is not. (Table columns say UTC in their title and use when().)
 */
export function whenUtc(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '' : `${when(ms)} UTC`;
}

/** commander option parser for whole numbers in a range. */
export function wholeNumber(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || n < min || n > max) throw new UsageError(`${name} must be a whole number in ${min}..${max}`);
    return n;
  };
}
