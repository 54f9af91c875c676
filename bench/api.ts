/**
 * `--parts api`: the order API's fast path, measured side by side with the file path in one run.
 *
 * The real daemon (dist/cli.js, default settings but the sandbox's URL) with the order API on
 * 127.0.0.1, against the sandbox in this process (the spec's limits, 40/1s and 200/1m; orders
 * complete at once), so the time an order reaches the sandbox and the time the shop got its 202
 * are read on one clock.
 *
 *  1. To the wire: orders one by one, spaced so the rate gate always has room (`spacingMs`); per
 *     order, from the moment the client holds its 202 to the moment the sandbox holds the order
 *     (negative: the request was on the wire before the 202 reached the shop). Beside it, the file
 *     path: a one-row file renamed into the inbox, timed to the sandbox (the inbox's settle wait).
 *  2. Acceptance: each 202 comes after its row is committed with synchronous=FULL (group commits:
 *     concurrent acceptances share one). (a) Latency at the issue's load: `orders` POSTs launched on
 *     a schedule of `ratePerSec` per second (open loop: a slow answer does not slow the arrivals, as
 *     a shop's customers do not wait for each other), wall time per request, p50 / p99. (b)
 *     Throughput: `orders` more from `concurrency` keep-alive connections as fast as they answer
 *     (closed loop): accepted orders per second. (In a closed loop each request's time is mostly
 *     its wait behind the other connections' requests, so its latency is not the figure.)
 *     (a) runs twice: on the machine as it is, then beside a CPU hog (another process spinning
 *     `for (;;) {}`, one core's worth, issue 34): a shop's checkout does not get a quiet machine.
 *     The target is judged on the second.
 *  3. Idempotency under load: `replays` of those orders sent again with the same body (each must be
 *     200 with the same order) and with another body (each must be 409); rows stored must equal the
 *     orders accepted, and the sandbox's ledger must hold no trxid twice.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { CLI, cliEnv, inProcessSandbox, releaseAll, startDaemon, tempHome, waitFor, type DaemonProcess } from '../test/e2e/harness.js';
import { procSample, round, startChild, stopChild } from './lib.js';

const TOKEN = 'bench-order-api-token-0123456789abcdef';

export interface ApiReport {
  /** Which build answered (this build, or the baseline of --baseline-dist). */
  label?: string;
  toWire: { orders: number; spacingMs: number; p50Ms: number; p99Ms: number; maxMs: number; fileRuns: number; fileMedianMs: number; fileMinMs: number };
  accept: { orders: number; ratePerSec: number; p50Ms: number; p99Ms: number; maxMs: number; concurrency: number; wallSec: number; perSecond: number; statuses: Record<string, number>; hog: boolean };
  /** The same open-loop load without the hog, just before (same daemon). */
  acceptQuiet: { p50Ms: number; p99Ms: number; maxMs: number };
  /**
   * The open loops by time: per second of each run (by when the request was sent), requests,
   * p50, p99 and max (ms). Says whether the tail is the first seconds (warm-up) or spread
   * through the run (GC, a checkpoint, an fsync).
   */
  trace: { quiet: SecondFigures[]; hog: SecondFigures[] };
  /**
   * The daemon's CPU (/proc utime + stime) per POST in each open loop, ms: what a request costs
   * whatever the machine's load (the latency is queueing once that cost × 500/s nears the share
   * of a core the daemon gets).
   */
  cpuMsPerPost: { quiet: number; hog: number };
  replays: { same: number; sameAnswered200: number; other: number; otherAnswered409: number; rowsStored: number; accepted: number; ledgerTwice: number };
}

export interface SecondFigures { second: number; n: number; p50Ms: number; p99Ms: number; maxMs: number }

