/**
 * Where a batch's files go: outbox/<name>.result.csv (chosen at claim time, see claim.ts),
 * and beside it <name>.summary.json and, for a file that could not be read, <name>.error.txt.
 */
import { join } from 'node:path';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';

export interface OutboxPaths {
  resultFile: string;
  summaryFile: string;
  errorFile: string;
}

export function outboxPaths(rt: Runtime, batch: Batch): OutboxPaths {
  const resultFile = batch.resultFile ?? join(rt.config.outboxDir, `${batch.name}.result.csv`);
  const stem = resultFile.replace(/\.result\.csv$/, '');
  return { resultFile, summaryFile: `${stem}.summary.json`, errorFile: `${stem}.error.txt` };
}
