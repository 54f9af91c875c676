/**
 * `npm run bench -- --parts checks`: the real daemon with player checks on beside the same daemon
 * with them off (issue 31), against the sandbox at the supplier's limits (40/1s, 200/1m), time
 * compressed ×K. Each side gets a fresh sandbox and home, drops a file of `rows` rows (players
 * repeated; three rows carry a mistyped id the sandbox does not know), waits for its result, then
 * drops a second file of the same players under new trxids. Read afterwards from the sandbox's
 * call log and ledger: calls by kind (orders, checks, polls, other), 429s (every check goes through
 * the account's one rate gate, so the target is 0 with checks on too), wall time per file, check
 * calls of the second file (all answers kept: the target is 0), and orders placed for the three
 * mistyped ids (with checks on: 0). The ratios on/off are of figures measured in the same run.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { CallLogEntry } from '../src/sandbox/index.js';
import { CLI, daemonHome, removeDir, round, sleep, startChild, stopChild, waitFor, waitForOutput } from './lib.js';
import { table } from './report.js';
import { rng } from './workload.js';
import { startBenchSandbox, type SandboxSpec } from './sandbox.js';

export interface ChecksSpec {
  rows: number;
  seed: number;
  sandbox: SandboxSpec;
  /** Client settings in wall-clock units (already divided by the scale). */
  env: Record<string, string>;
  timeoutMs: number;
  log: (s: string) => void;
}

interface Calls { orders: number; checks: number; polls: number; other: number; all: number; rateLimited429: number }

interface FileFigures {
  calls: Calls;
  /** Wall clock of this run, landing → result file (s). */
  wallMeasuredSec: number;
  /** The same span on the sandbox (real-equivalent) clock (min). */
  wallMin: number;
  loadavgAtEnd: number;
}

export interface ChecksSide {
  checks: 'on' | 'off';
  first: FileFigures;
  second: FileFigures;
  /** Orders the supplier's ledger holds for the mistyped ids (both files). */
  ordersForMistyped: number;
  ordersPlaced: number;
  /** summary.json's playerChecks of the first file (on only). */
  summary: unknown;
}

export interface ChecksReport {
  rows: number;
  distinctPlayers: number;
  checkedRows: number;
  mistypedLines: number[];
  off: ChecksSide;
  on: ChecksSide;
  ratios: { wallFirst: number; wallSecond: number; callsFirst: number; callsSecond: number };
  loadavg: { before: number[]; after: number[] };
}

const digits = (r: () => number, n: number): string => {
  let s = String(1 + Math.floor(r() * 9));
  while (s.length < n) s += String(Math.floor(r() * 10));
  return s;
};

/**
 * The two files: PUBG Mobile (checked), Mobile Legends (checked) and Free Fire (no check) rows over
 * a pool of players a third the size of the file, so most players come back; three lines carry a
 * mistyped id (a digit of a pool player's id changed, which the sandbox is told it does not know).
 */
export function checksWorkload(rows: number, seed: number): { files: [string, string]; unknown: string[]; mistyped: { line: number; userId: string }[]; distinctPlayers: number; checkedRows: number } {
  const r = rng(seed);
  const pool: { pid: string; userId: string; zoneId?: string }[] = [];
  const poolSize = Math.max(10, Math.round(rows / 3));
  for (let i = 0; i < poolSize; i++) {
    const x = r();
    if (x < 0.55) pool.push({ pid: 'PUBG-60', userId: digits(r, 10) });
    else if (x < 0.85) pool.push({ pid: 'ML-86', userId: digits(r, 8), zoneId: digits(r, 4) });
    else pool.push({ pid: 'FFMENA-100', userId: digits(r, 9) });
  }
  const picks = Array.from({ length: rows }, () => pool[Math.floor(r() * pool.length)]!);
  // Lines are 1-based with the header as line 1: rows at about a tenth, a half and nine tenths.
  const mistypedIdx = [Math.floor(rows * 0.085), Math.floor(rows * 0.5), Math.floor(rows * 0.925)];
  const unknown: string[] = [];
  const mistyped: { line: number; userId: string }[] = [];
  for (const [n, i] of mistypedIdx.entries()) {
    const pubg = pool.find((p, k) => p.pid === 'PUBG-60' && k >= n * 7)!;
    // The last digit changed: the mistake a spreadsheet makes.
    const wrong = pubg.userId.slice(0, -1) + String((Number(pubg.userId.slice(-1)) + 1 + n) % 10);
    picks[i] = { pid: 'PUBG-60', userId: wrong };
    unknown.push(wrong);
    mistyped.push({ line: i + 2, userId: wrong });
  }
  const file = (tag: string): string => ['trxid,pid,userId,zoneId,quantity', ...picks.map((p, i) => `chk-${seed}-${tag}-${String(i + 1).padStart(5, '0')},${p.pid},${p.userId},${p.zoneId ?? ''},`)].join('\n') + '\n';
  const checked = picks.filter((p) => p.pid !== 'FFMENA-100');
  return {
    files: [file('a'), file('b')],
    unknown,
    mistyped,
    distinctPlayers: new Set(checked.map((p) => `${p.pid}:${p.userId}:${p.zoneId ?? ''}`)).size,
    checkedRows: checked.length,
  };
}

