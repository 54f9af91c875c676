/**
 * Writes a batch's result files from the store: the CSV always, the workbook when asked for.
 * The final result (finish.ts) and the partial one (partial.ts) are the same writer.
 */
import type { Runtime } from '../runtime.js';
import { durable } from '../store/db.js';
import type { Batch } from '../store/batches.js';
import { batchLayout, resultPages } from './results.js';
import { writeResultCsv } from './result-csv.js';
import { writeResultXlsx } from './result-xlsx.js';

export async function writeBatchResults(rt: Runtime, batch: Batch, to: { csv: string; xlsx: string | null }, partial: boolean): Promise<void> {
  // Answers of sends and polls are committed without their own fsync (store/rows.ts): make them
  // permanent before a file reports them.
  durable(rt.db, rt.clock.now());
  const layout = batchLayout(batch);
  await writeResultCsv(to.csv, layout, batch.dialect, resultPages(rt, batch.id, layout, partial));
  if (to.xlsx !== null) await writeResultXlsx(to.xlsx, layout, resultPages(rt, batch.id, layout, partial));
}
