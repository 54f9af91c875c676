/**
 * outbox/<name>.result.csv: the input's columns in their order, then
 * trxid, orderId, status, amountUsd, codes, refunded, error — one row per input row, in the
 * same order. Runs against the built-in sandbox add a last column `mode` = SANDBOX, so a
 * rehearsal's file can never be mistaken for a real one.
 */
import { stringify } from 'csv-stringify/sync';
import type { Row } from '../store/rows.js';
import { safeCell } from './cell-safety.js';
import { writeFileAtomic } from './atomic-write.js';
import { roundCents } from '../money.js';

export const RESULT_COLUMNS = ['trxid', 'orderId', 'status', 'amountUsd', 'codes', 'refunded', 'error'] as const;

/** The status a row shows in its result file. `pending`/`sending`/… never reach a result. */
export function resultStatus(row: Row): string {
  switch (row.state) {
    case 'completed':
    case 'cancelled':
    case 'rejected':
    case 'invalid':
    case 'skipped':
    case 'review':
      return row.state;
    default:
      throw new Error(`row ${row.idx} of ${row.batchId} is not final (${row.state})`);
  }
}

function money(n: number | null): string {
  return n === null ? '' : String(roundCents(n));
}

export function resultCells(row: Row, width: number): string[] {
  const input = row.cells.slice(0, width);
  while (input.length < width) input.push('');
  const placed = row.state === 'completed' || row.state === 'cancelled';
  return [
    ...input,
    row.trxid ?? '',
    row.orderId ?? '',
    resultStatus(row),
    placed ? money(row.amountUsd ?? row.expectedUsd) : '',
    row.state === 'completed' ? row.codes.join(' ') : '',
    row.state === 'cancelled' ? String(row.refunded === true) : '',
    // A completed key/card order without codes says so here, never a silent empty codes cell.
    row.state === 'completed' ? (row.note?.startsWith('CODES MISSING') ? row.note : '') : (row.error ?? ''),
  ];
}

export interface ResultFileInput {
  path: string;
  header: readonly string[];
  rows: Iterable<Row>;
  sandbox: boolean;
}

function* csvChunks(input: ResultFileInput): Generator<string> {
  const width = input.header.length;
  const head = [...input.header, ...RESULT_COLUMNS, ...(input.sandbox ? ['mode'] : [])];
  yield stringify([head.map(safeCell)]);
  let chunk: string[][] = [];
  for (const row of input.rows) {
    const cells = resultCells(row, width);
    if (input.sandbox) cells.push('SANDBOX');
    chunk.push(cells.map(safeCell));
    if (chunk.length >= 1000) {
      yield stringify(chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) yield stringify(chunk);
}

export function writeResultFile(input: ResultFileInput): void {
  writeFileAtomic(input.path, csvChunks(input));
}
