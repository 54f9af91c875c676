/**
 * End-to-end harness shared by the daemon, command, security and torture tests:
 *  - a temp home with inbox/ jobs/ outbox/;
 *  - the sandbox, in this process (startSandbox) or as a real `topup sandbox` child process
 *    (when the daemon under test must be killed without taking the sandbox with it);
 *  - the real CLI (dist/cli.js, built by test/global-setup.ts) as a child process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, mkdirSync, rmSync, writeFileSync, readFileSync, existsSync, readdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { detectDelimiter } from '../../src/intake/formats/csv.js';
import { openDb } from '../../src/store/db.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(ROOT, 'dist', 'cli.js');
/** Test keys are canaries: any test may search outputs for them. */
export const TEST_KEY = 'canary-KEY-7f3e9a1c5b';

export interface TempHome {
  dir: string;
  inbox: string;
  jobs: string;
  outbox: string;
  drop(name: string, content: string): string;
  remove(): void;
}

/** Where test/global-setup.ts leaves the migrated empty store every temp home starts from. */
export const STORE_TEMPLATE_ENV = 'TOPUP_TEST_STORE_TEMPLATE';

/**
 * The only meta a store has before a daemon or a command has run on it: the trxid fold's build
 * (store/db.ts). Everything a home identifies its store by (store.id, the generation, the copy and
 * restore markers of store/backup.ts) is written later, by the process that runs on the home, so
 * copies of the template do not look like one store to each other; makeStoreTemplate refuses a
 * template with anything more, so a later migration that writes an identity cannot slip in here.
 */
const TEMPLATE_META = ['trxid_fold_build'];

/**
 * A migrated, empty store in `dir` (topup.db, 0600, checkpointed, no -wal or -shm beside it), made
 * by the same openDb the daemon runs. Opening a new file runs every migration: about 0.07 s of a
 * quiet core per home and 0.2 s of a busy one, paid by the first process on each of the suite's
 * hundreds of temp homes; a copy of this file costs a few milliseconds and is the same bytes.
 */
