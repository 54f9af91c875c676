/**
 * Where a batch's files go: outbox/<name>.result.csv (chosen at claim time, see claim.ts), and
 * beside it <name>.summary.json, <name>.result.xlsx for a workbook input, the partial results
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
  // A later version (a reopened batch) sits beside the first as <name>.v2.result.csv: the files
  // already handed out are never overwritten. result_file holds the newest version's path.
  const base = first.replace(/(\.v\d+)?\.result\.csv$/, '');
  const stem = batch.resultVersion > 1 ? `${base}.v${batch.resultVersion}` : base;
  return {
    resultFile: `${stem}.result.csv`,
    resultXlsx: `${stem}.result.xlsx`,
    partialFile: `${base}.partial.result.csv`,
    partialXlsx: `${base}.partial.result.xlsx`,
    summaryFile: `${stem}.summary.json`,
    errorFile: `${stem}.error.txt`,
  };
}
