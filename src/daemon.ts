/**
 * `topup daemon`: wiring. Config → (built-in sandbox when no API URL) → runtime → runner, with
 * the inbox watcher feeding it, signals stopping it, and the scheduled jobs beside it.
 *
 * Stop: the first SIGTERM/SIGINT stops taking new work, lets calls in flight finish (bounded),
 * releases the batch leases and exits 0. A second signal exits at once; that is as safe as a
 * crash, which the store is built for.
 */
import { join } from 'node:path';
import type { Config } from './config.js';
import { createLogger, type Logger } from './log.js';
import { openRuntime, ensureHomeFolders, type Runtime } from './runtime.js';
import { Runner } from './engine/runner.js';
import { listReadyFiles, watchInbox, type InboxWatcher } from './intake/watch.js';
import { startSandbox, type RunningSandbox } from './sandbox/index.js';
import { Notifier } from './notify/notifier.js';
import { runDoctor } from './doctor.js';
import { startScheduledJobs, type ScheduledJobs } from './reports/schedule.js';
import { startConsole, type RunningConsole } from './console/server.js';

export interface ApiEndpoint {
  url: string;
  sandbox: RunningSandbox | null;
}

/** The API to talk to: TOPUP_API_URL, or a sandbox started in this process (state kept in jobs/). */
export async function resolveApi(config: Config, log: Logger): Promise<ApiEndpoint> {
  if (config.apiUrl) return { url: config.apiUrl, sandbox: null };
  ensureHomeFolders(config, log);
  const sandbox = await startSandbox({
    apiKey: config.apiKey,
    balanceUsd: config.sandboxBalanceUsd,
    answers: config.sandboxAnswers,
    stateFile: join(config.jobsDir, 'sandbox.db'),
    port: 0,
    logger: log.child({ component: 'sandbox' }),
  });
  log.warn({ url: sandbox.url, answers: config.sandboxAnswers }, 'SANDBOX: no TOPUP_API_URL set, so orders go to the built-in sandbox; no real money is spent');
  return { url: sandbox.url, sandbox };
}

export function rootLogger(config: Config): Logger {
  return createLogger({
    level: config.logLevel,
    secrets: [config.apiKey, config.telegram?.botToken ?? '', config.console?.token ?? ''],
    base: config.sandbox ? { mode: 'SANDBOX' } : {},
  });
}

const SWEEP_EVERY_MS = 15_000;

/**
 * A file-system watcher can miss an event (a burst of files, a file added while it starts up),
 * and a missed file would wait in the inbox until the next restart. So the inbox is also listed
 * every 15 s; a file offered twice is claimed once (the second claim finds it gone).
 */
function sweepInbox(dir: string, settleMs: number, offer: (path: string) => void, log: Logger): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    listReadyFiles(dir, { settleMs })
      .then((files) => files.forEach(offer))
      .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'could not list the inbox'))
      .finally(() => {
        running = false;
      });
  }, SWEEP_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

export interface DaemonOptions {
  once: boolean;
}

export async function runDaemon(config: Config, opts: DaemonOptions, log = rootLogger(config)): Promise<number> {
  const api = await resolveApi(config, log);
  let rt: Runtime | undefined;
  let watcher: InboxWatcher | undefined;
  let sweep: (() => void) | undefined;
  let jobs: ScheduledJobs | undefined;
  let web: RunningConsole | null = null;
  try {
    rt = openRuntime(config, log, api.url);
    const report = await runDoctor(rt, { quick: true });
    for (const c of report.checks) {
      const level = c.ok ? 'info' : c.fatal ? 'error' : 'warn';
      log[level]({ check: c.name, ok: c.ok }, `doctor: ${c.name}: ${c.detail}`);
    }
    const runner = new Runner(rt, { once: opts.once });
    const notifier = new Notifier(config, log);
    notifier.follow(runner);

    let signals = 0;
    const onSignal = (sig: NodeJS.Signals): void => {
      signals++;
      if (signals > 1) {
        log.warn({ signal: sig }, 'second signal: exiting now (state is safe on disk)');
        process.exit(130);
      }
      log.info({ signal: sig }, 'stopping: no new work, waiting for calls in flight');
      runner.stop();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);

    if (opts.once) {
      for (const f of await listReadyFiles(config.inboxDir, { settleMs: config.settleMs })) runner.offerFile(f);
    } else {
      watcher = watchInbox(config.inboxDir, (path) => runner.offerFile(path), {
        settleMs: config.settleMs,
        onIgnored: (path, why) => log.info({ file: path, why }, 'ignored a file in the inbox'),
      });
      jobs = startScheduledJobs(rt, notifier);
      sweep = sweepInbox(config.inboxDir, config.settleMs, (path) => runner.offerFile(path), log);
      // The console (and /metrics): beside the runner, never for --once (it would vanish when the batches end).
      if (config.console) web = await startConsole({ rt, runner, jobs, notifier, settings: config.console });
    }
    log.info({ home: config.home, api: config.sandbox ? 'SANDBOX' : config.apiUrl, once: opts.once, console: web?.url }, 'topup daemon started');
    await runner.run();
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await notifier.flush();
    log.info('topup daemon stopped');
    return 0;
  } finally {
    await web?.close();
    sweep?.();
    await jobs?.stop();
    await watcher?.close();
    await rt?.close();
    await api.sandbox?.close();
  }
}
