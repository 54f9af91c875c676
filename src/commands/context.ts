/**
 * What every command starts from: the validated config (with --home), a logger, and for
 * commands that talk to the API, the runtime (store, rate gate, client) on the same home as
 * the daemon. Commands log to stderr so that stdout carries only their output (--json, --csv):
 * as sentences on a terminal ("warning: SANDBOX: …"), as JSON lines otherwise (for scripts), where
 * the sandbox notice is info, not a warning: a script is not told on every run what it chose.
 */
import type { Command } from 'commander';
import { pino } from 'pino';
import { loadConfig, secretsOf, type Config } from '../config/config.js';
import { createLogger, textDestination, type Logger } from '../kernel/log.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { resolveApi, type ApiEndpoint } from '../account/endpoint.js';

export function globalOpts(cmd: Command): { home?: string; verbose?: boolean } {
  return cmd.optsWithGlobals<{ home?: string; verbose?: boolean }>();
}

export function commandConfig(cmd: Command, opts: { requireKey?: boolean } = {}): Config {
  const { home } = globalOpts(cmd);
  return loadConfig(process.env, home ? { TOPUP_HOME: home } : {}, opts);
}

export function commandLogger(config: Config, cmd: Command): Logger {
  const verbose = globalOpts(cmd).verbose === true;
  return createLogger({
    level: verbose ? 'debug' : process.env.TOPUP_LOG_LEVEL ? config.logLevel : 'warn',
    secrets: secretsOf(config),
    base: config.sandbox ? { mode: 'SANDBOX' } : {},
    destination: process.stderr.isTTY === true ? textDestination(process.stderr, { time: false }) : pino.destination({ dest: 2, sync: true }),
  });
}

export interface CommandContext {
  config: Config;
  log: Logger;
  rt: Runtime;
  api: ApiEndpoint;
  close(): Promise<void>;
}

/**
 * `sends`: the command may send orders (submit, retry, cancel run a batch themselves): while no
 * daemon runs it applies a rename of the accounts file as the daemon's start does; while one runs,
 * `'refuse-beside-daemon'` (submit, retry) refuses and `true` (cancel) leaves the rename pending
 * (runtime.ts RuntimeOptions.accounts). Every other command only reads or asks: a rename stays
 * pending and is said.
 */
export async function openCommandContext(cmd: Command, opts: { sends?: boolean | 'refuse-beside-daemon' } = {}): Promise<CommandContext> {
  const config = commandConfig(cmd);
  const log = commandLogger(config, cmd);
  // A person on a terminal is told once, in a sentence; a script's stderr stays quiet (endpoint.ts).
  const api = await resolveApi(config, log, { sandboxNotice: process.stderr.isTTY === true ? 'warn' : 'info' });
  const rt = openRuntime(config, log, api.url, {}, { accounts: opts.sends === 'refuse-beside-daemon' ? 'apply-or-refuse' : opts.sends === true ? 'apply-or-inspect' : 'inspect' });
  return {
    config,
    log,
    rt,
    api,
    async close() {
      await rt.close();
      await api.sandbox?.close();
    },
  };
}
