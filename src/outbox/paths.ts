/**
 * Where a batch's files go: outbox/<name>.result.csv (chosen at claim time, see claim.ts), and
 * beside it <name>.summary.json, <name>.result.xlsx for a workbook input, the result after review
 * decisions <name>.reviewed.result.csv (below), the partial results
 * <name>.partial.result.csv / .partial.result.xlsx while the batch runs, and, for a file that
 * could not be read, <name>.error.txt.
 */
import { basename, join } from 'node:path';
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
  const stored = batch.resultFile ?? join(rt.config.outboxDir, `${batch.name}.result.csv`);
  const { base, stem } = stems(stored, batch);
  return pathsOf(base, stem);
}

/**
 * The paths finishBatch writes to: outboxPaths, except that the reviewed name is never taken from
 * another batch. A home upgraded from an earlier release may hold a batch `x.reviewed` whose result
 * is outbox/x.reviewed.result.csv (claim.ts keeps new files off that name, old ones have it): the
 * first decision on batch `x` then writes <first>.reviewed.<batch>.result.csv instead, as claim.ts
 * does for a taken first name, and partial.ts for a taken partial name. Only a batch's record
 * counts, not a file on disk: a finish that crashed after writing writes the same names again.
 */
export function writePaths(rt: Pick<Runtime, 'batches' | 'config'>, batch: Batch): OutboxPaths {
  const p = outboxPaths(rt, batch);
  if (batch.resultVersion <= 1 || p.resultFile === batch.resultFile || !rt.batches.resultFileTaken(p.resultFile)) return p;
  const { base } = stems(batch.resultFile ?? p.resultFile, batch);
  return pathsOf(base, `${base}${REVIEWED}.${batch.id}`);
}

function pathsOf(base: string, stem: string): OutboxPaths {
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
 * `base`: the first version's path without `.result.csv` (the partial files hang off it); `stem`:
 * the current version's. result_file holds the path of the version written last, and a path
 * already written is taken as stored, never derived again (a done batch's link must name the file
 * that is there). What it names, by its name:
 * - the first result (claim.ts names it <name> or <name>.<batch>): at version 2 and on, the
 *   batch was reopened and writes <first>.reviewed. Checked first, so a batch an earlier release
 *   let claim `x.reviewed.csv` as outbox/x.reviewed.result.csv keeps that file as its first;
 * - an earlier release's <first>.v(N-1) at version N: reopened, and writes <first>.reviewed;
 * - an earlier release's <first>.vN at version N: that release's done batch, the file as stored;
 * - <first>.reviewed (or .reviewed.<batch>, writePaths): the reviewed file, as stored (done, or
 *   reopened again: rewritten in place).
 * Anything else is read as a first result: a reopened batch then writes beside it, never over it.
 */
function stems(stored: string, batch: Batch): { base: string; stem: string } {
  const stem = stored.replace(/\.result\.csv$/, '');
  if (batch.resultVersion <= 1) return { base: stem, stem };
  const name = basename(stem);
  if (name === batch.name || name === `${batch.name}.${batch.id}`) return { base: stem, stem: `${stem}${REVIEWED}` };
  const done = `.v${batch.resultVersion}`;
  if (stem.endsWith(done)) return { base: stem.slice(0, -done.length), stem };
  const reopened = `.v${batch.resultVersion - 1}`;
  if (stem.endsWith(reopened)) {
    const base = stem.slice(0, -reopened.length);
    return { base, stem: `${base}${REVIEWED}` };
  }
  for (const own of [REVIEWED, `${REVIEWED}.${batch.id}`]) {
    if (stem.endsWith(own)) return { base: stem.slice(0, -own.length), stem };
  }
  return { base: stem, stem: `${stem}${REVIEWED}` };
}
