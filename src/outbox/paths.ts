/**
 * Where a batch's files go: outbox/<name>.result.csv (chosen at claim time, see claim.ts), and
 * beside it <name>.summary.json, <name>.result.xlsx for a workbook input, the result after review
 * decisions <name>.reviewed.result.csv (below), the partial results
 * <name>.partial.result.csv / .partial.result.xlsx while the batch runs, and, for a file that
 * could not be read, <name>.error.txt.
 */
import { join } from 'node:path';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';

export interface OutboxPaths {
  resultFile: string;
  resultXlsx: string;
  partialFile: string;
  partialXlsx: string;
  summaryFile: string;
  errorFile: string;
}

export function outboxPaths(rt: Pick<Runtime, 'config'>, batch: Batch): OutboxPaths {
  const first = batch.resultFile ?? join(rt.config.outboxDir, `${batch.name}.result.csv`);
  const base = firstStem(first, batch.resultVersion);
  const stem = batch.resultVersion > 1 ? `${base}${REVIEWED}` : base;
  return {
    resultFile: `${stem}.result.csv`,
    resultXlsx: `${stem}.result.xlsx`,
    partialFile: `${base}.partial.result.csv`,
    partialXlsx: `${base}.partial.result.xlsx`,
    summaryFile: `${stem}.summary.json`,
    errorFile: `${stem}.error.txt`,
  };
}

/**
 * Later versions (a batch reopened after a review row was settled: docs/results.md "Later
 * versions") are written to ONE file beside the first, <name>.reviewed.result.csv, rewritten whole
 * (atomically: a reader that has it open keeps what it opened) at each later decision; its
 * summary's `version` counts them. The first result, <name>.result.csv, is never written again.
 * Before, each decision wrote the next <name>.vN.result.csv: two `review resolve`s a moment apart
 * left .v2 and .v3, and the reseller had to work out which was current (the last trial).
 */
export const REVIEWED = '.reviewed';

/**
 * The first version's path without `.result.csv`. result_file holds the path of the version
 * written last: the first one's until a later version is written (so at version 2 it is still the
 * first's: taken as it is, a file named `x.reviewed.csv` keeps its own name), then the reviewed
 * file's, or, for a batch whose later versions an earlier release wrote, `.v(N-1)`'s.
 */
function firstStem(resultFile: string, version: number): string {
  const stem = resultFile.replace(/\.result\.csv$/, '');
  if (version <= 2) return stem;
  if (stem.endsWith(REVIEWED)) return stem.slice(0, -REVIEWED.length);
  const older = `.v${version - 1}`;
  return stem.endsWith(older) ? stem.slice(0, -older.length) : stem;
}
