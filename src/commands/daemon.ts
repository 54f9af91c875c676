import type { Command } from 'commander';
import { runDaemon } from '../daemon.js';
import { applyHeapPolicy } from '../kernel/heap-policy.js';
import { commandConfig } from './context.js';

export function registerDaemon(program: Command): void {
  program
    .command('daemon')
    .description('Watch inbox/, run every batch to its end, write results to outbox/ (until SIGTERM/SIGINT)')
    .option('--once', 'take the files already in the inbox and every unfinished batch, finish them all, then exit 0')
    .action(async (opts: { once?: boolean }, cmd: Command) => {
      const config = commandConfig(cmd);
      applyHeapPolicy(config.heap);
      process.exitCode = await runDaemon(config, { once: opts.once === true });
    });
}
