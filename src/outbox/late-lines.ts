/**
 * A row never vanishes: lines of a batch's file that none of its rows stands for.
 *
 * The claim took the file's bytes (claim.ts) and loading refused a file whose bytes changed
 * before its rows were stored (load.ts). What neither can see is a writer that goes on writing
 * into the claimed file after that: one that kept its handle open across the claim (the handle
 * follows the file into jobs/<batch>/) where the inbox could not tell it was open (intake/
 * writers.ts), and paused for longer than TOPUP_SETTLE_MS. Its rows were stored and sent as
 * they were; the lines it wrote later were never read.
 *
 * So when the result is written, the claimed file is hashed again. When its bytes are still the
 * claimed ones (every batch, nearly always), nothing more happens. When they are not:
 *  - while the file is still being written (written to within TOPUP_SETTLE_MS, or held open for
 *    writing), the result waits (`still-written`), up to MAX_WAIT_SETTLES × TOPUP_SETTLE_MS;
 *  - then the file as it is now (the FINAL file) is read, and each of its lines that is not a
 *    stored row's line as it was read (a line written later, or a line changed since) gets a
 *    `skipped` result row after the batch's own rows, saying it was never ordered and why.
 * Every line of the final file thus ends with a result row: its own, or a `skipped` one.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { fileClock } from '../kernel/clock.js';
import { coerceError } from '../kernel/errors.js';
import { contentHash, openOrderFile } from '../intake/formats/index.js';
import { openForWriting } from '../intake/writers.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import type { Row } from '../store/rows.js';

/** A line of the final file no stored row stands for. */
export interface LateLine {
  line: number;
  cells: string[];
  why: string;
}

export type LateCheck =
  | { lines: LateLine[]; note: string | null }
  /** The file changed and is still being written: the result waits (the caller tries again). `first`: said once. */
  | { stillWritten: string; first: boolean };

/** How many TOPUP_SETTLE_MS a changed file may keep changing before its result is written anyway. */
const MAX_WAIT_SETTLES = 10;
/** A waiting result looks at its file again after this (the finishing stage asks at every step). */
const RELOOK_MS = 1000;
/** Each batch whose result waits for its changed file: since when, and when to look again (wall ms). */
const waiting = new Map<string, { since: number; nextLook: number; why: string }>();

const sameCells = (a: readonly string[], b: readonly string[]): boolean => {
  // Trailing empty cells are not content (a spreadsheet pads rows to the widest one).
  const trim = (c: readonly string[]): readonly string[] => {
    let n = c.length;
    while (n > 0 && c[n - 1] === '') n--;
    return c.slice(0, n);
  };
  const x = trim(a);
  const y = trim(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

export async function lateLines(rt: Pick<Runtime, 'config' | 'rows'>, batch: Batch): Promise<LateCheck> {
  const waited = waiting.get(batch.id);
  if (waited && fileClock.now() < waited.nextLook) return { stillWritten: waited.why, first: false };
  const path = resolve(rt.config.home, batch.jobFile);
  // Only a file in jobs/ is the batch's own copy (a batch submitted before submitted files were
  // copied points at the user's file, which they may edit as they like).
  if (!path.startsWith(resolve(rt.config.jobsDir) + sep) || !existsSync(path) || (await contentHash(path)) === batch.contentHash.split(':')[0]) {
    waiting.delete(batch.id);
    return { lines: [], note: null };
  }
  const now = fileClock.now();
  const age = now - statSync(path).mtimeMs;
  const writing = (age >= 0 && age < rt.config.settleMs) || (await openForWriting(path)).writers.length > 0;
  const patience = MAX_WAIT_SETTLES * Math.max(rt.config.settleMs, 1000);
  const since = waited?.since ?? now;
  if (writing && now - since < patience) {
    const why = `${batch.sourceName} changed after its rows were read and is still being written; the result waits until it holds still (at most ${Math.round(patience / 1000)} s)`;
    waiting.set(batch.id, { since, nextLook: now + Math.min(RELOOK_MS, rt.config.settleMs), why });
    return { stillWritten: why, first: waited === undefined };
  }
  waiting.delete(batch.id);
  const stillChanging = writing ? ` It was still being written ${Math.round(patience / 1000)} s later; lines written after this result are not in it.` : '';

  const lines: LateLine[] = [];
  let file: Awaited<ReturnType<typeof openOrderFile>>;
  try {
    file = await openOrderFile(path);
  } catch (err) {
    const note = `${batch.sourceName} changed after its rows were read, and cannot be read any more (${coerceError(err).message}): lines added to it, if any, are not in this result and were not ordered.${stillChanging}`;
    return { lines, note };
  }
  const headerChanged = batch.header !== null && !sameCells(batch.header, file.header.header.columns);
  // The stored rows, a page at a time, beside the file's rows in the same order.
  let page: Row[] = [];
  let at = 0;
  let next = 0;
  let end = false;
  const storedAt = (idx: number): Row | undefined => {
    for (;;) {
      if (at < page.length && page[at]!.idx >= idx) return page[at]!.idx === idx ? page[at] : undefined;
      if (at < page.length) {
        at++;
        continue;
      }
      if (end) return undefined;
      page = rt.rows.page(batch.id, next, 1000);
      at = 0;
      if (page.length === 0) end = true;
      else next = page[page.length - 1]!.idx + 1;
    }
  };
  try {
    for await (const run of file.batches) {
      for (const raw of run) {
        const stored = storedAt(raw.index);
        if (stored && sameCells(stored.cells, raw.cells) && !headerChanged) continue;
        const why = stored
          ? `not ordered: line ${raw.line} was changed after topup read the file (line ${stored.line} above is the row as it was read, and what was done with it); this version of it was never sent. To order it, put it in a new file.`
          : `not ordered: line ${raw.line} was written into the file after topup had read it (the file was still being written when it was taken); it was never sent. To order it, put it in a new file.`;
        lines.push({ line: raw.line, cells: raw.cells, why });
      }
    }
  } catch (err) {
    file.close();
    const note = `${batch.sourceName} changed after its rows were read; reading it again stopped at line ${lines.at(-1)?.line ?? 1} (${coerceError(err).message}): lines after that are not in this result and were not ordered.${stillChanging}`;
    return { lines, note };
  }
  const note =
    `${batch.sourceName} changed after its rows were read (something went on writing into ${batch.jobFile}): ` +
    `${lines.length} line${lines.length === 1 ? '' : 's'} of the file as it is now ${lines.length === 1 ? 'was' : 'were'} never ordered and ${lines.length === 1 ? 'is' : 'are'} marked skipped at the end of the result.` +
    `${headerChanged ? ' Its header changed too, so every line is listed again.' : ''}${stillChanging}`;
  return { lines, note };
}
