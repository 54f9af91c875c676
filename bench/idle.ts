/**
 * The idle daemon: `topup daemon` on an empty home with production settings (no scaling; the
 * scheduled jobs at their defaults), against a sandbox. After start-up has settled, CPU seconds,
 * RSS and API calls are measured over a quiet window.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, ProcWatch, removeDir, round, sleep, startChild, stopChild, tempDir, waitForOutput } from './lib.js';
import { startBenchSandbox, type SandboxSpec } from './sandbox.js';

export interface IdleResult {
  settleSec: number;
  windowSec: number;
  cpuSec: number;
  cpuPercentOfOneCore: number;
  rssMb: number;
  rssMaxInWindowMb: number;
  peakRssMb: number;
  apiCallsInWindow: number;
}

export async function measureIdle(opts: { sandbox: SandboxSpec; settleMs: number; windowMs: number }): Promise<IdleResult> {
  const sandbox = await startBenchSandbox({ ...opts.sandbox, scale: 1 });
  const home = tempDir('topup-bench-idle-');
  for (const d of ['inbox', 'jobs', 'outbox']) mkdirSync(join(home, d), { recursive: true, mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: process.env.HOME, TOPUP_HOME: home,
    TOPUP_API_URL: sandbox.url, TOPUP_API_KEY: opts.sandbox.apiKey, TOPUP_LOG_LEVEL: 'info',
  };
  const daemon = startChild(process.execPath, [CLI, 'daemon'], { env, logFile: join(home, 'daemon.log') });
  try {
    await waitForOutput(daemon, /topup daemon started/, 30_000);
    await sleep(opts.settleMs);
    const watch = new ProcWatch(daemon.pid!, 500);
    const a = watch.sample()!;
    const callsBefore = (await sandbox.calls()).length;
    let rssMax = a.rssMb;
    const until = Date.now() + opts.windowMs;
    while (Date.now() < until) {
      await sleep(500);
      rssMax = Math.max(rssMax, watch.sample()?.rssMb ?? 0);
    }
    const b = watch.stop()!;
    const callsAfter = (await sandbox.calls()).length;
    const cpu = b.cpuSec - a.cpuSec;
    return {
      settleSec: opts.settleMs / 1000, windowSec: opts.windowMs / 1000,
      cpuSec: round(cpu, 3), cpuPercentOfOneCore: round((cpu / (opts.windowMs / 1000)) * 100, 3),
      rssMb: round(b.rssMb, 1), rssMaxInWindowMb: round(rssMax, 1), peakRssMb: round(b.peakRssMb, 1),
      apiCallsInWindow: callsAfter - callsBefore,
    };
  } finally {
    await stopChild(daemon);
    await sandbox.stop();
    removeDir(home);
  }
}
