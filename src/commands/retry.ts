/**
 * `topup retry BATCH`: a new batch of the rows of BATCH that ended rejected or cancelled, with
 * fresh trxids. By default it is left for the daemon, which takes it up at its next look for
 * batches it does not hold, within IDLE_LOOK_MS (30 s) (or
 * `topup daemon --once` when no daemon runs); `--run` runs it here in the foreground like submit.
 */
import type { Command } from 'commander';
import { createRetryBatch } from '../ops/retry.js';
import { Notifier } from '../notify/notifier.js';
import { openCommandContext } from './context.js';
import { runBatchInForeground } from './foreground.js';
import { report } from './submit.js';
import { runningDaemon } from '../store/presence.js';
import { counted, linesLabel } from '../kernel/counts.js';
import { IDLE_LOOK_MS } from '../engine/stages/leases.js';

export function registerRetry(program: Command): void {
  program
    .command('retry')
    .description('Make a new batch of the rows of BATCH that ended rejected or cancelled (fresh trxids; a row never sent keeps its own) — run it after fixing the cause')
    .argument('<batch>', 'the finished batch whose failed rows to order again')
    .option('--run', 'run the new batch now in the foreground (like submit) instead of leaving it to the daemon')
    .option('--include-player-failures', 'also retry rows cancelled because of the player id (INVALID PLAYER); only after fixing the ids')
    .option('--repeats', 'instead: buy the rows skipped because they repeated an earlier purchase (on purpose)')
    .option('--json', 'print {batchId, retryOf, rows, lines} (and with --run the summary) as JSON')
    .addHelpText('after', '\nThese are NEW purchases: every retried row that was sent gets a new trxid and is charged again if it completes;\na row never sent (skipped by a cancel or by run-covered) keeps the trxid its file gave it.\nNever retried: rows in review, rows an order may exist for, cancelled rows that were not refunded;\nrows cancelled for the player id only with --include-player-failures.\nExit code: 0 batch created (with --run: every row completed); 1 with --run when some rows did not complete; 2 nothing to retry; 6 no such batch.')
    .action(async (batchId: string, opts: { run?: boolean; json?: boolean; includePlayerFailures?: boolean; repeats?: boolean }, cmd: Command) => {
      const ctx = await openCommandContext(cmd, { sends: 'refuse-beside-daemon' });
      try {
        const r = await createRetryBatch(ctx.rt, batchId, { keepLease: opts.run === true, includePlayerIdFailures: opts.includePlayerFailures === true, repeats: opts.repeats === true });
        const info = { batchId: r.batch.id, retryOf: batchId, rows: r.rows, lines: r.lines, keptTrxid: r.keptTrxid, left: r.left, file: r.batch.jobFile };
        if (!opts.json) for (const l of r.left) process.stderr.write(`left out: line ${l.line}: ${l.why}\n`);
        if (!opts.run) {
          if (opts.json) process.stdout.write(`${JSON.stringify(info, null, 2)}\n`);
          else {
            process.stdout.write(retryCreatedText(r.batch, batchId, r.rows, r.lines, runningDaemon(ctx.rt.meta) !== null, r.keptTrxid));
          }
          return;
        }
        process.stderr.write(`new batch ${r.batch.id}: ${counted(r.rows, 'row')} of ${batchId}; running it now\n`);
        const run = await runBatchInForeground(ctx.rt, r.batch.id, new Notifier(ctx.config, ctx.log), { quiet: opts.json === true });
        process.exitCode = report(ctx.rt, r.batch.id, run.summary, run.interrupted, opts.json === true);
      } finally {
        await ctx.close();
      }
    });
}

/**
 * What `topup retry` says of the batch it made (without --run). The wait named is the longest an
 * idle daemon goes between looks for batches it does not hold (engine/stages/leases.ts); a busy
 * one looks every 5 s.
 */
export function retryCreatedText(batch: { id: string; jobFile: string }, retryOf: string, rows: number, lines: readonly number[], daemonRuns: boolean, keptTrxid: readonly number[] = []): string {
  return (
    `new batch ${batch.id}: ${counted(rows, 'row')} of ${retryOf} (${linesLabel(lines)}) ${trxidsText(lines, keptTrxid)}, file ${batch.jobFile}\n` +
    `${daemonRuns ? `The daemon running on this home starts it within ${IDLE_LOOK_MS / 1000} s.` : 'No daemon is running on this home: start one (topup daemon), or run it now with topup daemon --once.'}   Follow it: topup status ${batch.id}\n`
  );
}

/**
 * What the retry file does with each row's trxid, from the decision that wrote it (ops/retry.ts
 * keptTrxid): a row never sent keeps its file's trxid (nothing was bought under it); any other row
 * is a new purchase under a fresh one.
 */
export function trxidsText(lines: readonly number[], keptTrxid: readonly number[]): string {
  const kept = new Set(keptTrxid);
  const fresh = lines.filter((l) => !kept.has(l));
  const keptLines = lines.filter((l) => kept.has(l));
  if (keptLines.length === 0) return 'with fresh trxids (new purchases)';
  const keptText = `${keptLines.length === 1 ? 'its' : 'their'} file's own ${keptLines.length === 1 ? 'trxid' : 'trxids'} (never sent)`;
  if (fresh.length === 0) return `keeping ${keptText}`;
  return `${linesLabel(keptLines)} keeping ${keptText}, ${linesLabel(fresh)} with fresh trxids (new purchases)`;
}