export function makeStoreTemplate(dir: string): string {
  const path = join(dir, 'topup.db');
  const db = openDb(path);
  try {
    const keys = (db.prepare('SELECT key FROM meta ORDER BY key').all() as { key: string }[]).map((r) => r.key);
    if (keys.join() !== TEMPLATE_META.join()) throw new Error(`a new store holds meta ${JSON.stringify(keys)}, not only ${JSON.stringify(TEMPLATE_META)}: copies of it could share an identity; give temp homes a fresh store instead`);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  for (const s of ['-wal', '-shm']) if (existsSync(path + s)) throw new Error(`${path}${s} left after the template's close`);
  chmodSync(path, 0o600);
  return path;
}

/** This process's own template, when no global setup made one (the torture runner, outside vitest). */
let ownTemplate: string | undefined;
function storeTemplate(): string {
  const given = process.env[STORE_TEMPLATE_ENV];
  if (given && existsSync(given)) return given;
  if (ownTemplate === undefined || !existsSync(ownTemplate)) {
    const dir = mkdtempSync(join(tmpdir(), 'topup-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    ownTemplate = makeStoreTemplate(dir);
  }
  return ownTemplate;
}

/**
 * A home with inbox/ jobs/ outbox/ and, unless `store: false`, jobs/topup.db copied from the
 * migrated template (see makeStoreTemplate): what the first process on a new home would have made.
 * `store: false` for a test whose subject is a home before its store exists (its creation, its
 * mode, a migration from an older schema written by the test).
 */
export function tempHome(prefix = 'topup-', opts: { store?: boolean } = {}): TempHome {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home: TempHome = {
    dir,
    inbox: join(dir, 'inbox'),
    jobs: join(dir, 'jobs'),
    outbox: join(dir, 'outbox'),
    drop(name, content) {
      // Written beside the inbox, then renamed in: the daemon never sees half a file.
      const tmp = join(dir, `.${name}.writing`);
      writeFileSync(tmp, content);
      const dest = join(home.inbox, name);
      renameSync(tmp, dest);
      return dest;
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  for (const d of [home.inbox, home.jobs, home.outbox]) mkdirSync(d, { recursive: true });
  if (opts.store !== false) {
    const db = join(home.jobs, 'topup.db');
    copyFileSync(storeTemplate(), db);
    chmodSync(db, 0o600); // as openDb creates it: the store holds delivered codes
  }
  opened().homes.push(home);
  return home;
}

/**
 * Everything the helpers below started, so one call releases it all: daemons killed, sandboxes
 * closed, homes removed. Test files register it with `releaseAfterEach()` (test/e2e/release.ts);
 * a failing test then cannot leave a daemon running.
 */
interface Opened {
  homes: TempHome[];
  sandboxes: { close(): Promise<void> }[];
  daemons: DaemonProcess[];
}
const everyTest: Opened = { homes: [], sandboxes: [], daemons: [] };
/** A test run by withOwnRelease: what it starts is its own, released when it ends (see there). */
const ownScope = new AsyncLocalStorage<Opened>();
const opened = (): Opened => ownScope.getStore() ?? everyTest;

async function release(o: Opened): Promise<void> {
  for (const d of o.daemons.splice(0)) await d.kill();
  for (const sb of o.sandboxes.splice(0)) await sb.close();
  for (const h of o.homes.splice(0)) h.remove();
}

export async function releaseAll(): Promise<void> {
  await release(everyTest);
}

/**
 * Runs `fn` with a release of its own: every daemon, sandbox and home the helpers start inside it
 * (in its async context) is released when it ends, also when it fails, and releaseAll leaves them
 * alone. For tests that run concurrently in one file (describe.concurrent): an afterEach that
 * released everything would kill the daemons of the tests still running beside the one that ended.
 */
export async function withOwnRelease<T>(fn: () => Promise<T>): Promise<T> {
  const mine: Opened = { homes: [], sandboxes: [], daemons: [] };
  try {
    return await ownScope.run(mine, fn);
  } finally {
    await release(mine);
  }
}

/** Sandbox in this process, test-friendly defaults: no random failures, instant fulfilment. */
export async function inProcessSandbox(opts: Partial<SandboxOptions> = {}): Promise<RunningSandbox> {
  const sb = await startSandbox({
    apiKey: TEST_KEY,
    balanceUsd: 1000,
    ...opts,
    fulfilment: { processingShare: 0, failShare: 0, ...opts.fulfilment },
  });
  opened().sandboxes.push(sb);
  return sb;
}

export interface SandboxProcess {
  url: string;
  adminToken: string;
  child: ChildProcess;
  admin(method: string, op: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

/** `topup sandbox` as its own process, with its state in a file. */
export async function sandboxProcess(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<SandboxProcess> {
  const adminToken = 'admin-token-for-tests';
  const child = spawn(process.execPath, [CLI, 'sandbox', '--port', '0', '--api-key', TEST_KEY, '--admin-token', adminToken, ...args], {
    env: { ...process.env, ...env, TOPUP_API_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start: ${out}`)), 15_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited ${code}: ${out}`)));
  });
  child.stderr!.resume();
  return {
    url,
    adminToken,
    child,
    async admin(method, op, body) {
      const res = await fetch(`${url}/__sandbox/${op}`, {
        method,
        headers: { 'x-sandbox-admin': adminToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`admin ${op}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function cliEnv(home: TempHome, api: { url: string } | null, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TOPUP_HOME: home.dir,
    TOPUP_API_KEY: TEST_KEY,
    ...(api ? { TOPUP_API_URL: api.url } : {}),
    TOPUP_POLL_INTERVAL_MS: '200',
    TOPUP_SETTLE_MS: '50',
    TOPUP_LOG_LEVEL: 'info',
    TOPUP_BALANCE_REPORT_CRON: 'off',
    TOPUP_HISTORY_EXPORT_CRON: 'off',
    TOPUP_RECONCILE_CRON: 'off',
    TOPUP_LOW_BALANCE_CRON: 'off',
    // Tests run daemons side by side: none takes the console's default port unless a test asks.
    TOPUP_CONSOLE: 'off',
    ...extra,
  };
}

/** Runs the real CLI to its end. */
export function runCli(args: string[], env: NodeJS.ProcessEnv, opts: { timeoutMs?: number; input?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(opts.input ?? '');
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`topup ${args.join(' ')} timed out\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr.slice(-2000)}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Starts the real CLI and returns the child, for tests that signal or kill it. */
export function startCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }) as ChildProcess & { output: () => string };
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  child.output = () => out;
  return child;
}

export async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export type ResultRow = Record<string, string>;

/** A result file's text as rows by column name, in whichever dialect it was written (outbox/dialect.ts). */
export function parseResult(text: string): ResultRow[] {
  // A result keeps Excel's `sep=` first line when its input had one (outbox/dialect.ts): read as
  // Excel does, the line names the delimiter and is not the header.
  const bom = text.replace(/^\uFEFF/, '');
  const sep = /^sep=(.)\r?\n/.exec(bom);
  const body = sep ? bom.slice(sep[0].length) : bom;
  const delimiter = sep ? sep[1]! : detectDelimiter(body).delimiter;
  return parse(body, { columns: true, delimiter, skip_empty_lines: false, relax_column_count: true }) as ResultRow[];
}

export function readResult(home: TempHome, name: string): ResultRow[] {
  return parseResult(readFileSync(join(home.outbox, `${name}.result.csv`), 'utf8'));
}

export function readSummary(home: TempHome, name: string): any {
  return JSON.parse(readFileSync(join(home.outbox, `${name}.summary.json`), 'utf8'));
}

export function outboxHas(home: TempHome, file: string): boolean {
  return existsSync(join(home.outbox, file));
}

export function listOutbox(home: TempHome): string[] {
  return existsSync(home.outbox) ? readdirSync(home.outbox) : [];
}

export function csv(rows: (string | number)[][]): string {
  return rows.map((r) => r.map(String).join(',')).join('\n') + '\n';
}

export interface DaemonProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  kill(): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A long-running `topup daemon` (not --once). */
export function startDaemon(env: NodeJS.ProcessEnv, args: string[] = []): DaemonProcess {
  const child = startCli(['daemon', ...args], env);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const daemon: DaemonProcess = {
    child,
    output: child.output,
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
  };
  opened().daemons.push(daemon);
  return daemon;
}

/** Waits until outbox/<name>.result.csv exists. */
/** The result CSV and the summary beside it (written just after it: waiting for the CSV alone let a test read no summary). */
export function waitForResult(home: TempHome, name: string, timeoutMs = 60_000): Promise<true> {
  return waitFor(
    `outbox/${name}.result.csv and .summary.json`,
    () => existsSync(join(home.outbox, `${name}.result.csv`)) && existsSync(join(home.outbox, `${name}.summary.json`)),
    timeoutMs,
    100,
  );
}

/** A file as a European spreadsheet writes it: `;` between cells, CR LF after each row. */
export const semi = (rows: string[][]): string => `${rows.map((r) => r.join(';')).join('\r\n')}\r\n`;
