/**
 * Small helpers shared by the benchmark parts: child processes that are always cleaned up,
 * temp folders that are always removed, /proc sampling of a child's CPU and memory.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(BENCH_DIR, '..');
/** The build under test: dist/ of this repo, or another build (BENCH_DIST=/path/to/dist) to try a change. */
export const DIST = process.env.BENCH_DIST ?? join(ROOT, 'dist');
export const CLI = join(DIST, 'cli.js');

// ---------------------------------------------------------------------------------------------
// Cleanup: every child and temp dir is registered here and torn down on exit, error or signal.

const children = new Set<ChildProcess>();
const dirs = new Set<string>();

export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix)); // mkdtemp makes it 0700
  dirs.add(d);
  return d;
}

/**
 * A fresh home for a benchmarked daemon (inbox, jobs, outbox at 0700) and the daemon's whole
 * environment: PATH and HOME, the home, the sandbox's URL and key, info logs, then `extra`.
 * Nothing else of the caller's environment (no stray TOPUP_* setting) reaches the daemon.
 */
export function daemonHome(prefix: string, api: { url: string; apiKey: string }, extra: NodeJS.ProcessEnv = {}): { home: string; logFile: string; env: NodeJS.ProcessEnv } {
  const home = tempDir(prefix);
  for (const d of ['inbox', 'jobs', 'outbox']) mkdirSync(join(home, d), { recursive: true, mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TOPUP_HOME: home,
    TOPUP_API_URL: api.url,
    TOPUP_API_KEY: api.apiKey,
    TOPUP_LOG_LEVEL: 'info',
    ...extra,
  };
  return { home, logFile: join(home, 'daemon.log'), env };
}

export function removeDir(d: string): void {
  rmSync(d, { recursive: true, force: true });
  dirs.delete(d);
}

export function startChild(cmd: string, args: string[], opts: SpawnOptions & { logFile?: string } = {}): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  children.add(child);
  child.on('exit', () => children.delete(child));
  if (opts.logFile) {
    const out = createWriteStream(opts.logFile);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
  }
  return child;
}

/** SIGTERM, then SIGKILL after `graceMs`. Resolves when the child has exited. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

export function cleanupSync(): void {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  children.clear();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

export async function cleanup(): Promise<void> {
  await Promise.all([...children].map((c) => stopChild(c, 2_000)));
  cleanupSync();
}

process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    cleanupSync();
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------------------------
// /proc sampling (Linux). VmHWM is the kernel's own peak RSS, so no sampling is needed for the peak.

const TICKS_PER_SEC = 100; // USER_HZ; 100 on every Linux this runs on (getconf CLK_TCK)

export interface ProcSample {
  /** user + system CPU seconds so far */
  cpuSec: number;
  /** the system (kernel) part of cpuSec */
  sysSec: number;
  rssMb: number;
  peakRssMb: number;
  /** Bytes the process caused to be written to storage so far (/proc/<pid>/io write_bytes), MB. */
  writtenMb: number;
}

export function procSample(pid: number): ProcSample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the ")" that closes the command name: state is field 3; utime 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    let writtenMb = NaN;
    try {
      writtenMb = Number(/^write_bytes:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN) / 1_048_576;
    } catch {
      /* not readable here */
    }
    return { cpuSec: (utime + stime) / TICKS_PER_SEC, sysSec: stime / TICKS_PER_SEC, rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024, writtenMb };
  } catch {
    return undefined;
  }
}

/** Keeps the last good sample of a child (the /proc entry disappears when it exits). */
export class ProcWatch {
  last: ProcSample | undefined;
  readonly #timer: NodeJS.Timeout;
  constructor(readonly pid: number, everyMs = 250) {
    this.last = procSample(pid);
    this.#timer = setInterval(() => this.sample(), everyMs);
    this.#timer.unref();
  }
  sample(): ProcSample | undefined {
    const s = procSample(this.pid);
    if (s) this.last = s;
    return this.last;
  }
  stop(): ProcSample | undefined {
    clearInterval(this.#timer);
    return this.sample();
  }
}

// ---------------------------------------------------------------------------------------------

export { sleep };

export async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, everyMs = 10): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Resolves with the first match of `re` in the child's stdout (or rejects when it exits first). */
export function waitForOutput(child: ChildProcess, re: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => done(new Error(`no ${re} within ${timeoutMs} ms; output: ${text.slice(-2000)}`)), timeoutMs);
    const onData = (d: Buffer): void => {
      text += d.toString();
      const m = re.exec(text);
      if (m) done(undefined, m);
    };
    const onExit = (code: number | null): void => done(new Error(`exited (${code}) before ${re}; output: ${text.slice(-2000)}`));
    function done(err?: Error, m?: RegExpExecArray): void {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(m!);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', onExit);
  });
}

export const round = (n: number, digits = 2): number => (Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : n);
