/**
 * Writes a batch's result files from the store: the CSV always, the workbook when asked for.
 * The final result (finish.ts) and the partial one (partial.ts) are the same writer.
 */
import type { Runtime } from '../runtime.js';
import { durable } from '../store/db.js';
import type { Batch } from '../store/batches.js';
import { batchLayout, lateLineCells, resultPages, type ResultCell } from './results.js';
import type { LateLine } from './late-lines.js';
import { writeResultCsv } from './result-csv.js';
import { writeResultXlsx } from './result-xlsx.js';

/**
 * `late`: lines of the final file no stored row stands for (late-lines.ts), written after the
 * batch's own rows as `skipped`: every line of the file ends with a result row.
 */
export async function writeBatchResults(rt: Pick<Runtime, 'clock' | 'db' | 'rows'>, batch: Batch, to: { csv: string; xlsx: string | null }, partial: boolean, late: readonly LateLine[] = []): Promise<void> {
  // Answers of sends and polls are committed without their own fsync (store/rows.ts): make them
  // permanent before a file reports them.
  durable(rt.db, rt.clock.now());
  const layout = batchLayout(batch, rt.rows.hasNamedAccounts(batch.id), rt.rows.hasPlayerChecks(batch.id));
  const pages = function* (): Generator<ResultCell[][]> {
    yield* resultPages(rt, batch.id, layout, partial);
    for (let i = 0; i < late.length; i += 1000) yield late.slice(i, i + 1000).map((l) => lateLineCells(l, layout));
  };
  await writeResultCsv(to.csv, layout, batch.dialect, pages());
  if (to.xlsx !== null) await writeResultXlsx(to.xlsx, layout, pages(), batch.dialect.numberColumns ?? []);
}
