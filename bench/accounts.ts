/**
 * `--parts accounts`: several supplier accounts, measured side by side in one run.
 *
 *  1. Throughput: each account a sandbox enforcing the real supplier's 10 calls/s and 80 calls/min,
 *     with the gate given those limits; one account with N/2 rows beside two accounts (routing
 *     `spread`, and `cheapest` with its queue-delay rule) with N rows, so each account has the same
 *     work and the same window edges. Orders per minute (sandbox clock, first to last POST
 *     /orders). "Each account to its ceiling" = two accounts' orders/min ÷ (2 × one account's):
 *     1.0 when the second account adds a whole account's budget. (A short run's first-to-last span
 *     gains from the minute window's edges, so orders/min ÷ 80 alone is not the figure to judge.)
 *  2. Faults per account: one account losing 30 % of its answers (created, then the socket dropped),
 *     the other in maintenance for a while: every row final, and no purchase bought twice across
 *     the two ledgers (by trxid and by row), no row on the account in maintenance.
 *
 * Time runs `scale` times faster in the sandboxes (bench/sandbox.ts), and the client's windows are
 * divided by it, so a 5-minute real-equivalent run takes 30 s at ×10. Orders complete at once
 * (no polls): what is measured is each account's order budget.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, removeDir, round, startChild, tempDir } from './lib.js';
import { startBenchSandbox, type BenchSandbox, type SandboxSpec } from './sandbox.js';
import type { ChildProcess } from 'node:child_process';

const KEY = 'bench-accounts-key-0123456789';
const PER_SECOND = 10;
const PER_MINUTE = 80;

export interface AccountsRun {
  label: string;
  accounts: number;
  rows: number;
  /** Orders per real-equivalent minute, first to last POST /orders. */
  ordersPerMin: number;
  /** The sum of the accounts' order ceilings (80/min each). */
  ceilingPerMin: number;
  ofCeiling: number;
  rateLimited: number;
  byAccount: Record<string, number>;
  wallSec: number;
}

export interface AccountsFaultRun {
  rows: number;
  final: number;
  boughtTwice: number;
  byAccount: Record<string, number>;
  onMaintenanceAccount: number;
  moved: number;
  wallSec: number;
}

export interface AccountsReport {
  scale: number;
  runs: AccountsRun[];
  /** Two accounts' orders/min ÷ (2 × one account's), each account with the same rows. */
  perAccountOfOne: { spread: number; cheapest: number };
  faults: AccountsFaultRun;
}

function spec(scale: number): SandboxSpec {
  return {
    apiKey: KEY,
    rateLimits: [{ limit: PER_SECOND, windowMs: 1_000 }, { limit: PER_MINUTE, windowMs: 60_000 }],
    fulfilment: { processingShare: 0, processingMs: [1_000, 2_000], failShare: 0, seed: 1 },
    balanceUsd: 10_000_000,
    scale,
  };
}

function orderFile(dir: string, rows: number): string {
  const lines = ['pid,userId', ...Array.from({ length: rows }, (_, i) => `PUBG-60,${5_100_000_000 + i}`)];
  const file = join(dir, 'orders.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function home(sandboxes: BenchSandbox[], scale: number, routing: string, extra = ''): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir('topup-bench-accounts-');
  for (const d of ['inbox', 'jobs', 'outbox', 'keys']) mkdirSync(join(dir, d), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'keys', 'k'), KEY, { mode: 0o600 });
  const ms = (real: number): number => Math.max(1, Math.round(real / scale));
  const limits = `${PER_SECOND}/${ms(1_000)}ms,${PER_MINUTE}/${ms(60_000)}ms`;
  const accounts = sandboxes.map((sb, i) => `[[account]]\nname = "acct${i + 1}"\nurl = "${sb.url}"\nkey_file = "keys/k"\nrate_limits = "${limits}"\n`).join('\n');
  writeFileSync(join(dir, 'accounts.toml'), `routing = "${routing}"\nmax_queue_delay = "${ms(30_000)}ms"\n${extra}\n${accounts}`);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TOPUP_HOME: dir,
    TOPUP_LOG_LEVEL: 'warn',
    TOPUP_RATE_MARGIN_MS: String(ms(100)),
    TOPUP_POLL_INTERVAL_MS: String(ms(5_000)),
    TOPUP_REQUEST_TIMEOUT_MS: String(Math.max(300, ms(15_000))),
    TOPUP_CATALOG_MAX_AGE_MS: String(Math.max(1_000, ms(60_000))),
    TOPUP_CONSOLE: 'off',
    TOPUP_BALANCE_REPORT_CRON: 'off',
    TOPUP_HISTORY_EXPORT_CRON: 'off',
    TOPUP_RECONCILE_CRON: 'off',
    TOPUP_LOW_BALANCE_CRON: 'off',
  };
  return { dir, env };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

async function submit(dir: string, env: NodeJS.ProcessEnv, file: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  const child = startChild(process.execPath, [CLI, 'submit', file], { env, logFile: join(dir, 'submit.log') });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await exited(child);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`topup submit exited ${code} (log: ${join(dir, 'submit.log')})`);
  return (Date.now() - started) / 1000;
}

