/**
 * outbox/<name>.summary.json: the count per status, USD spent and refunded, the balance
 * before and after, and the rows an operator must look at (`review`). spentUsd and refundedUsd
 * add up the same per-row cents as the result's netUsd column (store/cost.ts rowMoney, the rule SPENT), so the
 * column's sum is spentUsd exactly.
 *
 * `columns` says how each column of the file was read (intake/column-report.ts), and `notes`
 * what was said about the file as a whole (columns that look like order fields but were not
 * read, a file without order rows). The batch's loader keeps the column report beside its file
 * in jobs/<batch>/.columns.json (a dot-file: the orphan scan ignores it), because the summary is
 * written when the batch ends, possibly by another process after a restart.
 */
import { ownTrxid } from '../store/row-record.js';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Batch } from '../store/batches.js';
import type { ColumnReport } from '../intake/column-report.js';
import type { Runtime } from '../runtime.js';
import { emptyCounts, type Row, type StateCounts } from '../store/rows.js';
import { writeFileAtomic } from './atomic-write.js';
import { describeAudit } from '../api/audit.js';
import { rowMoney } from '../store/cost.js';

export interface BatchSummary {
  batchId: string;
  file: string;
  mode: 'SANDBOX' | 'LIVE';
  duplicateOf: string | null;
  rows: number;
  counts: Pick<StateCounts, 'completed' | 'cancelled' | 'rejected' | 'invalid' | 'skipped' | 'review'>;
  spentUsd: number;
  refundedUsd: number;
  /** The accounts' balance when the batch was funded (the sum over the home's accounts). */
  balanceBeforeUsd: number | null;
  /**
   * balanceBeforeUsd less this batch's own spend (spentUsd): what this batch left, whatever other
   * batches running beside it spent (a new-user trial: 2000.00 / 1968.55 for a batch that spent
   * 6.65, since the balance read at its end included a concurrent batch's spend). Null when the
   * balance before was never read. Orders only: player checks the supplier charged are in
   * playerChecks.costUsd.
   */
  balanceAfterUsd: number | null;
  /**
   * The accounts' balance as read after the batch's last order ended (the sum over the home's
   * accounts; null: not readable): the account at that time, including other batches' spend and any
   * top-up meanwhile. What `topup submit` calls "balance now".
   */
  balanceAtEndUsd: number | null;
  /** Several accounts: balanceAtEndUsd per account of the home (null: not readable). */
  balanceAtEndByAccount?: Record<string, number | null>;
  resultFile: string;
  /** The workbook result, written for an .xlsx input; null otherwise. */
  resultXlsxFile: string | null;
  /** 1 for the first result; a batch reopened after a review row was resolved writes version 2, 3 … */
  version: number;
  /** trxid: the row's own (ownTrxid: the reseller's key, as in the result file); sentTrxid: the one sent, where a move changed it. */
  review: { line: number; trxid: string | null; sentTrxid?: string; reason: string | null; lastAnswer: string | null }[];
  /** Completed key/card orders the API never gave codes for (after every re-read): ask the supplier. */
  codesMissing: { line: number; orderId: string | null }[];
  /**
   * Lines of the file as it is now that no row stands for (written or changed after the file was
   * read: late-lines.ts), counted in `rows` and `counts.skipped`. Only present when the file
   * changed after it was read: an ordinary summary keeps the keys it always had.
   */
  changedAfterRead?: { lines: number[]; note: string };
  /** Review rows settled later: by the recheck (`found`) or by an operator. */
  resolved: { line: number; trxid: string | null; sentTrxid?: string; resolution: string; by: string | null; at: string | null; status: string; orderId: string | null }[];
  /**
   * Player-name checks sent while the batch was stored (docs/player-checks.md): how many, what
   * they may have cost at TOPUP_PLAYER_CHECK_PRICE_USD (those the supplier ran, and those that may
   * have run; a 429 or a refusal costs nothing), of which `inDoubt` checks (`inDoubtUsd`) got no
   * answer that says whether they ran (a lost answer, a kill before it was recorded): the
   * supplier's own charge is in its balance, not in spentUsd, which is orders only; the rows held
   * because their player does not exist. Only present when the batch was checked.
   */
  playerChecks?: { calls: number; costUsd: number; inDoubt: number; inDoubtUsd: number; notFoundRows: number };
  /** How each column of the file was read; null when its rows were not read (a duplicate file). */
  columns: ColumnReport['columns'] | null;
  /** About the file as a whole: warnings about its columns, hints, a file without order rows. */
  notes: string[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string;
}

export const NO_ORDER_ROWS = 'the file has no order rows (only its header): nothing was ordered';

const COLUMNS_FILE = '.columns.json';

function columnsPath(rt: Pick<Runtime, 'config'>, batch: Batch): string {
  return join(rt.config.home, dirname(batch.jobFile), COLUMNS_FILE);
}

/** Kept when the batch's rows are stored (claim/load.ts), for the summary written when it ends. */
export function keepColumnReport(rt: Pick<Runtime, 'config'>, batch: Batch, report: ColumnReport): void {
  writeFileAtomic(columnsPath(rt, batch), `${JSON.stringify(report)}\n`);
}

/** The report kept for the batch, or null (a duplicate, a batch stored before reports were kept). */
export function readColumnReport(rt: Pick<Runtime, 'config'>, batch: Batch): ColumnReport | null {
  try {
    return JSON.parse(readFileSync(columnsPath(rt, batch), 'utf8')) as ColumnReport;
  } catch {
    return null;
  }
}


export function summarize(
  batch: Batch,
  rows: Iterable<Row>,
  files: { csv: string; xlsx: string | null },
  balanceAtEnd: number | null,
  now: number,
  late: { lines: readonly { line: number }[]; note: string | null } = { lines: [], note: null },
  columns: ColumnReport | null = null,
  byAccount: Record<string, number | null> | null = null,
  checks: { calls: number; costUsd: number; inDoubt: number; inDoubtUsd: number } | null = null,
): BatchSummary {
  const counts = emptyCounts();
  let spentCents = 0;
  let refundedCents = 0;
  let n = 0;
  let notFoundRows = 0;
  const review: BatchSummary['review'] = [];
  const codesMissing: BatchSummary['codesMissing'] = [];
  const resolved: BatchSummary['resolved'] = [];
  for (const row of rows) {
    n++;
    counts[row.state]++;
    const money = rowMoney(row);
    spentCents += money.netCents ?? 0;
    refundedCents += money.refundedCents;
    if (row.rejectCode === 'TOPUP_PLAYER_NOT_FOUND') notFoundRows++;
    // The reseller's own trxid, as the result file beside it shows (a moved row's sent one beside it).
    const own = ownTrxid(row);
    const sent = row.trxid !== null && row.trxid !== own ? { sentTrxid: row.trxid } : {};
    if (row.state === 'review') review.push({ line: row.line, trxid: own, ...sent, reason: row.error, lastAnswer: describeAudit(row.lastAnswer) || null });
    if (row.state === 'completed' && row.note?.startsWith('CODES MISSING')) codesMissing.push({ line: row.line, orderId: row.orderId });
    if (row.resolution !== null) {
      resolved.push({
        line: row.line, trxid: own, ...sent, resolution: row.resolution, by: row.resolvedBy,
        at: row.resolvedAt === null ? null : new Date(row.resolvedAt).toISOString(), status: row.state, orderId: row.orderId,
      });
    }
  }
  return {
    batchId: batch.id,
    file: batch.sourceName,
    mode: batch.sandbox ? 'SANDBOX' : 'LIVE',
    duplicateOf: batch.duplicateOf,
    rows: n + late.lines.length,
    counts: {
      completed: counts.completed,
      cancelled: counts.cancelled,
      rejected: counts.rejected,
      invalid: counts.invalid,
      skipped: counts.skipped + late.lines.length,
      review: counts.review,
    },
    spentUsd: spentCents / 100,
    refundedUsd: refundedCents / 100,
    balanceBeforeUsd: batch.balanceBefore,
    // In cents, as spentUsd is summed: before less spent to the cent.
    balanceAfterUsd: batch.balanceBefore === null ? null : (Math.round(batch.balanceBefore * 100) - spentCents) / 100,
    balanceAtEndUsd: balanceAtEnd,
    ...(byAccount ? { balanceAtEndByAccount: byAccount } : {}),
    resultFile: files.csv,
    resultXlsxFile: files.xlsx,
    version: batch.resultVersion,
    review,
    codesMissing,
    ...(late.note === null ? {} : { changedAfterRead: { lines: late.lines.map((l) => l.line), note: late.note } }),
    resolved,
    ...(checks && (checks.calls > 0 || notFoundRows > 0) ? { playerChecks: { calls: checks.calls, costUsd: checks.costUsd, inDoubt: checks.inDoubt, inDoubtUsd: checks.inDoubtUsd, notFoundRows } } : {}),
    columns: columns?.columns ?? null,
    notes: [...(n === 0 && !batch.duplicateOf ? [NO_ORDER_ROWS] : []), ...(columns?.warnings ?? []), ...(columns?.hints ?? [])],
    createdAt: new Date(batch.createdAt).toISOString(),
    startedAt: batch.startedAt === null ? null : new Date(batch.startedAt).toISOString(),
    finishedAt: new Date(now).toISOString(),
  };
}

export function writeSummaryFile(path: string, summary: BatchSummary): void {
  writeFileAtomic(path, `${JSON.stringify(summary, null, 2)}\n`);
}
