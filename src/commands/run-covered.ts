/**
 * `topup run-covered BATCH`: a batch waiting for balance runs the rows the balance covers now; the
 * others end `skipped` (nothing bought) and `topup retry BATCH` buys them after a top-up
 * (ops/run-covered.ts). Says first what would run and what would be skipped at today's balance;
 * `--yes` asks for it.
 */
import type { Command } from 'commander';
import { openCommandContext } from './context.js';
import { lineRanges, requestRunCovered, runCoveredPreview } from '../ops/run-covered.js';
import { runningDaemon } from '../store/presence.js';
import { linesLabel } from '../kernel/counts.js';

export const rowsText = (n: number): string => `${n} row${n === 1 ? '' : 's'}`;

export function registerRunCovered(program: Command): void {
  program
    .command('run-covered')
    .description('Run the rows of a batch waiting for balance that the balance covers now; skip the rest (buy them later with topup retry)')
    .argument('<batch>', 'a batch waiting for balance')
    .option('--yes', 'do it (without it: only say what would run and what would be skipped)')
    .option('--json', 'print the preview (and whether it was asked) as JSON')
    .addHelpText('after', '\nThe process running the batch decides which rows run with the balance it reads then (never more than the money there is).\nSkipped rows end "skipped" with TOPUP_NOT_COVERED: nothing is bought for them.\nExit code: 0 shown or asked; 2 the batch is not waiting for balance; 6 no such batch.')
    .action(async (batchId: string, opts: { yes?: boolean; json?: boolean }, cmd: Command) => {
      const ctx = await openCommandContext(cmd);
      try {
        const p = await runCoveredPreview(ctx.rt, batchId);
        const s = p.split;
        const asked = opts.yes === true ? requestRunCovered(ctx.rt, batchId) : undefined;
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ batchId, balanceUsd: s.balanceUsd, availableUsd: s.availableUsd, run: { rows: s.keep.length, usd: s.keepUsd, lines: s.keep.map((r) => r.line) }, skip: { rows: s.skip.length, usd: s.skipUsd, lines: s.skip.map((r) => r.line) }, asked: asked !== undefined }, null, 2)}\n`);
          return;
        }
        process.stdout.write(
          `batch ${batchId} waits for balance: ${p.batch.waitDetail ?? ''}\n` +
            `At the balance now (${s.balanceUsd.toFixed(2)} USD, ${s.availableUsd.toFixed(2)} USD not promised to other batches):\n` +
            `  run now:  ${rowsText(s.keep.length)}, ${s.keepUsd.toFixed(2)} USD${s.keep.length > 0 ? ` (${linesLabel(s.keep.map((r) => r.line), lineRanges(s.keep.map((r) => r.line)))})` : ''}\n` +
            `  skipped:  ${rowsText(s.skip.length)}, ${s.skipUsd.toFixed(2)} USD${s.skip.length > 0 ? ` (${linesLabel(s.skip.map((r) => r.line), lineRanges(s.skip.map((r) => r.line)))})` : ''}: nothing bought; after a top-up: topup retry ${batchId}\n`,
        );
        if (s.keep.length === 0) process.stdout.write('The balance covers not even one row: the batch keeps waiting whole.\n');
        if (!asked) {
          process.stdout.write(`Nothing changed. To do it: topup run-covered ${batchId} --yes\n`);
          return;
        }
        const who = asked.heldByLive ? `the process running it (${asked.batch.owner}) does it within seconds` : runningDaemon(ctx.rt.meta) ? 'the daemon does it within seconds' : 'no daemon is running: start one (topup daemon), or topup daemon --once';
        process.stdout.write(`Asked: ${who}, with the balance it reads then. Follow it: topup status ${batchId}\n`);
      } finally {
        await ctx.close();
      }
    });
}