/** Latencies grouped by the second of the run their request was sent in. */
function bySecond(samples: { sentMs: number; ms: number }[]): SecondFigures[] {
  const groups = new Map<number, number[]>();
  for (const s of samples) {
    const k = Math.floor(s.sentMs / 1000);
    groups.set(k, [...(groups.get(k) ?? []), s.ms]);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([second, xs]) => ({ second, n: xs.length, p50Ms: round(pct(xs, 50), 1), p99Ms: round(pct(xs, 99), 1), maxMs: round(Math.max(...xs), 1) }));
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

/** A ledger order's trxid and creation time (ms; the sandbox gives ISO text or a number). */
const trxidOf = (o: Record<string, unknown>): string => String(o.trxid ?? '');
const createdMs = (o: Record<string, unknown>): number => (typeof o.createdAt === 'number' ? o.createdAt : Date.parse(String(o.createdAt)));

const order = (i: number, tag: string): Record<string, unknown> => ({ trxid: `${tag}-${i}`, pid: 'PUBG-60', userId: `5${String(100000000 + i)}` });

/** Where the daemon comes from, and whether its CPU is profiled (node --cpu-prof into that folder). */
export interface ApiBuild {
  label: string;
  /** dist/cli.js of the build measured; the harness's (this worktree's) when absent. */
  cli?: string;
  cpuProfDir?: string;
}

/** The harness's startDaemon, or the same for another build's CLI (a baseline). */
function daemonOf(env: NodeJS.ProcessEnv, build: ApiBuild): DaemonProcess {
  if (!build.cli && !build.cpuProfDir) return startDaemon(env);
  // node refuses --cpu-prof in NODE_OPTIONS: it goes on the command line.
  const prof = build.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', build.cpuProfDir] : [];
  const child = spawn(process.execPath, [...prof, build.cli ?? CLI, 'daemon'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return {
    child: Object.assign(child, { output: () => out }),
    output: () => out,
    exited,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const { code } = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  } as DaemonProcess;
}

async function startApiDaemon(balanceUsd: number, build: ApiBuild = { label: 'this build' }) {
  const home = tempHome('topup-bench-api-');
  const sb = await inProcessSandbox({ balanceUsd });
  const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_LOG_LEVEL: 'warn' });
  // The reseller's settings, not the tests' hurried ones.
  delete env.TOPUP_SETTLE_MS;
  delete env.TOPUP_POLL_INTERVAL_MS;
  env.TOPUP_LOG_LEVEL = 'info';
  const daemon = daemonOf(env, build);
  const url = (await waitFor('the console address', () => /console: open (http:\/\/[^\s]+\/) in a browser/.exec(daemon.output())?.[1], 30_000, 20)).replace(/\/$/, '');
  const pool = new Pool(url, { connections: 64, pipelining: 1 });
  const post = async (body: unknown): Promise<{ status: number; json: any; ms: number; at: number }> => {
    const t = performance.now();
    const res = await pool.request({ path: '/api/v1/orders', method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.body.json().catch(() => null);
    return { status: res.statusCode, json, ms: performance.now() - t, at: Date.now() };
  };
  return { home, sb, daemon, url, pool, post };
}

export async function measureApi(opts: { orders: number; ratePerSec: number; concurrency: number; wireOrders: number; spacingMs: number; fileRuns: number; replays: number; build?: ApiBuild }): Promise<ApiReport> {
  const build = opts.build ?? { label: 'this build' };
  const d = await startApiDaemon(1_000_000, build);
  try {
    // Warm: the catalog read, the first balance read, the day's batch made and funded.
    for (let i = 0; i < 5; i++) await d.post(order(i, 'warm'));
    await waitFor('warm-up orders at the API', () => d.sb.admin.ledger().orders.length >= 5, 30_000, 20);
    await new Promise((r) => setTimeout(r, 1_500));

    // 1. To the wire, with room in the gate.
    const got = new Map<string, number>();
    for (let i = 0; i < opts.wireOrders; i++) {
      const r = await d.post(order(i, 'wire'));
      if (r.status !== 202) throw new Error(`wire order ${i}: ${r.status} ${JSON.stringify(r.json)}`);
      got.set(`wire-${i}`, r.at);
      await new Promise((res) => setTimeout(res, opts.spacingMs));
    }
    await waitFor('every wire order at the API', () => d.sb.admin.ledger().orders.filter((o) => trxidOf(o).startsWith('wire-')).length >= opts.wireOrders, 60_000, 20);
    const wire = d.sb.admin.ledger().orders.filter((o) => trxidOf(o).startsWith('wire-')).map((o) => createdMs(o) - got.get(trxidOf(o))!);

    // 2a. Latency at a steady offered load (open loop): without, then beside a CPU hog.
    const statuses: Record<string, number> = {};
    const count = (status: number): void => void (statuses[status] = (statuses[status] ?? 0) + 1);
    const cpuMs: number[] = [];
    const openLoop = async (tag: string, trace: { sentMs: number; ms: number }[]): Promise<number[]> => {
      const lat: number[] = [];
      const cpu0 = procSample(d.daemon.child.pid!)?.cpuSec ?? NaN;
      const t0 = performance.now();
      const pending: Promise<void>[] = [];
      for (let i = 0; i < opts.orders; i++) {
        const due = t0 + (i * 1000) / opts.ratePerSec;
        const wait = due - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        const sentMs = performance.now() - t0;
        pending.push(d.post(order(i, tag)).then((r) => {
          lat.push(r.ms);
          trace.push({ sentMs, ms: r.ms });
          count(r.status);
        }));
      }
      await Promise.all(pending);
      cpuMs.push(round((((procSample(d.daemon.child.pid!)?.cpuSec ?? NaN) - cpu0) * 1000) / opts.orders, 3));
      return lat;
    };
    const traceQuiet: { sentMs: number; ms: number }[] = [];
    const traceHog: { sentMs: number; ms: number }[] = [];
    const quiet = await openLoop('quiet', traceQuiet);
    const hog = startChild(process.execPath, ['-e', 'for (;;) {}']);
    let lat: number[];
    try {
      await new Promise((r) => setTimeout(r, 500));
      lat = await openLoop('load', traceHog);
    } finally {
      await stopChild(hog, 2_000);
    }

    // 2b. Throughput: as fast as `concurrency` connections are answered (closed loop).
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: opts.concurrency }, async () => {
      while (next < opts.orders) {
        const i = opts.orders + next++;
        count((await d.post(order(i, 'load'))).status);
      }
    }));
    const wallSec = (performance.now() - started) / 1000;

    // 3. The same orders again: same body → 200; another body → 409.
    let same = 0;
    let other = 0;
    for (let i = 0; i < opts.replays; i++) {
      const k = Math.floor((i * 7919) % opts.orders);
      if ((await d.post(order(k, 'load'))).status === 200) same++;
      if ((await d.post({ ...order(k, 'load'), userId: '5999999999' })).status === 409) other++;
    }
    await d.daemon.stop();
    const db = new Database(join(d.home.dir, 'jobs', 'topup.db'), { readonly: true });
    const rowsStored = (db.prepare(`SELECT count(*) AS n FROM rows WHERE trxid LIKE 'load-%' OR trxid LIKE 'quiet-%'`).get() as { n: number }).n;
    // Every load order accepted once: 3 × orders rows (quiet, beside the hog, closed loop), whatever the repeats answered.
    db.close();
    const trxids = d.sb.admin.ledger().orders.map(trxidOf);
    const ledgerTwice = trxids.length - new Set(trxids).size;

    // The file path beside it: a one-row file renamed into a running daemon's inbox.
    const fileMs: number[] = [];
    for (let i = 0; i < opts.fileRuns; i++) {
      const f = await startApiDaemon(1_000, { label: build.label, ...(build.cli && { cli: build.cli }) });
      await new Promise((r) => setTimeout(r, 1_500));
      const tmp = join(f.home.dir, `.one-${i}.csv.writing`);
      writeFileSync(tmp, `pid,userId\nPUBG-60,51234${String(10000 + i)}\n`);
      const t = Date.now();
      renameSync(tmp, join(f.home.inbox, `one-${i}.csv`));
      await waitFor('the file\'s order at the API', () => f.sb.admin.ledger().orders.length >= 1, 60_000, 5);
      fileMs.push(createdMs(f.sb.admin.ledger().orders[0]!) - t);
      await f.pool.close();
      await f.daemon.stop();
    }
    fileMs.sort((a, b) => a - b);
    return {
      label: build.label,
      toWire: {
        orders: wire.length, spacingMs: opts.spacingMs, p50Ms: round(pct(wire, 50), 1), p99Ms: round(pct(wire, 99), 1), maxMs: round(Math.max(...wire), 1),
        fileRuns: fileMs.length, fileMedianMs: round(fileMs[Math.floor(fileMs.length / 2)]!, 0), fileMinMs: round(fileMs[0]!, 0),
      },
      accept: { orders: opts.orders, ratePerSec: opts.ratePerSec, p50Ms: round(pct(lat, 50), 2), p99Ms: round(pct(lat, 99), 2), maxMs: round(Math.max(...lat), 1), concurrency: opts.concurrency, wallSec: round(wallSec, 2), perSecond: round(opts.orders / wallSec, 0), statuses, hog: true },
      acceptQuiet: { p50Ms: round(pct(quiet, 50), 2), p99Ms: round(pct(quiet, 99), 2), maxMs: round(Math.max(...quiet), 1) },
      trace: { quiet: bySecond(traceQuiet), hog: bySecond(traceHog) },
      cpuMsPerPost: { quiet: cpuMs[0]!, hog: cpuMs[1]! },
      replays: { same: opts.replays, sameAnswered200: same, other: opts.replays, otherAnswered409: other, rowsStored, accepted: statuses['202'] ?? 0, ledgerTwice },
    };
  } finally {
    await d.pool.close().catch(() => {});
    await d.daemon.stop().catch(() => {});
    await releaseAll();
  }
}

