/**
 * `topup`: argv → commands/*. Typed errors become one readable line and an exit code here,
 * the only place that exits; a stack trace is shown only with --verbose. Loaded by cli.ts once the
 * start-up heap flag is set (kernel/heap-policy.ts).
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { coerceError, ApiError } from './kernel/errors.js';
import { ExitCode, exitCodeFor } from './kernel/exit-codes.js';
import { endStartupHeap } from './kernel/heap-policy.js';
import { registerSandboxCommand } from './commands/sandbox.js';
import { registerCommands } from './commands/index.js';

// Everything this program writes (database, results with codes, reports) is for its user only.
process.umask(0o077);

// stdout closed by its reader (`topup status | head -5`): every later write fails with EPIPE,
// which Node throws as an unhandled 'error' event (a stack trace, exit 1). The reader has all it
// wanted, so that is no error: the output is dropped (a destroyed stream discards later writes
// silently) and the command runs to its end, exit 0 unless it fails for a reason of its own. It
// is not killed at once: a command that is placing orders (submit, the daemon in the foreground)
// finishes its work rather than stopping between a send and its record. One listener here covers
// printList, commander's help and every other write to process.stdout.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') return;
  throw err;
});

// The version is package.json's, read beside dist/ (or src/): one place to bump it.
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command();
program
  .name('topup')
  .version(version, '-V, --version', 'print the version (package.json) and exit')
  .description('Places game top-up orders in bulk through a Reseller API, safely: inbox/ → outbox/.')
  .option('--home <dir>', 'home folder holding inbox/, jobs/, outbox/ (default: $TOPUP_HOME or the current folder)')
  .option('--verbose', 'show stack traces of errors')
  .showHelpAfterError()
  .exitOverride()
  // The modules are loaded: from here each command has V8's own young generation sizing, or the
  // heap policy it applies itself (daemon, submit).
  .hook('preAction', () => endStartupHeap());

registerCommands(program);
registerSandboxCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : ExitCode.Usage;
  } else {
    const e = coerceError(err);
    const api = e instanceof ApiError && e.apiCode ? ` [${e.apiCode}]` : '';
    process.stderr.write(`topup: ${e.message}${api}\n`);
    if (program.opts<{ verbose?: boolean }>().verbose && e.stack) process.stderr.write(`${e.stack}\n`);
    process.exitCode = exitCodeFor(e);
  }
}
