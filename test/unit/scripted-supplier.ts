/**
 * A supplier that answers what each test scripts, for the sender's and the history check's
 * branches (test/unit/sender-paths.test.ts, verify-paths.test.ts). The supplier is a small HTTP
 * server on 127.0.0.1 (the one part that cannot be real); the runtime, its SQLite store in a temp
 * home, the client, the rate gate and the pauses are the real ones. The log is kept (as parsed
 * JSON lines) for the facts a log line is the only output of: which trxid, why a pause began.
 * Requests time out after 2 s unless a test says otherwise, so a request left hanging (by a test,
 * or by a broken build under mutation testing) fails a test quickly instead of stalling it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { Pauses } from '../../src/account/pauses.js';
import type { SenderDeps } from '../../src/dispatch/sender.js';
import type { NewRow } from '../../src/store/rows.js';

/** `date: false`: no Date header (Node's server adds one by default), so the client cannot measure the clocks. */
export type Answer = { status?: number; body: unknown; headers?: Record<string, string>; date?: false } | 'hang';
export type Script = (req: IncomingMessage, body: string) => Answer;

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface World {
  rt: Runtime;
  /** `METHOD /path?query` of every request the supplier received. */
  seen: string[];
  logs: LogLine[];
  set(s: Script): void;
  /**
   * Resolves when the supplier has received `n` requests in all, or when `unless` settles first
   * (a send that ended without its request: the test's assertions then say what went wrong, at once).
   */
  received(n: number, unless: Promise<unknown>): Promise<void>;
  /** Cuts every request left hanging (`'hang'`), as a connection reset would. */
  cut(): void;
  /** Runs SQL on the row (batch b1, idx). */
  sql(idx: number, set: string, ...args: unknown[]): void;
}

const open: { server: Server; rt: Runtime; home: string; hanging: (() => void)[] }[] = [];
afterEach(async () => {
  for (const w of open.splice(0)) {
    for (const end of w.hanging) end();
    await w.rt.close();
    w.server.closeAllConnections();
    await new Promise<void>((r) => w.server.close(() => r()));
    rmSync(w.home, { recursive: true, force: true });
  }
});

/** The catalog the supplier serves by default: PUBG Mobile 60 UC at 0.92 USD, and a key. */
export const CATALOG = {
  services: { success: true, services: [{ productName: 'PUBG Mobile', slug: 'pubg', gameName: 'PUBG Mobile', required: [{ field: 'userId', label: 'Player ID' }], status: 'active', serverIdOptions: null }] },
  products: (price = 0.92) => ({ success: true, products: [{ id: 'PUBG-60', slug: 'pubg', gameName: 'PUBG Global', serviceName: '60 UC', category: 'topup', price, status: 'active' }] }),
};

/** A runtime against a scripted supplier; batch `b1` (leased to this runtime) holds `rows`. */
export async function scriptedWorld(rows: NewRow[], env: Record<string, string> = {}): Promise<World> {
  let script: Script = () => ({ status: 500, body: 'not scripted' });
  const seen: string[] = [];
  const waiters: { n: number; done: () => void }[] = [];
  const hanging: (() => void)[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      for (const w of waiters.filter((x) => seen.length >= x.n)) w.done();
      const a = script(req, body);
      if (a === 'hang') {
        hanging.push(() => res.destroy());
        return;
      }
      if (a.date === false) res.sendDate = false;
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers });
      res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const home = mkdtempSync(join(tmpdir(), 'scripted-supplier-'));
  const logs: LogLine[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) });
  const rt = openRuntime(
    loadConfig({ TOPUP_HOME: home, TOPUP_API_URL: url, TOPUP_API_KEY: 'scripted-supplier-key-1', TOPUP_RATE_LIMITS: '1000/1s', TOPUP_RATE_MARGIN_MS: '0', TOPUP_REQUEST_TIMEOUT_MS: '2000', ...env }),
    log,
    url,
  );
  open.push({ server, rt, home, hanging });
  const now = Date.now();
  rt.batches.create({ id: 'b1', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b1/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, owner: rt.owner, leaseUntil: now + 86_400_000, now });
  rt.batches.open('b1', ['pid', 'userId']);
  rt.rows.insertAll('b1', rows, now);
  return {
    rt,
    seen,
    logs,
    set: (s) => void (script = s),
    cut: () => {
      for (const end of hanging.splice(0)) end();
    },
    received: (n, unless) =>
      seen.length >= n
        ? Promise.resolve()
        : Promise.race([new Promise<void>((done) => waiters.push({ n, done })), unless.then(() => undefined, () => undefined)]),
    sql: (idx, set, ...args) => void rt.db.prepare(`UPDATE rows SET ${set} WHERE batch_id = 'b1' AND idx = ?`).run(...args, idx),
  };
}

/** The sender's dependencies, recording what it tells the runner. */
export function senderDeps(rt: Runtime): SenderDeps & { events: string[]; pauses: Pauses } {
  const events: string[] = [];
  const pauses = new Pauses(rt.meta, 30_000);
  return {
    rt,
    pauses,
    pausesOf: () => pauses,
    events,
    onBalanceShort: (b, detail) => void events.push(`short:${b}:${detail}`),
    onPause: (kind, code, detail) => void events.push(`pause:${kind}:${code}:${detail}`),
  };
}

/** The log lines whose message matches `re`. */
export const linesOf = (w: World, re: RegExp): LogLine[] => w.logs.filter((l) => re.test(l.msg));