export function apiTable(r: ApiReport): string {
  const a = r.accept;
  const w = r.toWire;
  const p = r.replays;
  return [
    '| order API (one run, side by side) | figure | target |',
    '|---|---|---|',
    `| 202 → request at the API, p50 / p99 / max (${w.orders} orders, one every ${w.spacingMs} ms) | ${w.p50Ms} / ${w.p99Ms} / ${w.maxMs} ms | p99 ≤ 100 ms |`,
    `| a one-row file renamed into the inbox → at the API, median / min (${w.fileRuns} runs) | ${w.fileMedianMs} / ${w.fileMinMs} ms | (the file path) |`,
    `| POST /api/v1/orders at ${a.ratePerSec}/s, p50 / p99 / max (${a.orders} orders, each 202 committed), the machine as it is | ${r.acceptQuiet.p50Ms} / ${r.acceptQuiet.p99Ms} / ${r.acceptQuiet.maxMs} ms | (beside) |`,
    `| the same beside a CPU hog (another process keeping one core busy) | ${a.p50Ms} / ${a.p99Ms} / ${a.maxMs} ms | p99 ≤ 25 ms |`,
    `| the daemon's CPU per POST in those two runs (utime + stime ÷ orders) | ${r.cpuMsPerPost.quiet} / ${r.cpuMsPerPost.hog} ms | (cost) |`,
    `| accepted orders per second, ${a.concurrency} connections as fast as answered (${a.orders} orders, ${a.wallSec} s) | ${a.perSecond} | ≥ 500 |`,
    `| same trxid, same body → 200 / another body → 409 | ${p.sameAnswered200}/${p.same} · ${p.otherAnswered409}/${p.other} | all |`,
    `| rows stored / orders accepted; trxids bought twice | ${p.rowsStored} / ${p.accepted}; ${p.ledgerTwice} | equal; 0 |`,
    '',
    apiTraceTable(r),
  ].join('\n');
}

/** The open loops second by second (by when each request was sent): where the tail sits. */
export function apiTraceTable(r: ApiReport): string {
  const seconds = Math.max(r.trace.quiet.length, r.trace.hog.length);
  const cell = (f: SecondFigures | undefined): string => (f ? `${f.n}: ${f.p50Ms} / ${f.p99Ms} / ${f.maxMs}` : '');
  return [
    `| second of the run${r.label ? ` (${r.label})` : ''} | machine as it is: n: p50 / p99 / max ms | beside the hog |`,
    '|--:|--:|--:|',
    ...Array.from({ length: seconds }, (_, i) => `| ${i} | ${cell(r.trace.quiet.find((f) => f.second === i))} | ${cell(r.trace.hog.find((f) => f.second === i))} |`),
  ].join('\n');
}
