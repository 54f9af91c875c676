/**
 * Writes a batch's result (CSV, and the workbook for an .xlsx input) and summary once every row
 * has reached an end, removes its partial result, then marks the batch done. Every file is
 * written atomically before the batch is marked, so a kill in between only means they are
 * written again, identically, after the restart.
 */
import { PlayerCheckStore } from '../store/player-checks.js';
import { Priority } from '../api/client.js';
import { coerceError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import { writeBatchResults } from './write-results.js';
import { removePartials } from './partial.js';
import { readColumnReport, summarize, writeSummaryFile, type BatchSummary } from './summary.js';
import { writePaths } from './paths.js';
import { lateLines } from './late-lines.js';

/**
 * Null when the result cannot be written yet: the batch's file changed after it was read and is
 * still being written (late-lines.ts); the caller tries again later.
 */
export async function finishBatch(rt: Pick<Runtime, 'account' | 'accounts' | 'accountOf' | 'batches' | 'clock' | 'config' | 'db' | 'log' | 'rows'>, batch: Batch): Promise<BatchSummary | null> {
  // The rows as the results are about to be written: if any changes before the batch is marked done
  // (an operator resolving a review row from another process meanwhile), the files are stale and the
  // batch is not marked; the next step writes them again (found by the simulator: an API batch was
  // marked done with a row the operator had just settled still "review" in its result).
  const before = JSON.stringify(rt.rows.counts(batch.id));
  // A first look: a file still being written makes the result wait before any balance is read.
  const first = await lateLines(rt, batch);
  if ('stillWritten' in first) {
    if (first.first) rt.log.warn({ batch: batch.id, file: batch.sourceName }, first.stillWritten);
    return null;
  }
  // The accounts' balance read after the batch's last order: a fact about the accounts at that time,
  // including whatever other batches spent and top-ups added meanwhile (summary.balanceAtEndUsd).
  // The batch's own "balance after" is its balance before less its own spend (summary.ts).
  let balanceAtEnd: number | null = null;
  // Several accounts: the balance of each account (balanceAtEnd is their sum).
  let byAccount: Record<string, number | null> | null = null;
  if (batch.state !== 'duplicate') {
    // Every account of the home, as the balance before was read (account/funds.ts): rows may have
    // moved between accounts, and the two figures must cover the same accounts to compare.
    const used = rt.accounts.map((a) => a.id);
    for (const name of used) {
      try {
        const usd = (await rt.accountOf(name).client.balance({ priority: Priority.lookup })).balanceUsd;
        balanceAtEnd = (balanceAtEnd ?? 0) + usd;
        if (rt.accounts.length > 1) (byAccount ??= {})[name] = usd;
      } catch (err) {
        if (rt.accounts.length > 1) (byAccount ??= {})[name] = null;
        rt.log.warn({ batch: batch.id, account: name, err: coerceError(err).message }, 'could not read the balance after the batch');
      }
    }
  }
  // The file is looked at again now, with nothing left to wait for before the result is written:
  // the balance reads above wait on the network (up to a request timeout per account), and a line
  // written into the file meanwhile was in neither the first look nor the result, so the final
  // file had a line with no result row (the simulator: seed 3801, two writes, one on each side of
  // the first look; test/outbox/changed-after-read.test.ts).
  const late = await lateLines(rt, batch);
  if ('stillWritten' in late) {
    if (late.first) rt.log.warn({ batch: batch.id, file: batch.sourceName }, late.stillWritten);
    return null;
  }
  if (late.note !== null) rt.log.error({ batch: batch.id, file: batch.sourceName, lines: late.lines.length }, late.note);
  const now = rt.clock.now();
  const paths = writePaths(rt, batch);
  const xlsx = batch.dialect.xlsx ? paths.resultXlsx : null;
  await writeBatchResults(rt, batch, { csv: paths.resultFile, xlsx }, false, late.lines);
  removePartials(rt, batch);
  const summary = summarize(batch, rt.rows.iterate(batch.id), { csv: paths.resultFile, xlsx }, balanceAtEnd, now, late, readColumnReport(rt, batch), byAccount, new PlayerCheckStore(rt.db).batchCalls(batch.id));
  writeSummaryFile(paths.summaryFile, summary);
  // The files are written and the batch not yet done: a crash here writes them again (same names).
  await rt.clock.yield();
  const marked = rt.db.transaction(() => JSON.stringify(rt.rows.counts(batch.id)) === before && rt.batches.finish(batch.id, summary.balanceAfterUsd, paths.resultFile, now)).immediate();
  if (!marked) {
    rt.log.info({ batch: batch.id }, 'rows changed while the results were written: they are written again');
    return null;
  }
  rt.log.info(
    { batch: batch.id, file: batch.sourceName, counts: summary.counts, spentUsd: summary.spentUsd, refundedUsd: summary.refundedUsd, result: paths.resultFile },
    'batch finished',
  );
  if (summary.rows === 0 && !batch.duplicateOf) rt.log.warn({ batch: batch.id, file: batch.sourceName }, `${batch.sourceName}: ${summary.notes[0]}`);
  return summary;
}
