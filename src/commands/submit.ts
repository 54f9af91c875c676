/**
 * `topup submit FILE`: one batch in the foreground, with live progress, through the same engine,
 * settings and database as the daemon. The batch is claimed with this process's lease, so a
 * running daemon leaves it alone. The file is copied into jobs/<batch>/ as it is claimed (the
 * batch reads the bytes it hashed: claim.ts); the user's file stays where they keep it.
 */
import { existsSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { claimFile } from '../claim/claim.js';
import { InputFileError } from '../kernel/errors.js';
import { ExitCode } from '../kernel/exit-codes.js';
import { refusedFile } from '../intake/formats/index.js';
import { describeWriters, openForWriting } from '../intake/writers.js';
import { Notifier } from '../notify/notifier.js';
import type { BatchSummary } from '../outbox/summary.js';
import type { Runtime } from '../runtime.js';
import { openCommandContext } from './context.js';
import { runBatchInForeground } from './foreground.js';
import { runningDaemon } from '../store/presence.js';
import { applyHeapPolicy } from '../kernel/heap-policy.js';

export function registerSubmit(program: Command): void {
  program
    .command('submit')
    .description('Run one batch file now, in the foreground, with live progress; writes the same result files as the daemon')
    .argument('<file>', 'order file, .csv (or .tsv/.txt) or .xlsx (copied into jobs/ when claimed; your file is not moved or changed)')
    .option('--again', 'order a file identical to one processed before (new trxids: these are NEW purchases)')
    .option('--json', 'print the batch summary as JSON on stdout when done')
    .option('--quiet', 'no progress output')
    .addHelpText('after', '\nExit code: 0 when every row completed; 1 when some did not (see the result file), or the file has no order rows; 130 when stopped by Ctrl-C (a running daemon carries the batch on; without one it waits for topup daemon).')
    .action(async (file: string, opts: { again?: boolean; json?: boolean; quiet?: boolean }, cmd: Command) => {
      const path = resolve(file);
      if (!existsSync(path) || !statSync(path).isFile()) throw new InputFileError(`${file}: no such file`);
      // A kind of file topup never reads is refused before it becomes a batch.
      const refused = await refusedFile(path);
      if (refused !== undefined) throw new InputFileError(`${file}: ${refused}`);
      // The file is copied at once (claim.ts), so one look suffices: a file some process still
      // holds open for writing may be half written (a copy or a save in progress). Where that
      // cannot be seen (intake/writers.ts), the copy still refuses a file that changes under it.
      const { writers } = await openForWriting(path);
      if (writers.length > 0) {
        throw new InputFileError(`${file}: ${describeWriters(writers)} has it open for writing, so it may not be complete yet; nothing was submitted. Submit it again once it is saved and closed.`);
      }
      const ctx = await openCommandContext(cmd, { sends: 'refuse-beside-daemon' });
      applyHeapPolicy(ctx.config.heap);
      try {
        const batch = await claimFile(ctx.rt, path, { origin: 'submit', own: true, move: false, again: opts.again === true });
        if (!opts.quiet) process.stderr.write(`batch ${batch.id}: ${batch.sourceName}${ctx.config.sandbox ? ' (SANDBOX: no real money)' : ''}\n`);
        const notifier = new Notifier(ctx.config, ctx.log);
        const run = await runBatchInForeground(ctx.rt, batch.id, notifier, { quiet: opts.quiet === true });
        process.exitCode = report(ctx.rt, batch.id, run.summary, run.interrupted, opts.json === true);
      } finally {
        await ctx.close();
      }
    });
}

/** Who finishes a batch this process stopped driving: only a daemon that runs now is named. */
export function whoCarriesOn(rt: Pick<Runtime, 'meta'>): string {
  const d = runningDaemon(rt.meta);
  if (d) return `the daemon running on this home (pid ${d.pid}${d.host === hostname() ? '' : ` on ${d.host}`}) carries it on.`;
  return 'no daemon is running on this home, so it waits where it stopped (rows already sent are followed when it runs again): start the daemon (topup daemon), or finish it now with topup daemon --once.';
}

/** Prints the outcome of a foreground batch; returns the exit code. Shared with `retry --run`. */
export function report(rt: Pick<Runtime, 'batches' | 'meta'>, batchId: string, summary: BatchSummary | null, interrupted: boolean, json: boolean): number {
  const b = rt.batches.get(batchId)!;
  if (json) process.stdout.write(`${JSON.stringify(summary ?? { batchId, state: b.state, fileError: b.fileError }, null, 2)}\n`);
  const say = (s: string): void => void (json ? process.stderr : process.stdout).write(`${s}\n`);
  if (b.state === 'failed') {
    say(`batch ${batchId}: nothing was ordered: ${b.fileError}`);
    return ExitCode.InputFile;
  }
  if (!summary) {
    say(`batch ${batchId} is not finished${interrupted ? ' (stopped)' : ''}; ${whoCarriesOn(rt)} See: topup status ${batchId}`);
    return interrupted ? ExitCode.Interrupted : ExitCode.NotAllCompleted;
  }
  if (summary.duplicateOf) {
    say(`batch ${batchId}: nothing sent: this file is identical to batch ${summary.duplicateOf}. To order the same rows again on purpose: topup submit --again FILE`);
  }
  const c = summary.counts;
  say(
    `batch ${batchId}: ${summary.rows} rows: ${c.completed} completed, ${c.cancelled} cancelled, ${c.rejected} rejected, ${c.invalid} invalid, ${c.skipped} skipped` +
      `${c.review ? `, ${c.review} to review` : ''}; spent ${summary.spentUsd.toFixed(2)} USD` +
      `${summary.balanceAtEndUsd === null ? '' : `; balance now ${summary.balanceAtEndUsd.toFixed(2)} USD`}`,
  );
  for (const note of summary.notes ?? []) say(`note: ${note}`);
  say(`results: ${summary.resultFile}`);
  // A file without order rows ordered nothing: not "every row completed".
  return summary.rows > 0 && c.completed === summary.rows ? ExitCode.Ok : ExitCode.NotAllCompleted;
}
