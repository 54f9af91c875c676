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
import { BUSY_SLEEP_MS } from '../engine/runner.js';
import { IDLE_LOOK_MS } from '../engine/stages/leases.js';
import type { CoveredAccount } from '../account/funds.js';

export const rowsText = (n: number): string => `${n} row${n === 1 ? '' : 's'}`;

/**
 * Who acts on the word, and the wait that is guaranteed: the process holding the batch reads it at
 * its next step (steps at most BUSY_SLEEP_MS apart; a step waiting for the supplier's answer ends
 * when it comes); a running daemon takes a batch nobody holds within IDLE_LOOK_MS.
 */
export function runCoveredAskedText(batchId: string, holder: string | null, daemonRuns: boolean): string {
  const who = holder !== null
    ? `the process running it (${holder}) does it at its next step, within ${BUSY_SLEEP_MS / 1000} s (longer only while that step waits for an answer from the supplier)`
    : daemonRuns
      ? `the daemon running on this home takes the batch within ${IDLE_LOOK_MS / 1000} s and does it then`
      : 'no daemon is running: start one (topup daemon), or topup daemon --once';
  return `Asked: ${who}, with the balance it reads then. Follow it: topup status ${batchId}\n`;
}

/**
 * The balance that decides, by account: only the accounts the batch's unsent rows wait on (each
 * account's balance covers its own rows), each named; never the sum of every account of the home.
 */
export function decidingBalanceText(accounts: readonly CoveredAccount[]): string {
  const one = (a: CoveredAccount): string =>
    a.balanceUsd === null
      ? `account ${a.account}: balance could not be read (it covers none of its ${rowsText(a.rows)})`
      : `account ${a.account}: ${a.balanceUsd.toFixed(2)} USD, ${a.availableUsd!.toFixed(2)} USD not promised to other batches; the batch has ${rowsText(a.rows)}, ${a.usd.toFixed(2)} USD on it`;
  if (accounts.length === 1) return `At the balance now of the account its rows wait on (${one(accounts[0]!)}):\n`;
  return `At the balance now of the accounts its rows wait on:\n${accounts.map((a) => `  ${one(a)}\n`).join('')}`;
}

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
          process.stdout.write(`${JSON.stringify({ batchId, balanceUsd: s.balanceUsd, availableUsd: s.availableUsd, accounts: s.accounts, run: { rows: s.keep.length, usd: s.keepUsd, lines: s.keep.map((r) => r.line) }, skip: { rows: s.skip.length, usd: s.skipUsd, lines: s.skip.map((r) => r.line) }, asked: asked !== undefined }, null, 2)}\n`);
          return;
        }
        process.stdout.write(
          `batch ${batchId} waits for balance: ${p.batch.waitDetail ?? ''}\n` +
            decidingBalanceText(s.accounts) +
            `  run now:  ${rowsText(s.keep.length)}, ${s.keepUsd.toFixed(2)} USD${s.keep.length > 0 ? ` (${linesLabel(s.keep.map((r) => r.line), lineRanges(s.keep.map((r) => r.line)))})` : ''}\n` +
            `  skipped:  ${rowsText(s.skip.length)}, ${s.skipUsd.toFixed(2)} USD${s.skip.length > 0 ? ` (${linesLabel(s.skip.map((r) => r.line), lineRanges(s.skip.map((r) => r.line)))})` : ''}: nothing bought; after a top-up: topup retry ${batchId}\n`,
        );
        if (s.keep.length === 0) process.stdout.write('The balance covers not even one row: the batch keeps waiting whole.\n');
        if (!asked) {
          process.stdout.write(`Nothing changed. To do it: topup run-covered ${batchId} --yes\n`);
          return;
        }
        process.stdout.write(runCoveredAskedText(batchId, asked.heldByLive ? (asked.batch.owner ?? 'unknown') : null, runningDaemon(ctx.rt.meta) !== null));
      } finally {
        await ctx.close();
      }
    });
}
