/**
 * `--parts scale`: does the engine's own cost per order stay flat as the batch grows?
 *
 * The real daemon (dist/cli.js, a child process watching its inbox, as in production) against the
 * bench sandbox allowing 400 calls/s, so the daemon, not the API, is what could slow down. No time
 * compression: every time here is wall time. Per run:
 *  - orders/s while sending: admitted POST /orders from the first to the last (sandbox call log);
 *  - CPU seconds of the daemon process per 1,000 orders, from the file landing to the result
 *    (/proc/<pid>/stat utime + stime), and the same per tenth of the batch (the "curve": a cost
 *    that grows with the batch shows as a rising curve within one run);
 *  - peak RSS (VmHWM, the kernel's own peak) and the database size after the run;
 *  - the load average before and after (the machine is shared).
 * A run that does not finish within its time limit is still reported, from what it sent by then.
 */
import { closeSync, existsSync, fdatasyncSync, openSync, readFileSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { CallLogEntry } from '../src/sandbox/index.js';
import { daemonHome, procSample, removeDir, round, sleep, startChild, stopChild, tempDir, waitForOutput, type ProcSample } from './lib.js';
import { startBenchSandbox, type SandboxSpec } from './sandbox.js';
import { batchWorkload } from './workload.js';
import { routeGroup, table } from './report.js';

export const SCALE_PER_SECOND = 400;
/** A minute window that never binds (400/s is 24,000/min): the gate still has to count it. */
export const SCALE_PER_MINUTE = 24_000;

export interface ScaleSpec {
  label: string;
  /** The CLI under test (dist/cli.js of this build or of a baseline build). */
  cli: string;
  rows: number;
  seed: number;
  marginMs: number;
  /** Give up after this long (wall ms from landing); the figures are then from what was sent. */
  limitMs: number;
  /** Write a V8 CPU profile of the daemon into this folder. */
  cpuProfDir?: string;
  keepLogs?: string;
}

export interface ScaleRun {
  label: string;
  rows: number;
  finished: boolean;
  /** Seconds from the file landing to the result file (or to the limit). */
  wallSec: number;
  orders: number;
  firstOrderAfterSec: number | undefined;
  sendingSec: number;
  ordersPerSec: number;
  /** ordersPerSec ÷ the API's 400/s. */
  ofCeiling: number;
  cpuSec: number;
  cpuSecPer1k: number;
  /** The kernel's part of it (fsync, writes, sockets). */
  sysSecPer1k: number;
  /** Bytes the daemon wrote to storage per order (/proc/<pid>/io): the database, its log, the files. */
  writtenKbPerOrder: number;
  peakRssMb: number;
  /** RSS (sampled) before the file landed, when the first order left (the batch stored), and at most while sending. */
  rssMb: { idle: number; stored: number | undefined; sendingMax: number | undefined };
  db: { dbMb: number; walMb: number; totalMb: number; bytesPerRow: number } | undefined;
  calls: { submit: number; poll: number; history: number; other: number; r429: number };
  counts?: Record<string, number>;
  /** Per tenth of the orders: their rate and the daemon's CPU seconds per 1,000 of them. */
  curve: { tenth: number; ordersPerSec: number; cpuSecPer1k: number; rssMaxMb: number }[];
  loadavg: { before: number[]; after: number[] };
  /** A 4 KB write + fdatasync in the temp folder just before the run, median ms (see fsyncProbe). */
  fsyncMs: number;
  /**
   * The trace of the pace: the gaps between consecutive orders as the sandbox received them (ms,
   * its Date.now()): how many gaps of 0, 1, 2, 3, 4 and 5+ ms, and the time spent in gaps longer
   * than the ceiling's own (2.5 ms at 400/s) beyond that 2.5 ms: the time a paced sender lost.
   */
  gaps?: { histogram: Record<string, number>; lostSec: number; over20ms: number };
  /**
   * The same for the rate gate's admissions (its call log, api_calls.t: whole monotonic ms, every
   * route), read from the store after the run: what the gate let through, before the intent's
   * group commit and its sync bunch the requests up on their way to the wire.
   */
  admissions?: { histogram: Record<string, number>; lostSec: number; over20ms: number };
  /** Per order sent once and answered at once: ms from its intent (first_sent_at) to its answer's commit (updated_at), p50 / p90. */
  intentToAnswerMs?: { p50: number; p90: number; n: number };
}

export function scaleSandbox(seed: number): SandboxSpec {
  return {
    apiKey: 'bench-key-0123456789abcdef',
    rateLimits: [{ limit: SCALE_PER_SECOND, windowMs: 1_000 }, { limit: SCALE_PER_MINUTE, windowMs: 60_000 }],
    // Most orders complete at once; one in ten stays processing for 1–4 s, so the poller's
    // questions (due polls, history pages) are asked at scale too; 1% fail.
    fulfilment: { processingShare: 0.1, processingMs: [1_000, 4_000], failShare: 0.01, seed },
    balanceUsd: 1_000_000_000,
    scale: 1,
  };
}

const la = (): number[] => loadavg().map((x) => round(x, 2));

/** The packs of bench/workload.ts that the sandbox keeps stock of. */
const STOCKED_PACKS = ['KEY-PUBG-60', 'STEAM-5', 'GPLAY-10'];

/**
 * Milliseconds one small write + fdatasync takes in the temp folder right now (median of 50): the
 * floor under each order's intent commit. Other engineers' test runs move it from 0.2 to 4 ms.
 */
export function fsyncProbe(): number {
  const dir = tempDir('topup-bench-fsync-');
  const fd = openSync(join(dir, 'probe'), 'w');
  const buf = Buffer.alloc(4096, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      writeSync(fd, buf);
      fdatasyncSync(fd);
      times.push(performance.now() - t);
    }
  } finally {
    closeSync(fd);
    removeDir(dir);
  }
  times.sort((a, b) => a - b);
  return round(times[25]!, 2);
}

