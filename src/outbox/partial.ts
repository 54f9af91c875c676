/**
 * Partial results: while a batch runs, outbox/<name>.partial.result.csv (and .partial.result.xlsx
 * for a workbook input) holds every input row in order, the finished ones with their result and
 * the others as `pending` or `in progress` (results.ts), in the same columns and dialect as the
 * final result. Staff can hand out finished orders without waiting for the whole batch.
 *
 * - Rewritten atomically (a reader never sees half a file), mode 0600, once rows have finished
 *   and TOPUP_PARTIAL_RESULT_MS (default 30 s) has passed since the batch started sending, then
 *   at most every TOPUP_PARTIAL_RESULT_MS and only when a row has finished (or a finished one
 *   changed its end: a review resolved) since the last write.
 * - The order API's day batch (apiDay set) is written even when every order so far has ended: it
 *   stays open until its day is over, so no final result is coming to replace the partial one, and
 *   the partial is the only file of the day's orders (trial s37 D8: a completed, charged order read
 *   `pending` with no order id for minutes, until the next order came). A file's batch with every
 *   row ended is about to finish: its final result replaces the partial, which is not rewritten.
 * - Never more often than ten times the time the last write took, so a very large batch spends at
 *   most a tenth of its time on its partial files.
 * - Removed when the final result is written (finish.ts); a batch that finishes before its first
 *   partial write never has one.
 * - Never written over another batch's final result: should a file once named `<name>.partial.csv`
 *   already own that name, this batch writes no partial files.
 * - A failed write (disk full) is logged and tried again at the next interval; it never stops
 *   the batch.
 */
import { unlinkSync } from 'node:fs';
import { coerceError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import { FINAL_ROW_STATES, ROW_STATES, type StateCounts } from '../store/rows.js';
import { writeBatchResults } from './write-results.js';
import { outboxPaths } from './paths.js';

/** A write may take at most this share of the time between writes. */
const COST_FACTOR = 10;

interface LastWrite {
  /** The finished rows' counts per end state when last written (finishedKey). */
  done: string;
  at: number;
  tookMs: number;
}

/** The partial files this batch may use, or null when another batch's result owns the name. */
export function partialTargets(rt: Pick<Runtime, 'batches' | 'config'>, batch: Batch): { csv: string; xlsx: string | null } | null {
  const p = outboxPaths(rt, batch);
  if (rt.batches.resultFileTaken(p.partialFile)) return null;
  return { csv: p.partialFile, xlsx: batch.dialect.xlsx ? p.partialXlsx : null };
}

export function removePartials(rt: Pick<Runtime, 'batches' | 'config'>, batch: Batch): void {
  const targets = partialTargets(rt, batch);
  if (!targets) return;
  for (const path of [targets.csv, outboxPaths(rt, batch).partialXlsx]) {
    try {
      unlinkSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** The finished rows, counted per end state: changes when a row finishes or a review row is resolved. */
function finishedKey(counts: StateCounts): string {
  return FINAL_ROW_STATES.map((s) => counts[s]).join(',');
}

export class PartialResults {
  readonly #last = new Map<string, LastWrite>();
  /** Measures how long a write takes (a test gives a clock of its own). */
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /** Called by the runner for every unfinished batch it drives, at every step; cheap when nothing is due. */
  async update(rt: Pick<Runtime, 'batches' | 'clock' | 'config' | 'db' | 'log' | 'rows'>, batch: Batch, counts: StateCounts, now = rt.clock.now()): Promise<void> {
    const done = FINAL_ROW_STATES.reduce((n, s) => n + counts[s], 0);
    const total = ROW_STATES.reduce((n, s) => n + counts[s], 0);
    // A file's batch with every row ended is about to finish: its final result replaces the partial
    // one. The API's day batch is not: it stays open for orders until its day ends (header).
    const finishing = done === total && batch.apiDay === null;
    if (batch.state !== 'open' || done === 0 || finishing) {
      if (finishing) this.#last.delete(batch.id);
      return;
    }
    const key = finishedKey(counts);
    const last = this.#last.get(batch.id);
    if (last && last.done === key) return;
    const since = last?.at ?? batch.startedAt ?? batch.createdAt;
    if (now - since < Math.max(rt.config.partialResultMs, COST_FACTOR * (last?.tookMs ?? 0))) return;
    const targets = partialTargets(rt, batch);
    if (!targets) return;
    const started = this.#clock();
    let written = key;
    try {
      await writeBatchResults(rt, batch, targets, true);
      rt.log.debug({ batch: batch.id, done, of: total, file: targets.csv }, 'partial result written');
    } catch (err) {
      written = last?.done ?? '';
      rt.log.warn({ batch: batch.id, err: coerceError(err).message }, 'could not write the partial result; will try again');
    }
    this.#last.set(batch.id, { done: written, at: now, tookMs: this.#clock() - started });
  }
}
