/**
 * Shared machinery of the torture suite: a seeded PRNG, a sandbox child process, the real
 * daemon as a child process, batch generators, and the judge that compares the daemon's result
 * files with the sandbox's own ledger (the Jepsen way: every client operation is checked
 * against the server's record, never against what the client believes).
 */
import { registerIdentity } from '../src/kernel/identity.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, readdirSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { writeFileSync } from 'node:fs';
import { CLI, cliEnv, sandboxProcess, tempHome, TEST_KEY, type SandboxProcess, type TempHome } from '../test/e2e/harness.js';

export { sleep };

// ───────────────────────────── randomness ─────────────────────────────

import { prng } from '../test/e2e/prng.js';

export { prng };

// ───────────────────────────── figures ─────────────────────────────

export interface Figure {
  name: string;
  value: number | string;
  /** Human-readable target, e.g. "= 0", "≤ 40", "100 %". */
  target: string;
  ok: boolean;
  /** Informative figures have no target (ok is always true). */
  info?: boolean;
}

export const eq0 = (name: string, value: number): Figure => ({ name, value, target: '0', ok: value === 0 });
export const atMost = (name: string, value: number, max: number, unit = ''): Figure => ({ name, value, target: `≤ ${max}${unit}`, ok: value <= max });
export const atLeast = (name: string, value: number, min: number, unit = ''): Figure => ({ name, value, target: `≥ ${min}${unit}`, ok: value >= min });
export const info = (name: string, value: number | string): Figure => ({ name, value, target: '—', ok: true, info: true });

/** How the sandbox answers: the spec's exact types, or as real deployments do (`--answers`). */
export type AnswerStyle = 'spec' | 'real-world';

export interface ScenarioCtx {
  quick: boolean;
  seed: number;
  answers: AnswerStyle;
  rand: () => number;
  log: (msg: string) => void;
  /** Registers a clean-up (child processes, temp homes); run even when the scenario throws. */
  defer: (fn: () => unknown) => void;
}

export interface Scenario {
  name: string;
  title: string;
  run(ctx: ScenarioCtx): Promise<Figure[]>;
}

export interface ScenarioResult {
  name: string;
  title: string;
  seed: number;
  quick: boolean;
  answers: AnswerStyle;
  ok: boolean;
  seconds: number;
  figures: Figure[];
  error?: string;
  reproduce: string;
}

export async function runScenario(s: Scenario, opts: { quick: boolean; seed: number; answers?: AnswerStyle; log?: (m: string) => void }): Promise<ScenarioResult> {
  const answers = opts.answers ?? 'spec';
  const cleanups: (() => unknown)[] = [];
  const log = opts.log ?? ((m: string) => process.stderr.write(`[${s.name}] ${m}\n`));
  const started = Date.now();
  const ctx: ScenarioCtx = { quick: opts.quick, seed: opts.seed, answers, rand: prng(opts.seed), log, defer: (fn) => cleanups.push(fn) };
  let figures: Figure[] = [];
  let error: string | undefined;
  try {
    figures = await s.run(ctx);
  } catch (err) {
    error = (err as Error).stack ?? String(err);
  } finally {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch {
        /* clean-up is best effort */
      }
    }
  }
  const ok = error === undefined && figures.every((f) => f.ok);
  return {
    name: s.name,
    title: s.title,
    seed: opts.seed,
    quick: opts.quick,
    answers,
    ok,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    figures,
    ...(error ? { error } : {}),
    reproduce: `npm run torture -- --only ${s.name} --seed ${opts.seed}${opts.quick ? ' --quick' : ''}${answers === 'spec' ? '' : ` --answers ${answers}`}`,
  };
}

// ───────────────────────────── processes ─────────────────────────────