/** CPU seconds at wall time `t`, interpolated between samples. */
function cpuAt(samples: { t: number; cpu: number }[], t: number): number {
  if (samples.length === 0) return 0;
  if (t <= samples[0]!.t) return samples[0]!.cpu;
  for (let i = 1; i < samples.length; i++) {
    const b = samples[i]!;
    if (b.t >= t) {
      const a = samples[i - 1]!;
      return a.cpu + ((b.cpu - a.cpu) * (t - a.t)) / Math.max(b.t - a.t, 1);
    }
  }
  return samples[samples.length - 1]!.cpu;
}

function fileMb(path: string): number {
  return existsSync(path) ? statSync(path).size / 1_048_576 : 0;
}

export async function runScale(spec: ScaleSpec): Promise<ScaleRun> {
  const sandboxSpec = scaleSandbox(spec.seed);
  const sandbox = await startBenchSandbox(sandboxSpec);
  // The workload's key and card packs have a few hundred in stock: 100,000 rows would empty them
  // and turn later rows into refusals, a different (cheaper) path. Every batch size sees the same.
  for (const id of STOCKED_PACKS) await sandbox.admin('product', { id, stock: 10_000_000 });
  const fsyncMs = fsyncProbe();
  const { home, logFile, env } = daemonHome('topup-bench-scale-', { url: sandbox.url, apiKey: sandboxSpec.apiKey }, {
    TOPUP_RATE_LIMITS: `${SCALE_PER_SECOND}/1s,${SCALE_PER_MINUTE}/1m`,
    TOPUP_RATE_MARGIN_MS: String(spec.marginMs),
    TOPUP_BALANCE_REPORT_CRON: 'off',
    TOPUP_HISTORY_EXPORT_CRON: 'off',
    TOPUP_RECONCILE_CRON: 'off',
    TOPUP_LOW_BALANCE_CRON: 'off',
    // BENCH_DAEMON_ENV: extra K=V settings for the daemon, for experiments (e.g. TOPUP_CONSOLE=off).
    ...Object.fromEntries((process.env.BENCH_DAEMON_ENV ?? '').split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
  });
  // BENCH_NODE_ARGS: extra node flags for the daemon, for experiments (e.g. --trace-gc).
  const nodeArgs = [...(spec.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', spec.cpuProfDir] : []), ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const daemon = startChild(process.execPath, [...nodeArgs, spec.cli, 'daemon'], { env, logFile });
  const before = la();
  try {
    await waitForOutput(daemon, /topup daemon started/, 30_000);
    await sleep(500);
    const pid = daemon.pid!;
    const samples: { t: number; cpu: number; rss: number }[] = [];
    let last: ProcSample | undefined;
    const sample = (): void => {
      const s = procSample(pid);
      if (!s) return;
      last = s;
      samples.push({ t: Date.now(), cpu: s.cpuSec, rss: s.rssMb });
    };
    const name = 'scale';
    const tmp = join(home, `.${name}.csv.writing`);
    writeFileSync(tmp, batchWorkload(spec.rows, spec.seed).csv);
    sample();
    const first = last;
    const landedAt = Date.now();
    renameSync(tmp, join(home, 'inbox', `${name}.csv`));
    const resultFile = join(home, 'outbox', `${name}.result.csv`);
    let finished = false;
    while (Date.now() - landedAt < spec.limitMs) {
      await sleep(100);
      sample();
      if (existsSync(resultFile)) {
        finished = true;
        break;
      }
    }
    const endedAt = Date.now();
    sample();
    const atEnd = last!;
    const cpuStart = samples[0]!.cpu;
    const atStart = first!;
    let counts: Record<string, number> | undefined;
    const summaryFile = join(home, 'outbox', `${name}.summary.json`);
    if (finished) {
      for (let i = 0; i < 100 && !existsSync(summaryFile); i++) await sleep(50);
      if (existsSync(summaryFile)) counts = JSON.parse(readFileSync(summaryFile, 'utf8')).counts;
    }
    await stopChild(daemon, 20_000);
    const after = la();
    const jobs = join(home, 'jobs');
    const dbMb = fileMb(join(jobs, 'topup.db'));
    const walMb = fileMb(join(jobs, 'topup.db-wal'));
    const calls = (await sandbox.calls()).filter((c) => c.t >= landedAt - 1 && c.t <= endedAt + 1);
    const trace = storeTrace(join(jobs, 'topup.db'));
    if (spec.keepLogs) writeFileSync(spec.keepLogs, readFileSync(logFile));
    return { ...figures(spec, { landedAt, endedAt, finished, calls, samples, cpuStart, atStart, atEnd, counts, dbMb, walMb, before, after, fsyncMs }), ...trace };
  } catch (err) {
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n') : '';
    throw new Error(`${spec.label}: ${(err as Error).message}\n--- daemon log tail ---\n${tail}`);
  } finally {
    await stopChild(daemon, 5_000);
    await sandbox.stop();
    removeDir(home);
  }
}

interface Raw {
  landedAt: number;
  endedAt: number;
  finished: boolean;
  calls: CallLogEntry[];
  samples: { t: number; cpu: number; rss: number }[];
  cpuStart: number;
  atStart: ProcSample;
  atEnd: ProcSample;
  counts: Record<string, number> | undefined;
  dbMb: number;
  walMb: number;
  before: number[];
  after: number[];
  fsyncMs: number;
}

function figures(spec: ScaleSpec, r: Raw): ScaleRun {
  const admitted = r.calls.filter((c) => c.admitted);
  // Every order the API admitted counts, refused ones too: each one took a call of the budget.
  const submits = admitted.filter((c) => routeGroup(c.route) === 'submit').map((c) => c.t).sort((a, b) => a - b);
  const n = submits.length;
  const sendingMs = n > 1 ? submits[n - 1]! - submits[0]! : 0;
  const perSec = n > 1 ? ((n - 1) / sendingMs) * 1000 : 0;
  const cpu = r.atEnd.cpuSec - r.cpuStart;
  const curve: ScaleRun['curve'] = [];
  for (let k = 0; k < 10 && n >= 20; k++) {
    const a = Math.floor((k * (n - 1)) / 10);
    const b = Math.floor(((k + 1) * (n - 1)) / 10);
    const dt = submits[b]! - submits[a]!;
    const dc = cpuAt(r.samples, submits[b]!) - cpuAt(r.samples, submits[a]!);
    const rss = r.samples.filter((x) => x.t >= submits[a]! && x.t <= submits[b]!).map((x) => x.rss);
    curve.push({
      tenth: k + 1, ordersPerSec: round(((b - a) / Math.max(dt, 1)) * 1000, 0), cpuSecPer1k: round((dc / Math.max(b - a, 1)) * 1000, 2),
      rssMaxMb: rss.length ? Math.round(Math.max(...rss)) : NaN,
    });
  }
  const group = { submit: 0, poll: 0, history: 0, other: 0 };
  for (const c of admitted) group[routeGroup(c.route)]++;
  return {
    label: spec.label,
    rows: spec.rows,
    finished: r.finished,
    wallSec: round((r.endedAt - r.landedAt) / 1000, 1),
    orders: n,
    firstOrderAfterSec: n > 0 ? round((submits[0]! - r.landedAt) / 1000, 2) : undefined,
    sendingSec: round(sendingMs / 1000, 1),
    ordersPerSec: round(perSec, 1),
    ofCeiling: round(perSec / SCALE_PER_SECOND, 3),
    cpuSec: round(cpu, 2),
    cpuSecPer1k: round((cpu / Math.max(n, 1)) * 1000, 2),
    sysSecPer1k: round(((r.atEnd.sysSec - r.atStart.sysSec) / Math.max(n, 1)) * 1000, 2),
    writtenKbPerOrder: round(((r.atEnd.writtenMb - r.atStart.writtenMb) * 1024) / Math.max(n, 1), 1),
    peakRssMb: round(r.atEnd.peakRssMb, 1),
    rssMb: {
      idle: round(r.atStart.rssMb, 1),
      stored: n > 0 ? round(r.samples.find((x) => x.t >= submits[0]!)?.rss ?? NaN, 1) : undefined,
      sendingMax: n > 0 ? round(Math.max(...r.samples.filter((x) => x.t >= submits[0]! && x.t <= submits[n - 1]!).map((x) => x.rss)), 1) : undefined,
    },
    db: r.finished ? { dbMb: round(r.dbMb, 1), walMb: round(r.walMb, 1), totalMb: round(r.dbMb + r.walMb, 1), bytesPerRow: Math.round(((r.dbMb + r.walMb) * 1_048_576) / spec.rows) } : undefined,
    calls: { ...group, r429: r.calls.filter((c) => c.status === 429).length },
    ...(r.counts && { counts: r.counts }),
    curve,
    loadavg: { before: r.before, after: r.after },
    fsyncMs: r.fsyncMs,
    gaps: gapTrace(submits),
  };
}

/** ScaleRun.admissions and intentToAnswerMs, from the daemon's store after it stopped. */
function storeTrace(path: string): Pick<ScaleRun, 'admissions' | 'intentToAnswerMs'> {
  if (!existsSync(path)) return {};
  const db = new Database(path, { readonly: true });
  try {
    const ts = (db.prepare('SELECT t FROM api_calls ORDER BY t').pluck().all() as number[]);
    const lat = (db.prepare(`SELECT updated_at - first_sent_at FROM rows WHERE attempts = 1 AND polls = 0 AND order_id IS NOT NULL AND first_sent_at IS NOT NULL`).pluck().all() as number[]).sort((a, b) => a - b);
    const at = (q: number): number => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] ?? NaN;
    return { admissions: gapTrace(ts), intentToAnswerMs: { p50: at(0.5), p90: at(0.9), n: lat.length } };
  } catch {
    return {};
  } finally {
    db.close();
  }
}

/** See ScaleRun.gaps. */
function gapTrace(submits: number[]): ScaleRun['gaps'] {
  const histogram: Record<string, number> = { '0': 0, '1': 0, '2': 0, '3': 0, '4': 0, '5+': 0 };
  const ceilingGap = 1000 / SCALE_PER_SECOND;
  let lost = 0;
  let over20ms = 0;
  for (let i = 1; i < submits.length; i++) {
    const g = submits[i]! - submits[i - 1]!;
    histogram[g >= 5 ? '5+' : String(g)]!++;
    if (g > ceilingGap) lost += g - ceilingGap;
    if (g > 20) over20ms++;
  }
  return { histogram, lostSec: round(lost / 1000, 1), over20ms };
}

export interface ScaleReport {
  runs: ScaleRun[];
  ratios: { label: string; small: number; large: number; cpuPer1kRatio: number | undefined; ofCeilingAtLarge: number }[];
  targets: { target: string; measured: string | number | undefined; met: boolean | undefined }[];
}

/** Ratios side by side from one invocation, and the targets, per build. */
export function scaleReport(runs: ScaleRun[], small: number): ScaleReport {
  const labels = [...new Set(runs.map((r) => r.label))];
  const ratios: ScaleReport['ratios'] = [];
  const targets: ScaleReport['targets'] = [];
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  for (const label of labels) {
    const mine = runs.filter((r) => r.label === label);
    const at = (rows: number): ScaleRun[] => mine.filter((r) => r.rows === rows);
    const base = at(small);
    const baseCpu = base.length ? median(base.map((r) => r.cpuSecPer1k)) : undefined;
    for (const rows of [...new Set(mine.map((r) => r.rows))].filter((x) => x !== small).sort((a, b) => a - b)) {
      const big = at(rows);
      const cpu = median(big.map((r) => r.cpuSecPer1k));
      ratios.push({ label, small, large: rows, cpuPer1kRatio: baseCpu ? round(cpu / baseCpu, 2) : undefined, ofCeilingAtLarge: round(median(big.map((r) => r.ofCeiling)), 3) });
    }
    const r20 = ratios.find((x) => x.label === label && x.large === 20_000);
    const big = mine.filter((r) => r.rows >= 100_000 && r.finished);
    targets.push(
      { target: `${label}: orders/s at 20,000 rows ≥ 0.9 × ${SCALE_PER_SECOND}`, measured: r20?.ofCeilingAtLarge, met: r20 ? r20.ofCeilingAtLarge >= 0.9 && at(20_000).every((r) => r.finished) : undefined },
      { target: `${label}: CPU-s per 1k orders at 20,000 ÷ at ${small} ≤ 1.2`, measured: r20?.cpuPer1kRatio, met: r20?.cpuPer1kRatio !== undefined ? r20.cpuPer1kRatio <= 1.2 : undefined },
      { target: `${label}: daemon peak RSS < 150 MB at 100,000 rows`, measured: big.length ? Math.max(...big.map((r) => r.peakRssMb)) : undefined, met: big.length ? big.every((r) => r.peakRssMb < 150) : undefined },
      { target: `${label}: database size after 100,000 rows (reported)`, measured: big[0]?.db ? `${big[0].db.totalMb} MB (${big[0].db.bytesPerRow} B/row)` : undefined, met: big.length ? big.every((r) => r.db !== undefined) : undefined },
    );
  }
  return { runs, ratios, targets };
}

export function scaleTables(rep: ScaleReport): string {
  const runs = table(
    ['build', 'rows', 'done', 'orders/s sending', '÷ 400', 'CPU s', 'CPU s / 1k', 'of it sys', 'KB written / order', 'peak RSS MB', 'RSS idle / stored / sending MB', 'DB+WAL MB', 'wall s', '429', 'polls+history', 'load before → after', 'fsync ms'],
    rep.runs.map((r) => [
      r.label, r.rows, r.finished ? 'yes' : `NO (limit ${r.wallSec} s)`, r.ordersPerSec, r.ofCeiling, r.cpuSec, r.cpuSecPer1k, r.sysSecPer1k, r.writtenKbPerOrder, r.peakRssMb, `${r.rssMb.idle} / ${r.rssMb.stored ?? '—'} / ${r.rssMb.sendingMax ?? '—'}`,
      r.db ? r.db.totalMb : '—', r.wallSec, r.calls.r429, r.calls.poll + r.calls.history, `${r.loadavg.before[0]} → ${r.loadavg.after[0]}`, r.fsyncMs,
    ]),
  );
  const gaps = table(
    ['build', 'rows', 'gaps between orders at the API: 0 / 1 / 2 / 3 / 4 / 5+ ms', 'time lost in gaps > 2.5 ms (s)', 'gaps > 20 ms'],
    rep.runs.flatMap((r) => [
      [r.label, r.rows, r.gaps ? Object.values(r.gaps.histogram).join(' / ') : '—', r.gaps?.lostSec ?? '—', r.gaps?.over20ms ?? '—'],
      [`${r.label}: admitted by the gate`, r.rows, r.admissions ? Object.values(r.admissions.histogram).join(' / ') : '—', r.admissions?.lostSec ?? '—', r.admissions?.over20ms ?? '—'],
      [`${r.label}: intent → answer committed, p50 / p90 ms`, r.rows, r.intentToAnswerMs ? `${r.intentToAnswerMs.p50} / ${r.intentToAnswerMs.p90} (${r.intentToAnswerMs.n} orders)` : '—', '', ''],
    ]),
  );
  const curves = table(
    ['build', 'rows', 'CPU s per 1k orders, each tenth of the batch (first → last)', 'orders/s each tenth', 'RSS MB (max) each tenth'],
    rep.runs.map((r) => [r.label, r.rows, r.curve.map((c) => c.cpuSecPer1k).join(' '), r.curve.map((c) => c.ordersPerSec).join(' '), r.curve.map((c) => c.rssMaxMb).join(' ')]),
  );
  const ratios = table(
    ['build', 'CPU s/1k: large ÷ small', 'orders/s ÷ 400 at large'],
    rep.ratios.map((x) => [x.label, `${x.large} ÷ ${x.small}: ${x.cpuPer1kRatio ?? '—'}`, x.ofCeilingAtLarge]),
  );
  const targets = table(['target', 'measured', 'met'], rep.targets.map((t) => [t.target, t.measured, t.met === undefined ? 'not run' : t.met ? 'yes' : 'NO']));
  return [runs, '', gaps, '', curves, '', ratios, '', targets].join('\n');
}