async function throughput(label: string, count: number, routing: string, rows: number, scale: number): Promise<AccountsRun> {
  const sandboxes = await Promise.all(Array.from({ length: count }, () => startBenchSandbox(spec(scale))));
  const { dir, env } = home(sandboxes, scale, routing);
  try {
    const wallSec = await submit(dir, env, orderFile(dir, rows), 20 * 60_000);
    const posts: number[] = [];
    const byAccount: Record<string, number> = {};
    let rateLimited = 0;
    for (const [i, sb] of sandboxes.entries()) {
      const calls = await sb.calls();
      const mine = calls.filter((c) => c.method === 'POST' && c.status !== 429);
      rateLimited += calls.filter((c) => c.status === 429).length;
      posts.push(...mine.map((c) => c.t));
      byAccount[`acct${i + 1}`] = (await sb.ledger()).orders.length;
    }
    posts.sort((x, y) => x - y);
    const spanMin = (posts[posts.length - 1]! - posts[0]!) / 60_000;
    const ordersPerMin = (posts.length - 1) / spanMin;
    const ceilingPerMin = PER_MINUTE * count;
    return { label, accounts: count, rows, ordersPerMin: round(ordersPerMin, 1), ceilingPerMin, ofCeiling: round(ordersPerMin / ceilingPerMin, 3), rateLimited, byAccount, wallSec: round(wallSec, 1) };
  } finally {
    await Promise.all(sandboxes.map((s) => s.stop()));
    removeDir(dir);
  }
}

async function faults(rows: number, scale: number): Promise<AccountsFaultRun> {
  // acct1 loses 30 % of its answers; acct2 is in maintenance for its first 2 real-equivalent minutes.
  const lossy = await startBenchSandbox(spec(scale));
  await lossy.admin('faults', { lostResponseShare: 0.3, seed: 11 });
  const maint = await startBenchSandbox(spec(scale));
  const until = maint.toSandbox(Date.now()) + 120_000;
  await maint.admin('faults', { maintenance: { code: 'MAINTENANCE', untilMs: until } });
  const { dir, env } = home([lossy, maint], scale, 'spread');
  try {
    const wallSec = await submit(dir, env, orderFile(dir, rows), 20 * 60_000);
    const ledgers = [await lossy.ledger(), await maint.ledger()];
    const all = ledgers.flatMap((l) => l.orders.map((o) => String(o.trxid)));
    const users = ledgers.flatMap((l) => l.orders.map((o) => String(o.userId)));
    const boughtTwice = all.length - new Set(all).size + (users.length - new Set(users).size);
    const moved = all.filter((t) => /-acct\d$/.test(t)).length;
    const onMaintenance = ledgers[1]!.orders.filter((o) => Date.parse(String(o.createdAt)) < until).length;
    return {
      rows, final: users.length, boughtTwice, byAccount: { acct1: ledgers[0]!.orders.length, acct2: ledgers[1]!.orders.length },
      onMaintenanceAccount: onMaintenance, moved, wallSec: round(wallSec, 1),
    };
  } finally {
    await lossy.stop();
    await maint.stop();
    removeDir(dir);
  }
}

export async function measureAccounts(opts: { rows: number; scale: number; log: (s: string) => void }): Promise<AccountsReport> {
  const { rows, scale, log } = opts;
  const runs: AccountsRun[] = [];
  for (const [label, count, routing] of [['one account', 1, 'cheapest'], ['two accounts, spread', 2, 'spread'], ['two accounts, cheapest', 2, 'cheapest']] as const) {
    const n = count === 1 ? Math.floor(rows / 2) : rows;
    log(`accounts: ${label}, ${n} rows…`);
    const run = await throughput(label, count, routing, n, scale);
    log(`  ${run.ordersPerMin} orders/min = ${run.ofCeiling} × ${run.ceilingPerMin}/min; ${run.rateLimited} × 429; ${JSON.stringify(run.byAccount)}; ${run.wallSec} s`);
    runs.push(run);
  }
  log(`accounts: faults (one losing 30 % of answers, one in maintenance for 2 min), ${rows} rows…`);
  const f = await faults(rows, scale);
  log(`  ${f.final}/${f.rows} bought, ${f.boughtTwice} bought twice, ${f.onMaintenanceAccount} placed during maintenance, ${f.moved} moved; ${JSON.stringify(f.byAccount)}`);
  const one = runs[0]!.ordersPerMin;
  return { scale, runs, perAccountOfOne: { spread: round(runs[1]!.ordersPerMin / (2 * one), 3), cheapest: round(runs[2]!.ordersPerMin / (2 * one), 3) }, faults: f };
}

export function accountsTable(r: AccountsReport): string {
  const lines = [
    `Several accounts (each 10/s and 80/min, time ×${r.scale}):`,
    '| run | rows | orders/min (first to last order) | 429s | orders per account |',
    '|---|---|---|---|---|',
    ...r.runs.map((x) => `| ${x.label} | ${x.rows} | ${x.ordersPerMin} | ${x.rateLimited} | ${Object.values(x.byAccount).join(' + ')} |`),
    `each of two accounts used to its ceiling (two accounts' orders/min ÷ 2 × one account's, same rows per account): spread ${r.perAccountOfOne.spread}, cheapest ${r.perAccountOfOne.cheapest}`,
    `faults: ${r.faults.final}/${r.faults.rows} rows bought, ${r.faults.boughtTwice} bought twice across both ledgers, ${r.faults.onMaintenanceAccount} placed on the account during its maintenance, ${r.faults.moved} moved to the other account`,
  ];
  return lines.join('\n');
}