function countCalls(calls: CallLogEntry[], from: number, to: number): Calls {
  const c: Calls = { orders: 0, checks: 0, polls: 0, other: 0, all: 0, rateLimited429: 0 };
  for (const x of calls) {
    if (x.t < from || x.t > to) continue;
    c.all++;
    if (x.status === 429) c.rateLimited429++;
    if (x.route === 'POST /pubgvvfy' || x.route === 'POST /mlvfy') c.checks++;
    else if (x.route === 'POST /orders') c.orders++;
    else if (x.route === 'GET /orders/:orderId') c.polls++;
    else c.other++;
  }
  return c;
}

async function side(spec: ChecksSpec, work: ReturnType<typeof checksWorkload>, checks: 'on' | 'off'): Promise<ChecksSide> {
  const sandbox = await startBenchSandbox(spec.sandbox);
  await sandbox.admin('players', { unknown: work.unknown });
  const { home, logFile, env } = daemonHome(`topup-bench-checks-${checks}-`, { url: sandbox.url, apiKey: spec.sandbox.apiKey }, {
    ...spec.env,
    TOPUP_PLAYER_CHECKS: checks === 'on' ? 'all' : 'off',
  });
  const daemon = startChild(process.execPath, [CLI, 'daemon'], { env, logFile });
  try {
    await waitForOutput(daemon, /topup daemon started/, 60_000);
    await sleep(500);
    const files: FileFigures[] = [];
    let summary: unknown;
    for (const [k, csv] of work.files.entries()) {
      const name = `checks-${k === 0 ? 'a' : 'b'}`;
      const tmp = join(home, `.${name}.csv.writing`);
      writeFileSync(tmp, csv);
      const landedAt = Date.now();
      renameSync(tmp, join(home, 'inbox', `${name}.csv`));
      const resultFile = join(home, 'outbox', `${name}.result.csv`);
      const resultAt = await waitFor(`${name}'s result`, () => (existsSync(resultFile) ? Date.now() : false), spec.timeoutMs, 20);
      const summaryFile = join(home, 'outbox', `${name}.summary.json`);
      await waitFor('the summary file', () => existsSync(summaryFile), 20_000);
      await sleep(50);
      if (k === 0) summary = JSON.parse(readFileSync(summaryFile, 'utf8')).playerChecks ?? null;
      const calls = await sandbox.calls();
      const [from, to] = [sandbox.toSandbox(landedAt), sandbox.toSandbox(resultAt)];
      files.push({ calls: countCalls(calls, from, to), wallMeasuredSec: round((resultAt - landedAt) / 1000, 1), wallMin: round((to - from) / 60_000, 2), loadavgAtEnd: round(loadavg()[0]!, 1) });
      spec.log(`  checks ${checks}, file ${k + 1}: ${round((resultAt - landedAt) / 1000, 1)} s measured, ${files[k]!.calls.checks} checks, ${files[k]!.calls.rateLimited429} × 429, load ${loadavg()[0]!.toFixed(1)}`);
    }
    await stopChild(daemon, 10_000);
    const ledger = await sandbox.ledger();
    const wrong = new Set(work.unknown);
    const apiOrders = ledger.orders.filter((o) => o.source === 'api');
    return {
      checks,
      first: files[0]!,
      second: files[1]!,
      ordersForMistyped: apiOrders.filter((o) => wrong.has(String(o.userId ?? ''))).length,
      ordersPlaced: apiOrders.length,
      summary,
    };
  } catch (err) {
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n') : '';
    throw new Error(`checks ${checks}: ${(err as Error).message}\n--- daemon log tail ---\n${tail}`);
  } finally {
    await stopChild(daemon, 5_000);
    await sandbox.stop();
    removeDir(home);
  }
}

