/** `topup doctor`: the start-up self-check, in full (the daemon runs the quick form at start). */
import type { Command } from 'commander';
import { runDoctor } from '../ops/doctor.js';
import { ExitCode } from '../kernel/exit-codes.js';
import { openCommandContext } from './context.js';
import { renderTable } from './output.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('Self-check: settings, the API key, the public IP for the allowlist, clock, disk, folder permissions, database integrity and size, batch folders the database does not know')
    .option('--json', 'print the report as JSON')
    .addHelpText('after', '\nExit code: 0 when nothing fatal failed (warnings are shown); 1 when orders cannot go out.')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const ctx = await openCommandContext(cmd);
      try {
        const report = await runDoctor(ctx.rt);
        if (opts.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        else {
          process.stdout.write(
            renderTable(report.checks, [
              { title: 'check', get: (c) => c.name },
              { title: 'result', get: (c) => (c.ok ? 'ok' : c.fatal ? 'FAIL' : 'warn') },
              { title: 'detail', get: (c) => `${c.detail}${c.code ? ` [${c.code}]` : ''}` },
            ]),
          );
          if (report.ip) process.stdout.write(`\nPublic IP seen by the API: ${report.ip}\n`);
          process.stdout.write(report.ok ? '\nOK: ready to send orders.\n' : '\nNOT READY: fix the FAIL lines above.\n');
        }
        process.exitCode = report.ok ? ExitCode.Ok : ExitCode.NotAllCompleted;
      } finally {
        await ctx.close();
      }
    });
}
