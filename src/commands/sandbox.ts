/**
 * `topup sandbox`: runs the sandbox in the foreground until SIGINT/SIGTERM.
 * `topup sandbox balance`: the balance of the home's built-in sandbox (home.ts).
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ANSWER_STYLES, type AnswerStyle, startSandbox } from '../sandbox/index.js';
import { parseRateLimits } from '../sandbox/rate-limit.js';
import { DEFAULT_FULFILMENT } from '../sandbox/types.js';
import { changeSandboxBalance } from '../sandbox/home.js';
import { UsageError } from '../kernel/errors.js';
import { ensureHomeFolders } from '../runtime.js';
import { commandConfig, commandLogger } from './context.js';
import { addFormatOptions, formatOf, printList, usd } from './output.js';

const number = (name: string, min: number, max: number) => (v: string): number => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number in ${min}..${max}`);
  return n;
};

function range(v: string): [number, number] {
  const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(v);
  const [a, b] = m ? [Number(m[1]), Number(m[2] ?? m[1])] : [NaN, NaN];
  if (!(a <= b)) throw new InvalidArgumentError('expected MIN-MAX in milliseconds, e.g. 2000-8000');
  return [a, b];
}

function limits(v: string) {
  try { return parseRateLimits(v); } catch (e) { throw new InvalidArgumentError((e as Error).message); }
}

interface Opts {
  port: number; host: string; apiKey?: string; balance: number; catalog?: string; state?: string; adminToken?: string;
  rateLimits?: ReturnType<typeof parseRateLimits>; processingShare?: number; processingMs?: [number, number];
  failShare?: number; lostResponseShare?: number; seed?: number; answers: AnswerStyle; htmlShare?: number;
}

export function registerSandboxCommand(program: Command): void {
  const sandbox = program
    .command('sandbox')
    .description('Run a local imitation of the Reseller API for tests and rehearsals')
    .option('--port <port>', 'port to listen on (0 = any free port)', number('--port', 0, 65535), 8080)
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .addOption(new Option('--api-key <key>', 'API key the sandbox accepts').env('TOPUP_API_KEY'))
    .option('--balance <usd>', 'starting balance in USD of a new account', number('--balance', 0, 1e9), 1000)
    .option('--catalog <file>', 'catalog JSON {services, products} exported from a real account')
    .option('--state <file>', 'SQLite file keeping orders, balances and the ledger across restarts')
    .option('--admin-token <token>', 'token for the /__sandbox/ admin routes (default: random)')
    .option('--rate-limits <list>', 'rolling windows, e.g. 40/1s,200/1m', limits)
    .option('--processing-share <share>', 'share of top-ups that stay processing (0..1)', number('--processing-share', 0, 1))
    .option('--processing-ms <range>', 'processing time range in ms, e.g. 2000-8000', range)
    .option('--fail-share <share>', `share of top-ups, any player id, that end cancelled with INVALID PLAYER and are refunded (0..1; default ${DEFAULT_FULFILMENT.failShare}, as in the built-in sandbox; 0: only ids containing "fail" or equal to 99999 fail)`, number('--fail-share', 0, 1))
    .option('--lost-response-share <share>', 'share of submits whose answer is lost after the order is made', number('--lost-response-share', 0, 1))
    .addOption(new Option('--answers <style>', 'how answers are written: the spec\'s exact types, or as real deployments write them')
      .choices(ANSWER_STYLES).default('spec'))
    .option('--html-share <share>', 'real-world answers: share of calls answered by a proxy\'s HTML 502 page (0..1, default 0.025)', number('--html-share', 0, 1))
    .option('--seed <n>', 'seed of every random decision', number('--seed', -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER))
    .action(async (opts: Opts, cmd: Command) => {
      if (!opts.apiKey) cmd.error('error: an API key is needed: --api-key KEY or TOPUP_API_KEY');
      const fulfilment = {
        ...(opts.processingShare !== undefined && { processingShare: opts.processingShare }),
        ...(opts.processingMs !== undefined && { processingMs: opts.processingMs }),
        ...(opts.failShare !== undefined && { failShare: opts.failShare }),
        ...(opts.seed !== undefined && { seed: opts.seed }),
      };
      const faults = {
        ...(opts.lostResponseShare !== undefined && { lostResponseShare: opts.lostResponseShare }),
        ...(opts.seed !== undefined && { seed: opts.seed }),
      };
      const realWorld = {
        ...(opts.htmlShare !== undefined && { htmlShare: opts.htmlShare }),
        ...(opts.seed !== undefined && { seed: opts.seed }),
      };
      const sandbox = await startSandbox({
        host: opts.host, port: opts.port, apiKey: opts.apiKey, balanceUsd: opts.balance, fulfilment, faults,
        answers: opts.answers, realWorld,
        ...(opts.catalog !== undefined && { catalogFile: opts.catalog }),
        ...(opts.state !== undefined && { stateFile: opts.state }),
        ...(opts.adminToken !== undefined && { adminToken: opts.adminToken }),
        ...(opts.rateLimits !== undefined && { rateLimits: opts.rateLimits }),
      });
      process.stdout.write(`Sandbox listening on ${sandbox.url} (admin token: ${sandbox.adminToken})${opts.answers === 'spec' ? '' : `, ${opts.answers} answers`}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await sandbox.close();
    });
  registerSandboxBalance(sandbox);
}

/**
 * `topup sandbox balance [--add USD | --set USD]`: the built-in sandbox of this home (no
 * TOPUP_API_URL), in jobs/sandbox.db, whether or not the daemon runs: the daemon's sandbox reads
 * the balance from that file on every request, so it sees the change at once.
 */
