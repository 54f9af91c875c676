/**
 * Writes a batch's result (CSV, and the workbook for an .xlsx input) and summary once every row
 * has reached an end, removes its partial result, then marks the batch done. Every file is
 * written atomically before the batch is marked, so a kill in between only means they are
 * written again, identically, after the restart.
 */
import { Priority } from '../api/client.js';
import { coerceError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import { writeBatchResults } from './write-results.js';
import { removePartials } from './partial.js';
import { readColumnReport, summarize, writeSummaryFile, type BatchSummary } from './summary.js';
import { outboxPaths } from './paths.js';

export async function finishBatch(rt: Runtime, batch: Batch): Promise<BatchSummary> {
  let balanceAfter: number | null = null;
  if (batch.state !== 'duplicate') {
    try {
      balanceAfter = (await rt.client.balance({ priority: Priority.lookup })).balanceUsd;
    } catch (err) {
      rt.log.warn({ batch: batch.id, err: coerceError(err).message }, 'could not read the balance after the batch');
    }
  }
  const now = rt.clock.now();
  const paths = outboxPaths(rt, batch);
  const xlsx = batch.dialect.xlsx ? paths.resultXlsx : null;
  await writeBatchResults(rt, batch, { csv: paths.resultFile, xlsx }, false);
  removePartials(rt, batch);
  const summary = summarize(batch, rt.rows.iterate(batch.id), { csv: paths.resultFile, xlsx }, balanceAfter, now, readColumnReport(rt, batch));
  writeSummaryFile(paths.summaryFile, summary);
  rt.batches.finish(batch.id, balanceAfter, paths.resultFile, now);
  rt.log.info(
    { batch: batch.id, file: batch.sourceName, counts: summary.counts, spentUsd: summary.spentUsd, refundedUsd: summary.refundedUsd, result: paths.resultFile },
    'batch finished',
  );
  if (summary.rows === 0 && !batch.duplicateOf) rt.log.warn({ batch: batch.id, file: batch.sourceName }, `${batch.sourceName}: ${summary.notes[0]}`);
  return summary;
}
