/**
 * Report files are appended to, never rewritten: a spreadsheet or a script may be reading
 * them. Mode 0600 (they name players and amounts), every cell formula-safe, and the header
 * is written only when the file is new. One write per call, so a kill leaves whole lines.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { csvText } from '../kernel/csv-text.js';
import { safeCell } from '../outbox/cell-safety.js';
import { TimeZone } from '../kernel/time-zone.js';

export type ReportCell = string | number | boolean | null | undefined;

export function appendCsv(path: string, header: readonly string[], rows: readonly (readonly ReportCell[])[]): void {
  if (rows.length === 0) return;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const isNew = !existsSync(path);
  const cells = (r: readonly ReportCell[]): string[] => r.map((c) => safeCell(c === null || c === undefined ? '' : String(c)));
  const text = csvText([...(isNew ? [header] : []), ...rows].map(cells));
  const fd = openSync(path, 'a', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `2026-11` / `2026-11-21` in TOPUP_TIME_ZONE (an IANA name), for file names. */
export function monthOf(ms: number, zone: string): string {
  return TimeZone.of(zone).monthOf(ms);
}

export function dayOf(ms: number, zone: string): string {
  return TimeZone.of(zone).dayOf(ms);
}