function registerSandboxBalance(sandbox: Command): void {
  addFormatOptions(
    sandbox
      .command('balance')
      .description("Show, top up (--add) or set (--set) the balance of this home's built-in sandbox (jobs/sandbox.db); works while the daemon runs")
      .option('--add <usd>', 'add this many USD (a top-up)', number('--add', 0.01, 1e9))
      .option('--set <usd>', 'set the balance to this many USD', number('--set', 0, 1e9)),
  ).action((opts: { add?: number; set?: number; json?: boolean; csv?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    if (opts.add !== undefined && opts.set !== undefined) throw new UsageError('choose one of --add and --set');
    const config = commandConfig(cmd, { requireKey: false });
    if (config.apiUrl) {
      throw new UsageError(`this home sends orders to TOPUP_API_URL (${config.apiUrl}): its balance is the supplier's, topped up with them. topup sandbox balance changes the built-in sandbox, used when TOPUP_API_URL is not set`);
    }
    const log = commandLogger(config, cmd);
    ensureHomeFolders(config, log);
    const change = opts.add !== undefined ? { addUsd: opts.add } : opts.set !== undefined ? { setUsd: opts.set } : null;
    const r = changeSandboxBalance(config, log, change);
    const row = { balanceUsd: r.balanceUsd, beforeUsd: r.beforeUsd, changeUsd: Math.round((r.balanceUsd - r.beforeUsd) * 100) / 100, startingBalanceUsd: r.startingBalanceUsd, file: r.file };
    if (format !== 'table') {
      printList(format, [row], [
        { title: 'balanceUsd', get: (x) => x.balanceUsd },
        { title: 'beforeUsd', get: (x) => x.beforeUsd },
        { title: 'changeUsd', get: (x) => x.changeUsd },
        { title: 'startingBalanceUsd', get: (x) => x.startingBalanceUsd },
        { title: 'file', get: (x) => x.file },
      ], row);
      return;
    }
    const moved = row.changeUsd === 0 ? '' : ` (was ${usd(r.beforeUsd)} USD; ${row.changeUsd > 0 ? `${usd(row.changeUsd)} USD added` : `${usd(-row.changeUsd)} USD taken off`})`;
    process.stdout.write(`SANDBOX balance: ${usd(r.balanceUsd)} USD${moved}\n` +
      `in ${r.file}: a running daemon sees it at once, and batches waiting for balance go on within a minute.\n` +
      (change === null ? 'Top it up with: topup sandbox balance --add 500 (or --set 5000)\n' : ''));
  });
}
