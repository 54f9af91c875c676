/**
 * `topup cancel BATCH`: rows not yet sent end `skipped`; rows already sent are followed to
 * their end (they may still be charged); then the result files are written. If a live process
 * (the daemon, a submit) holds the batch, it does this at its next step (BUSY_SLEEP_MS apart at
 * most, longer only while a step waits for the API) and we wait for the result; otherwise this
 * command runs the batch to its end itself.
 */
import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { ExitCode } from '../kernel/exit-codes.js';
import { Notifier } from '../notify/notifier.js';
import { openCommandContext } from './context.js';
import { requestCancel } from '../ops/cancel.js';
import { heldByLiveProcess, snapshot } from '../ops/batch-view.js';
import { runBatchInForeground } from './foreground.js';
import { wholeNumber } from './output.js';
import { BUSY_SLEEP_MS } from '../engine/runner.js';
import { IDLE_LOOK_MS } from '../engine/stages/leases.js';
import { runningDaemon } from '../store/presence.js';
import { pendingAccountChanges } from '../store/account-identity.js';
import { configuredIdentities } from '../runtime.js';

/**
 * What a cancel of a batch another process runs can promise: that process reads the word at its
 * next step, and its steps are at most BUSY_SLEEP_MS apart (a step waiting for an answer from the
 * supplier ends when the answer, or its timeout, comes).
 */
export function cancelHeldText(batchId: string, owner: string | null): string {
  return `batch ${batchId} is run by another process (${owner ?? 'unknown'}); it stops sending the batch's rows at its next step, within ${BUSY_SLEEP_MS / 1000} s (longer only while that step waits for an answer from the supplier)\n`;
}

export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('Stop a batch: unsent rows end "skipped", sent rows are followed to their end, result files are written')
    .argument('<batch>', 'batch id')
    .option('--no-wait', 'only record the request when another process runs the batch; do not wait for its result file')
    .option('--timeout <seconds>', 'how long to wait for the process running the batch to finish it', wholeNumber('--timeout', 1, 86_400), 300)
    .addHelpText('after', '\nExit code: 0 when the batch is stopped and its results are written (or it had already finished); 6 no such batch; 1 timed out waiting.')
    .action(async (batchId: string, opts: { wait: boolean; timeout: number }, cmd: Command) => {
      // Beside a running daemon a rename in accounts.toml stays pending (runtime.ts 'apply-or-inspect').
      const ctx = await openCommandContext(cmd, { sends: true });
      const { rt } = ctx;
      try {
        const asked = requestCancel(rt, batchId);
        if (asked.kind === 'already-finished') {
          process.stdout.write(`batch ${batchId} had already finished (${asked.batch.state}); results: ${asked.batch.resultFile ?? '(none)'}\n`);
          return;
        }
        const held = asked.batch;
        // A rename in accounts.toml the running daemon has not applied (this process left it pending:
        // runtime.ts 'apply-or-inspect'): this process, reading the new names, must not run the
        // batch whose rows carry the old one. The daemon does it, by its own names.
        const leaveToDaemon = runningDaemon(rt.meta) !== null && pendingAccountChanges(rt.db, configuredIdentities(rt.config)).pending.length > 0;
        if (asked.heldByLive || leaveToDaemon) {
          process.stderr.write(asked.heldByLive ? cancelHeldText(batchId, held.owner) : `batch ${batchId}: the daemon running on this home takes it within ${IDLE_LOOK_MS / 1000} s and stops it (a rename in accounts.toml is pending, so this command does not run the batch itself)\n`);
          if (!opts.wait) {
            process.stdout.write(`cancel requested for batch ${batchId}; see topup status ${batchId}\n`);
            return;
          }
          const until = rt.clock.now() + opts.timeout * 1000;
          for (;;) {
            const cur = rt.batches.get(batchId)!;
            if (cur.finishedAt !== null) break;
            if (leaveToDaemon && runningDaemon(rt.meta) === null) {
              process.stdout.write(`batch ${batchId}: cancel requested, but the daemon stopped before finishing it; run topup cancel ${batchId} again (with no daemon running it applies the rename and finishes the batch here)\n`);
              process.exitCode = ExitCode.NotAllCompleted;
              return;
            }
            // The holder died: take over, or we would wait for ever.
            if (!leaveToDaemon && !heldByLiveProcess(cur)) {
              await runBatchInForeground(rt, batchId, new Notifier(ctx.config, ctx.log), { quiet: true });
              break;
            }
            if (rt.clock.now() > until) {
              process.stdout.write(`batch ${batchId}: cancel requested, but it has not finished within ${opts.timeout}s (rows still being followed); see topup status ${batchId}\n`);
              process.exitCode = ExitCode.NotAllCompleted;
              return;
            }
            await sleep(500);
          }
        } else {
          await runBatchInForeground(rt, batchId, new Notifier(ctx.config, ctx.log), { quiet: true });
        }
        const done = rt.batches.get(batchId)!;
        const s = snapshot(rt.rows, batchId);
        if (done.finishedAt === null) {
          process.stdout.write(`batch ${batchId}: cancel requested, not finished yet; see topup status ${batchId}\n`);
          process.exitCode = ExitCode.NotAllCompleted;
          return;
        }
        process.stdout.write(
          `batch ${batchId} cancelled: ${s.counts.skipped} rows skipped (never sent), ${s.counts.completed} completed, ${s.counts.cancelled} cancelled, ${s.counts.rejected} rejected; spent ${s.spentUsd.toFixed(2)} USD\nresults: ${done.resultFile}\n`,
        );
      } finally {
        await ctx.close();
      }
    });
}
