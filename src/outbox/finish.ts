/**
 * Writes a batch's result and summary once every row has reached an end, then marks the batch
 * done. Both files are written atomically before the batch is marked, so a kill in between
 * only means they are written again, identically, after the restart.
 */
import { Priority } from '../api/client.js';
import { coerceError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import { writeResultFile } from './results.js';
import { summarize, writeSummaryFile, type BatchSummary } from './summary.js';
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
  const now = Date.now();
  const paths = outboxPaths(rt, batch);
  writeResultFile({ path: paths.resultFile, header: batch.header ?? [], rows: rt.rows.iterate(batch.id), sandbox: batch.sandbox });
  const summary = summarize(batch, rt.rows.iterate(batch.id), paths.resultFile, balanceAfter, now);
  writeSummaryFile(paths.summaryFile, summary);
  rt.batches.finish(batch.id, balanceAfter, paths.resultFile, now);
  rt.log.info(
    { batch: batch.id, file: batch.sourceName, counts: summary.counts, spentUsd: summary.spentUsd, refundedUsd: summary.refundedUsd, result: paths.resultFile },
    'batch finished',
  );
  return summary;
}