export interface World {
  home: TempHome;
  /** The sandbox (with `accounts`: the first account's). */
  sb: SandboxProcess;
  /** With `accounts`: one sandbox child per account, in the file's order (sbs[0] === sb). */
  sbs: SandboxProcess[];
  /** With `accounts`: the account names, in the file's order; otherwise []. */
  accounts: string[];
  stateFile: string;
  logFile: string;
  env(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

export interface WorldOptions {
  sandboxArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Point the daemon at this URL instead of the sandbox (a proxy in front of it). */
  apiUrl?: string;
  /** Rate windows, the same on both sides (default FAST_LIMITS). */
  limits?: string;
  /**
   * Several supplier accounts: one sandbox child per name (each its own state, ledger and
   * faults; the same catalog), listed in the home's accounts.toml in this order. The daemon then
   * gets no TOPUP_API_URL/TOPUP_API_KEY (the file is the one source of truth, docs/accounts.md).
   */
  accounts?: { names: string[]; routing: 'cheapest' | 'priority' | 'spread'; maxQueueDelay?: string };
}

/** Fast defaults: scaled rate limits on both sides, short polls and timeouts. */
export const FAST_LIMITS = '400/1s,2000/1m';

export async function world(ctx: ScenarioCtx, opts: WorldOptions = {}): Promise<World> {
  const home = tempHome('topup-torture-');
  // TORTURE_KEEP=1 keeps the home (store, result files, daemon log) for a look after the run.
  if (process.env.TORTURE_KEEP === '1') ctx.log(`home kept: ${home.dir}`);
  else ctx.defer(() => home.remove());
  mkdirSync(join(home.dir, 'logs'), { recursive: true, mode: 0o700 });
  const stateFile = join(home.dir, 'sandbox-state.db');
  const names = opts.accounts?.names ?? [];
  const sbs: SandboxProcess[] = [];
  for (let i = 0; i < Math.max(1, names.length); i++) {
    // Each account's sandbox draws from its own seed, so their faults and fates differ.
    const sb = await sandboxProcess([
      '--state', i === 0 ? stateFile : join(home.dir, `sandbox-state-${names[i]}.db`), '--balance', '100000', '--seed', String(ctx.seed + i),
      '--rate-limits', opts.limits ?? FAST_LIMITS, '--answers', ctx.answers, ...(opts.sandboxArgs ?? []),
    ]);
    ctx.defer(() => sb.stop());
    sbs.push(sb);
  }
  const sb = sbs[0]!;
  if (opts.accounts) {
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    const tables = names.map((name, i) => {
      writeFileSync(join(home.dir, 'keys', `${name}.key`), TEST_KEY, { mode: 0o600 });
      return `[[account]]\nname = "${name}"\nurl = "${sbs[i]!.url}"\nkey_file = "keys/${name}.key"\n`;
    });
    const head = `routing = "${opts.accounts.routing}"\n${opts.accounts.maxQueueDelay ? `max_queue_delay = "${opts.accounts.maxQueueDelay}"\n` : ''}`;
    writeFileSync(join(home.dir, 'accounts.toml'), `${head}\n${tables.join('\n')}`, { mode: 0o644 });
  }
  const w: World = {
    home,
    sb,
    sbs,
    accounts: names,
    stateFile,
    logFile: join(home.dir, 'logs', 'daemon.log'),
    env: (extra = {}) => cliEnv(home, opts.accounts ? null : { url: opts.apiUrl ?? sb.url }, {
      // Beside accounts.toml the key must be unset or empty (cliEnv sets the test key).
      ...(opts.accounts ? { TOPUP_API_KEY: '' } : {}),
      TOPUP_RATE_LIMITS: opts.limits ?? FAST_LIMITS,
      TOPUP_RATE_MARGIN_MS: '20',
      TOPUP_POLL_INTERVAL_MS: '200',
      TOPUP_REQUEST_TIMEOUT_MS: '1500',
      TOPUP_SETTLE_MS: '30',
      TOPUP_LOG_LEVEL: 'info',
      ...opts.env,
      ...extra,
    }),
  };
  return w;
}

export interface Daemon {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): Promise<void>;
}

/** Starts `topup daemon` with its output appended to the world's log file. */
export function startDaemon(w: World, ctx: ScenarioCtx, opts: { once?: boolean; env?: NodeJS.ProcessEnv } = {}): Daemon {
  const child = spawn(process.execPath, [CLI, 'daemon', ...(opts.once ? ['--once'] : [])], {
    env: w.env(opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = createWriteStream(w.logFile, { flags: 'a', mode: 0o600 });
  child.stdout!.pipe(out, { end: false });
  child.stderr!.pipe(out, { end: false });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      // Let the pipes drain before the stream closes.
      setTimeout(() => out.end(), 50);
      resolve({ code, signal });
    });
  });
  const d: Daemon = {
    child,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  ctx.defer(() => d.kill());
  return d;
}

/** Runs `daemon --once` to its end (or kills it after `timeoutMs` and throws). */
export async function runOnce(w: World, ctx: ScenarioCtx, timeoutMs: number, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const d = startDaemon(w, ctx, { once: true, env });
  const timer = sleep(timeoutMs).then(() => 'timeout' as const);
  const r = await Promise.race([d.exited, timer]);
  if (r === 'timeout') {
    await d.kill();
    throw new Error(`topup daemon --once did not finish within ${timeoutMs} ms; log tail:\n${tail(w.logFile, 30)}`);
  }
  return r;
}

export function tail(file: string, lines: number): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

// ───────────────────────────── batches ─────────────────────────────

export interface BatchMix {
  rows: number;
  /** Share of rows that fail at the supplier after placement (refunded). */
  failing?: number;
  /** Share of game-key / gift-card rows (codes). */
  keys?: number;
  /** Share of rows that fail validation (never sent). */
  invalid?: number;
  /** Packs for the top-up rows (default a mix). */
  topupPids?: string[];
}

/** A CSV with unique player ids per row; trxids are left to the daemon (derived from the content). */
export function makeBatch(rand: () => number, mix: BatchMix): string {
  const lines = ['pid,userId,zoneId,quantity,note'];
  const pids = mix.topupPids ?? ['PUBG-60', 'PUBG-325', 'PUBGCN-60', 'PRIME-1M'];
  for (let i = 0; i < mix.rows; i++) {
    const r = rand();
    const note = `row-${i}`;
    const uid = String(5_100_000_000 + i * 7 + Math.floor(rand() * 5));
    let a = 0;
    if (r < (a += mix.invalid ?? 0)) lines.push(`FFMENA-100,12,,,${note}`);
    else if (r < (a += mix.keys ?? 0)) {
      const pid = rand() < 0.7 ? 'KEY-PUBG-60' : 'STEAM-5';
      lines.push(`${pid},,,${1 + Math.floor(rand() * 3)},${note}`);
    } else if (r < (a += mix.failing ?? 0)) lines.push(`PUBG-60,99999,,,${note}`);
    else if (rand() < 0.15) lines.push(`ML-86,${uid.slice(0, 9)},${1000 + (i % 9000)},,${note}`);
    else lines.push(`${pids[Math.floor(rand() * pids.length)]},${uid},,,${note}`);
  }
  return lines.join('\n') + '\n';
}

// ───────────────────────────── judging ─────────────────────────────

export interface LedgerOrder {
  orderId: string;
  /** The id the real-world answer style shows (digits, may exceed 2^53); the result may carry either. */
  publicId?: string;
  /** 'manual': placed outside the API (real-world style), so no result row reports it. */
  source?: 'api' | 'manual';
  trxid: string;
  status: 'processing' | 'completed' | 'cancelled';
  amountUsd: number;
  refunded?: boolean;
  codes?: string[];
  createdAt: string;
  /**
   * The account whose ledger holds it, when several ledgers are judged together (mergeLedgers):
   * each sandbox numbers its orders from the same start, so an order is its account + orderId.
   */
  ledger?: string;
}
export interface Ledger {
  orders: LedgerOrder[];
  entries: { time: number; kind: 'charge' | 'refund' | 'topup'; orderId: string | null; trxid: string | null; amountUsd: number; ledger?: string }[];
  rateLimited: number;
}

/**
 * Several accounts' ledgers as one, each order and entry tagged with its account. trxids are
 * compared across all of them: the same trxid charged on two accounts is a double charge.
 */
export function mergeLedgers(named: { name: string; ledger: Ledger }[]): Ledger {
  return {
    orders: named.flatMap(({ name, ledger }) => ledger.orders.map((o) => ({ ...o, ledger: name }))),
    entries: named.flatMap(({ name, ledger }) => ledger.entries.map((e) => ({ ...e, ledger: name }))),
    rateLimited: named.reduce((n, x) => n + x.ledger.rateLimited, 0),
  };
}

/** An order's identity: its orderId, qualified by its account when ledgers were merged. */
const orderKey = (ledger: string | undefined, orderId: string): string => (ledger === undefined ? orderId : `${ledger}\u0000${orderId}`);

export type ResultRow = Record<string, string>;

/** Result files are spreadsheet-safe: a leading `'` guards formula triggers; undo it for comparing. */
export const unguard = (v: string | undefined): string => (v ?? '').replace(/^'(?=[=+\-@\t\r])/, '');

export function readResultFile(path: string): ResultRow[] {
  return parse(readFileSync(path, 'utf8'), { columns: true, skip_empty_lines: false, relax_column_count: true, bom: true }) as ResultRow[];
}

export function resultFiles(home: TempHome): string[] {
  return existsSync(home.outbox) ? readdirSync(home.outbox).filter((f) => f.endsWith('.result.csv')).map((f) => join(home.outbox, f)) : [];
}

export interface Verdict {
  inputRows: number;
  resultRows: number;
  /** Input rows with no final status in a result file (or no result file at all). */
  rowsWithoutResult: number;
  /** trxids (= purchases) charged more than once and not refunded each extra time. */
  doubleCharges: number;
  /** Ledger orders that no result row reports (by orderId, under the same trxid). */
  chargesWithoutResult: number;
  /** Result rows whose orderId / status / amount disagree with the ledger's order for that trxid. */
  mismatches: number;
  mismatchExamples: string[];
  /** Result rows reported as not charged (rejected/invalid/skipped) whose trxid has a charge in the ledger. */
  wronglyNotCharged: number;
  /** Result files whose summary's spentUsd differs from the ledger's net charge for their placed rows. */
  spendMismatches: number;
  /** Rows in `review` (undecided, listed in the summary). */
  review: number;
  /** Review rows whose purchase the ledger shows completed (the answers could have settled them). */
  reviewButCompleted: number;
  /** Completed key/card rows whose codes cell lacks a code the ledger delivered for its order. */
  keyRowsMissingCodes: number;
  /** Placed rows (completed/cancelled) whose orderId matches the ledger's order, as a share. */
  matchedShare: number;
  statuses: Record<string, number>;
}

const FINAL = new Set(['completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review']);

/**
 * Compares result files with the ledger. Each input is a result file and the number of data
 * rows of the CSV that was dropped (null path: no result file was written). Every ledger order
 * must be reported by some result row.
 */
export function judge(inputs: { path: string | null; inputRows: number }[] | string | null, inputRows = 0, ledger?: Ledger): Verdict {
  if (!Array.isArray(inputs)) return judgeAll([{ path: inputs, inputRows }], ledger!);
  return judgeAll(inputs, ledger!);
}

function judgeAll(inputs: { path: string | null; inputRows: number }[], ledger: Ledger): Verdict {
  const byTrx = new Map<string, LedgerOrder[]>();
  for (const o of ledger.orders) if (o.source !== 'manual') byTrx.set(o.trxid, [...(byTrx.get(o.trxid) ?? []), o]);
  const charges = new Map<string, number>();
  const refunds = new Map<string, number>();
  // Money per trxid and refunds per order, from the ledger's entries: a cancel is NOT always
  // refunded (real-world answers), so neither a status nor a flag stands in for the money.
  const netUsd = new Map<string, number>();
  const refundedOrders = new Set<string>();
  for (const e of ledger.entries) {
    if (e.kind === 'refund' && e.orderId) refundedOrders.add(orderKey(e.ledger, e.orderId));
    if (!e.trxid) continue;
    if (e.kind === 'charge') charges.set(e.trxid, (charges.get(e.trxid) ?? 0) + 1);
    if (e.kind === 'refund') refunds.set(e.trxid, (refunds.get(e.trxid) ?? 0) + 1);
    if (e.kind === 'charge' || e.kind === 'refund') netUsd.set(e.trxid, (netUsd.get(e.trxid) ?? 0) - e.amountUsd);
  }
  // Two charges for one purchase that were not both refunded.
  let doubleCharges = 0;
  for (const [trx, n] of charges) if (n > 1 && (refunds.get(trx) ?? 0) < n) doubleCharges++;

  const statuses: Record<string, number> = {};
  let mismatches = 0;
  let wronglyNotCharged = 0;
  let spendMismatches = 0;
  let review = 0;
  let reviewButCompleted = 0;
  let keyRowsMissingCodes = 0;
  let placed = 0;
  let matched = 0;
  let rowsWithoutResult = 0;
  let resultRows = 0;
  let totalInput = 0;
  const reported = new Set<string>();
  const reviewTrx = new Set<string>();
  const examples: string[] = [];
  for (const input of inputs) {
    totalInput += input.inputRows;
    const rows = input.path && existsSync(input.path) ? readResultFile(input.path) : [];
    resultRows += rows.length;
    let finals = 0;
    let ledgerSpend = 0;
    for (const r of rows) {
      const status = r.status ?? '';
      if (FINAL.has(status)) finals++;
      statuses[status] = (statuses[status] ?? 0) + 1;
      // The trxid the supplier has it under: `sentTrxid` where the result has it (several accounts:
      // a moved row's `trxid` cell keeps its own, outbox/results.ts), else `trxid`.
      const trxid = unguard(r.sentTrxid ?? '') || unguard(r.trxid);
      const orders = byTrx.get(trxid) ?? [];
      const orderId = unguard(r.orderId);
      // With merged ledgers the result's `account` must name the ledger that holds the order.
      const account = unguard(r.account);
      const o = orderId ? orders.find((x) => (x.orderId === orderId || x.publicId === orderId) && (x.ledger === undefined || x.ledger === account)) : undefined;
      if (orderId) reported.add(o ? orderKey(o.ledger, o.orderId) : orderId);
      if (status === 'review') {
        review++;
        reviewTrx.add(trxid);
        if (orders.some((x) => x.status === 'completed')) {
          reviewButCompleted++;
          if (examples.length < 8) examples.push(`trxid ${trxid}: in review (${r.error}) but the ledger has it completed`);
        }
      }
      if (status === 'completed' && o?.codes && o.codes.length > 0) {
        const cell = new Set(unguard(r.codes).split(' ').filter(Boolean).map((c) => c.replace(/\/PIN:.*$/, '')));
        if (o.codes.some((c) => !cell.has(c))) {
          keyRowsMissingCodes++;
          if (examples.length < 8) examples.push(`trxid ${trxid}: codes "${r.codes}" but the ledger delivered ${o.codes.join(' ')}`);
        }
      }
      if (status === 'completed' || status === 'cancelled') {
        placed++;
        ledgerSpend += netUsd.get(trxid) ?? 0;
        const amountOk = o !== undefined && Math.abs(Number(r.amountUsd) - o.amountUsd) < 0.005;
        const statusOk = o !== undefined && o.status === status;
        // The result may say "refunded" only when the ledger holds the refund, and must say it then.
        const refundOk = o === undefined || status !== 'cancelled' || String(refundedOrders.has(orderKey(o.ledger, o.orderId))) === r.refunded;
        if (o && amountOk && statusOk && refundOk && orders.length === 1) matched++;
        else {
          mismatches++;
          if (examples.length < 8) examples.push(`trxid ${trxid}: result ${status} ${orderId} ${r.amountUsd} refunded=${r.refunded} vs ledger ${orders.map((x) => `${x.orderId}/${x.publicId ?? '-'} ${x.status} ${x.amountUsd} refunded=${refundedOrders.has(orderKey(x.ledger, x.orderId))}`).join(', ') || 'no order'}`);
        }
      } else if (status === 'invalid' || status === 'rejected' || status === 'skipped') {
        if (trxid && orders.some((x) => x.status !== 'cancelled' || !refundedOrders.has(orderKey(x.ledger, x.orderId)))) {
          wronglyNotCharged++;
          if (examples.length < 8) examples.push(`trxid ${trxid}: reported ${status} (${r.error}) but the ledger has ${orders.map((x) => `${x.orderId} ${x.status}`).join(', ')}`);
        }
      }
    }
    rowsWithoutResult += Math.max(0, input.inputRows - finals);
    const summary = input.path ? readSummaryOf(input.path) : undefined;
    if (summary && Math.abs(summary.spentUsd - ledgerSpend) >= 0.005) {
      spendMismatches++;
      if (examples.length < 8) examples.push(`${input.path}: summary spent ${summary.spentUsd} USD, the ledger charged ${Math.round(ledgerSpend * 100) / 100} USD net for its placed rows`);
    }
  }
  let chargesWithoutResult = 0;
  for (const o of ledger.orders) {
    if (o.source === 'manual') continue; // placed outside the API: no row of ours can report it
    if (reported.has(orderKey(o.ledger, o.orderId)) || reviewTrx.has(o.trxid)) continue; // review rows say "may be charged: check"
    chargesWithoutResult++;
    if (examples.length < 8) examples.push(`ledger order ${o.orderId} (trxid ${o.trxid}, ${o.status}) is in no result row`);
  }
  return {
    inputRows: totalInput,
    resultRows,
    rowsWithoutResult,
    doubleCharges,
    chargesWithoutResult,
    mismatches,
    mismatchExamples: examples,
    wronglyNotCharged,
    spendMismatches,
    review,
    reviewButCompleted,
    keyRowsMissingCodes,
    matchedShare: placed === 0 ? 1 : matched / placed,
    statuses,
  };
}

/** `<name>.summary.json` beside `<name>.result.csv`, when it exists. */
function readSummaryOf(resultPath: string): { spentUsd: number } | undefined {
  const path = resultPath.replace(/\.result\.csv$/, '.summary.json');
  if (path === resultPath || !existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as { spentUsd: number };
}

export async function ledgerOf(sb: SandboxProcess): Promise<Ledger> {
  return (await sb.admin('GET', 'ledger')) as Ledger;
}

export interface CallEntry { t: number; method: string; route: string; status: number; admitted: boolean }
export async function callsOf(sb: SandboxProcess): Promise<CallEntry[]> {
  return ((await sb.admin('GET', 'calls')) as { calls: CallEntry[] }).calls;
}

/** The daemon's own store, read-only: attempts per row and states. */
export function storeRows(
  w: World,
): { state: string; trxid: string | null; attempts: number; error: string | null; request_json: string | null; last_sent_at: number | null }[] {
  const db = new Database(join(w.home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  registerIdentity(db); // the home's indexes and triggers call trxid_fold()
  try {
    return db.prepare('SELECT state, trxid, attempts, error, request_json, last_sent_at FROM rows ORDER BY batch_id, idx').all() as never;
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check` on the daemon's database, opened as a restart would open it. */
export function integrityCheck(dbPath: string): string {
  if (!existsSync(dbPath)) return 'ok';
  const db = new Database(dbPath, { fileMustExist: true });
  registerIdentity(db); // the home's indexes and triggers call trxid_fold()
  try {
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

export async function waitUntil(what: string, fn: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function rmDb(w: World): void {
  for (const f of ['topup.db', 'topup.db-wal', 'topup.db-shm']) rmSync(join(w.home.jobs, f), { force: true });
}

export function dataRows(csvText: string): number {
  return csvText.trimEnd().split('\n').length - 1;
}

/** The verdict's standard figures. */
export function ledgerFigures(v: Verdict): Figure[] {
  return [
    eq0('double charges', v.doubleCharges),
    eq0('rows without a final result', v.rowsWithoutResult),
    eq0('charges with no result row', v.chargesWithoutResult),
    eq0('result rows disagreeing with the ledger', v.mismatches),
    eq0('summaries whose spend differs from the ledger', v.spendMismatches),
    eq0('completed key/card rows missing a delivered code', v.keyRowsMissingCodes),
    eq0('review rows the ledger shows completed', v.reviewButCompleted),
  ];
}

/**
 * After a SIGKILL the dead process's batch lease runs for up to LEASE_MS (15 s) before another
 * process may adopt it. A restart loop of 50+ kills cannot wait that out each time, so the
 * harness fast-forwards the lease clock of batches held by a process that is certainly dead
 * (we killed it and saw it exit). This changes no row and no decision of the daemon.
 */
export function expireDeadLeases(w: World, deadPid: number | undefined): void {
  const path = join(w.home.jobs, 'topup.db');
  if (deadPid === undefined || !existsSync(path)) return;
  const db = new Database(path, { fileMustExist: true });
  registerIdentity(db); // the home's indexes and triggers call trxid_fold()
  try {
    db.pragma('busy_timeout = 5000');
    const hasTable = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'batches'`).get();
    if (hasTable) db.prepare(`UPDATE batches SET lease_until = 0 WHERE owner LIKE ?`).run(`%:${deadPid}:%`);
  } finally {
    db.close();
  }
}
