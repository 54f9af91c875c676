/**
 * One daemon contender: a fresh sandbox, a fresh TOPUP_HOME, the real `topup daemon` (watching
 * the inbox, as in production) with the scaled settings; the order file is renamed into inbox/
 * and the clock runs until outbox/<name>.result.csv exists. Everything else is read afterwards
 * from the sandbox (call log, ledger) and from /proc (the daemon's CPU and peak RSS).
 */
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallLogEntry, AdminLedger } from '../src/sandbox/index.js';
import { CLI, ProcWatch, daemonHome, removeDir, sleep, startChild, stopChild, waitFor, waitForOutput, type ProcSample } from './lib.js';
import { startBenchSandbox, type SandboxSpec } from './sandbox.js';

export interface DaemonRunSpec {
  label: string;
  mode: 'sliding' | 'fixed';
  csv: string;
  rows: number;
  sandbox: SandboxSpec;
  /** Client settings in wall-clock units (already divided by the scale). */
  env: Record<string, string>;
  timeoutMs: number;
  keepLogs?: string;
}

export interface DaemonRunRaw {
  label: string;
  mode: 'sliding' | 'fixed';
  /** Wall-clock ms: the file renamed into inbox/, and the result file first seen in outbox/. */
  landedAt: number;
  resultAt: number;
  /** The same two instants on the sandbox (real-equivalent) clock. */
  landedAtSb: number;
  resultAtSb: number;
  calls: CallLogEntry[];
  ledger: AdminLedger;
  summary: any;
  daemon: { atLanding: ProcSample | undefined; atResult: ProcSample | undefined };
  logTail: string;
}

export async function runDaemonContender(spec: DaemonRunSpec): Promise<DaemonRunRaw> {
  const sandbox = await startBenchSandbox(spec.sandbox);
  const { home, logFile, env } = daemonHome(`topup-bench-${spec.mode}-`, { url: sandbox.url, apiKey: spec.sandbox.apiKey }, {
    TOPUP_RATE_WINDOW_MODE: spec.mode,
    ...spec.env,
  });
  const daemon = startChild(process.execPath, [CLI, 'daemon'], { env, logFile });
  try {
    await waitForOutput(daemon, /topup daemon started/, 30_000);
    const watch = new ProcWatch(daemon.pid!);
    // Let start-up (doctor, watcher) finish so it is not counted against the batch.
    await sleep(500);
    const name = 'bench';
    const tmp = join(home, `.${name}.csv.writing`);
    writeFileSync(tmp, spec.csv);
    const atLanding = watch.sample();
    const landedAt = Date.now();
    renameSync(tmp, join(home, 'inbox', `${name}.csv`));
    const resultFile = join(home, 'outbox', `${name}.result.csv`);
    const resultAt = await waitFor('the result file', () => (existsSync(resultFile) ? Date.now() : false), spec.timeoutMs, 5);
    const atResult = watch.stop();
    const summaryFile = join(home, 'outbox', `${name}.summary.json`);
    await waitFor('the summary file', () => existsSync(summaryFile), 10_000);
    await sleep(50);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8'));
    await stopChild(daemon, 10_000);
    const [calls, ledger] = [await sandbox.calls(), await sandbox.ledger()];
    const logTail = readFileSync(logFile, 'utf8').split('\n').slice(-40).join('\n');
    if (spec.keepLogs) {
      writeFileSync(spec.keepLogs, readFileSync(logFile));
      copyFileSync(join(home, 'jobs', 'topup.db'), spec.keepLogs.replace(/\.log$/, '.db'));
    }
    return {
      label: spec.label, mode: spec.mode, landedAt, resultAt,
      landedAtSb: sandbox.toSandbox(landedAt), resultAtSb: sandbox.toSandbox(resultAt),
      calls, ledger, summary, daemon: { atLanding, atResult }, logTail,
    };
  } catch (err) {
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n') : '';
    throw new Error(`${spec.label}: ${(err as Error).message}\n--- daemon log tail ---\n${tail}`);
  } finally {
    await stopChild(daemon, 5_000);
    await sandbox.stop();
    removeDir(home);
  }
}
