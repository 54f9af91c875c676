/**
 * outbox/<name>.summary.json: the count per status, USD spent and refunded, the balance
 * before and after, and the rows an operator must look at (`review`).
 */
import type { Batch } from '../store/batches.js';
import { emptyCounts, type Row, type StateCounts } from '../store/rows.js';
import { writeFileAtomic } from './atomic-write.js';
import { roundCents as cents } from '../money.js';

export interface BatchSummary {
  batchId: string;
  file: string;
  mode: 'SANDBOX' | 'LIVE';
  duplicateOf: string | null;
  rows: number;
  counts: Pick<StateCounts, 'completed' | 'cancelled' | 'rejected' | 'invalid' | 'skipped' | 'review'>;
  spentUsd: number;
  refundedUsd: number;
  balanceBeforeUsd: number | null;
  balanceAfterUsd: number | null;
  resultFile: string;
  review: { line: number; trxid: string | null; reason: string | null }[];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string;
}


export function summarize(batch: Batch, rows: Iterable<Row>, resultFile: string, balanceAfter: number | null, now: number): BatchSummary {
  const counts = emptyCounts();
  let spent = 0;
  let refunded = 0;
  let n = 0;
  const review: BatchSummary['review'] = [];
  for (const row of rows) {
    n++;
    counts[row.state]++;
    const amount = row.amountUsd ?? row.expectedUsd ?? 0;
    if (row.state === 'completed') spent += amount;
    if (row.state === 'cancelled') {
      if (row.refunded) refunded += amount;
      else spent += amount;
    }
    if (row.state === 'review') review.push({ line: row.line, trxid: row.trxid, reason: row.error });
  }
  return {
    batchId: batch.id,
    file: batch.sourceName,
    mode: batch.sandbox ? 'SANDBOX' : 'LIVE',
    duplicateOf: batch.duplicateOf,
    rows: n,
    counts: {
      completed: counts.completed,
      cancelled: counts.cancelled,
      rejected: counts.rejected,
      invalid: counts.invalid,
      skipped: counts.skipped,
      review: counts.review,
    },
    spentUsd: cents(spent),
    refundedUsd: cents(refunded),
    balanceBeforeUsd: batch.balanceBefore,
    balanceAfterUsd: balanceAfter,
    resultFile,
    review,
    createdAt: new Date(batch.createdAt).toISOString(),
    startedAt: batch.startedAt === null ? null : new Date(batch.startedAt).toISOString(),
    finishedAt: new Date(now).toISOString(),
  };
}

export function writeSummaryFile(path: string, summary: BatchSummary): void {
  writeFileAtomic(path, `${JSON.stringify(summary, null, 2)}\n`);
}