export async function measureChecks(spec: ChecksSpec): Promise<ChecksReport> {
  const work = checksWorkload(spec.rows, spec.seed);
  const before = loadavg().map((x) => round(x, 2));
  spec.log(`player checks: ${spec.rows} rows, ${work.checkedRows} on checked lines, ${work.distinctPlayers} distinct checked players, mistyped on lines ${work.mistyped.map((m) => m.line).join(', ')}; checks off, then on (fresh sandbox and home each)`);
  const off = await side(spec, work, 'off');
  const on = await side(spec, work, 'on');
  const ratio = (a: number, b: number): number => (b > 0 ? round(a / b, 2) : NaN);
  return {
    rows: spec.rows,
    distinctPlayers: work.distinctPlayers,
    checkedRows: work.checkedRows,
    mistypedLines: work.mistyped.map((m) => m.line),
    off,
    on,
    ratios: {
      wallFirst: ratio(on.first.wallMeasuredSec, off.first.wallMeasuredSec),
      wallSecond: ratio(on.second.wallMeasuredSec, off.second.wallMeasuredSec),
      callsFirst: ratio(on.first.calls.all, off.first.calls.all),
      callsSecond: ratio(on.second.calls.all, off.second.calls.all),
    },
    loadavg: { before, after: loadavg().map((x) => round(x, 2)) },
  };
}

export function checksTable(r: ChecksReport): string {
  const f = (s: ChecksSide, k: 'first' | 'second'): FileFigures => s[k];
  const row = (label: string, g: (x: FileFigures) => string | number, ratio?: (on: FileFigures, off: FileFigures) => number): (string | number)[][] =>
    (['first', 'second'] as const).map((k) => [`${label}, file ${k === 'first' ? 1 : 2}`, g(f(r.off, k)), g(f(r.on, k)), ratio ? ratio(f(r.on, k), f(r.off, k)) : '']);
  const q = (a: number, b: number): number => (b > 0 ? round(a / b, 2) : NaN);
  return table([`player checks (issue 31): ${r.rows} rows, ${r.distinctPlayers} players checked, mistyped on lines ${r.mistypedLines.join(', ')}`, 'checks off', 'checks on', 'on ÷ off'], [
    ...row('orders sent (POST /orders)', (x) => x.calls.orders, (a, b) => q(a.calls.orders, b.calls.orders)),
    ...row('player checks (/pubgvvfy, /mlvfy)', (x) => x.calls.checks),
    ...row('polls (GET /orders/:id)', (x) => x.calls.polls, (a, b) => q(a.calls.polls, b.calls.polls)),
    ...row('other calls', (x) => x.calls.other),
    ...row('all calls', (x) => x.calls.all, (a, b) => q(a.calls.all, b.calls.all)),
    ...row('429 answers', (x) => x.calls.rateLimited429),
    ...row('wall, inbox → outbox (real-equivalent min)', (x) => x.wallMin, (a, b) => q(a.wallMin, b.wallMin)),
    ...row('wall (measured s)', (x) => x.wallMeasuredSec, (a, b) => q(a.wallMeasuredSec, b.wallMeasuredSec)),
    ...row('load average (1 min) at the result', (x) => x.loadavgAtEnd),
    ['orders in the ledger for the mistyped ids (both files)', r.off.ordersForMistyped, r.on.ordersForMistyped, ''],
    ['orders placed (both files)', r.off.ordersPlaced, r.on.ordersPlaced, q(r.on.ordersPlaced, r.off.ordersPlaced)],
  ]);
}
