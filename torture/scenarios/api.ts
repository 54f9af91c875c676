/**
 * 12. The order API as a shop uses it (issue 23's "Done when"): a shop-like client places 1,000
 * orders (quick: 300) through POST /api/v1/orders of the real daemon (dist/cli.js, console on
 * 127.0.0.1 with a token) against the sandbox child process, while
 *
 *  - most orders go by node fetch, about a tenth by `curl` (a child process) and a tenth by the
 *    Python example itself (examples/shop/shop.py's place(), imported by python3 -c);
 *  - about 10 % are resent with the same body as a shop does on doubt (some twice; must be 200 and
 *    the same order), a few first requests are cut after a few ms (the answer never seen: the
 *    resend is 202 or 200), a few are sent again with another body or the trxid in another letter
 *    case (must not be a new order);
 *  - the webhook receiver (in this process) refuses connections, then answers 500, for a stretch;
 *  - the daemon is SIGKILLed three times at seeded instants (one before, one during, one after the
 *    outage) and restarted; requests meeting a dead daemon fail at the client and are resent after
 *    the restart, as a shop would.
 *
 * Rate windows are compressed as the quick rate scenario does: the spec's counts over windows a
 * quarter as long (40/250ms, 200/15s) on both sides. The webhook retry schedule (5 s, 15 s, 1 min,
 * …) cannot be compressed in the real daemon (its clock is the system's), so the outage is a real
 * 30 s: long enough that events pile up and each is retried two or three times.
 *
 * Judged against the sandbox's ledger and the daemon's own store (order_events): no trxid bought
 * twice (any letter case); every order the client got a 202/200 for ends completed/cancelled as
 * the ledger has it (rejected only with no ledger order); nothing else bought; every resend answered
 * as the same order; every event of order_events received with a valid signature, de-duplicated by
 * Topup-Event-Id, per order in the store's order; the OpenAPI document valid (OpenAPI 3.1 schema)
 * and every answer the client got conforming to it.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as netServer, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT } from '../../test/e2e/harness.js';
import { verify } from '../../src/webhooks/signer.js';
import { documentErrors, nonConformance } from '../conformance.js';
import {
  atLeast, eq0, expireDeadLeases, info, integrityCheck, ledgerOf, sleep, startDaemon, waitUntil, world,
  type Daemon, type Figure, type Scenario, type ScenarioCtx,
} from '../lib.js';

const TOKEN = 'torture-order-api-token-0123456789abcdef';
const SECRET = 'torture-webhook-secret-0123456789abcdef';
const SHOP_DIR = join(ROOT, 'examples', 'shop');
/** Row states of an order still under way (docs/order-api.md's status table). */
const LIVE = ['pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen'];

type Transport = 'fetch' | 'curl' | 'python';
interface Answer { status: number | null; type: string | null; body: string; via: Transport; at: number }
type Json = Record<string, any>;

interface Planned {
  i: number;
  trxid: string;
  via: Transport;
  body: Json;
  /** Same-body resends after the first answer: the wait before each (ms; 0 or 1 or 2 of them). */
  resends: number[];
  /** Another body under the same trxid afterwards. */
  conflict: boolean;
  /** The trxid in upper case, the rest the same, afterwards. */
  otherCase: boolean;
  /** The first fetch is cut after this many ms (its answer never read), or null. */
  cutAfterMs: number | null;
}

interface Received { id: string; type: string; trxid: string; status: string; raw: string; header: string; atSec: number }

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = netServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The shop's webhook receiver: verifies every post; can refuse connections or answer 500 for a while. */
class Receiver {
  mode: 'up' | '500' | 'down' = 'up';
  port = 0;
  readonly delivered: Received[] = [];
  posts = 0;
  refused500 = 0;
  badSignatures: string[] = [];
  #server: Server | null = null;
  readonly #sockets = new Set<Socket>();

  async listen(port = 0): Promise<void> {
    const server = createServer((req, res) => void this.#handle(req, res));
    server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Connections refused from now on (and those open are cut). */
  async down(): Promise<void> {
    this.mode = 'down';
    const s = this.#server;
    this.#server = null;
    for (const sock of this.#sockets) sock.destroy();
    if (s) await new Promise((r) => s.close(r));
  }

  async up(mode: 'up' | '500'): Promise<void> {
    if (!this.#server) await this.listen(this.port);
    this.mode = mode;
  }

  async close(): Promise<void> {
    await this.down();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    this.posts++;
    const header = String(req.headers['topup-signature'] ?? '');
    const atSec = Math.floor(Date.now() / 1000);
    const v = verify(header, raw, SECRET, 300, atSec);
    let e: Json = {};
    try {
      e = JSON.parse(raw) as Json;
    } catch {
      /* counted below as a bad post */
    }
    if (!v.ok || req.headers['topup-event-id'] !== e.id) {
      this.badSignatures.push(`${String(e.id)}: ${v.ok ? 'Topup-Event-Id differs from the body' : v.reason}`);
      res.writeHead(400).end();
      return;
    }
    if (this.mode === '500') {
      this.refused500++;
      res.writeHead(500).end('down for maintenance');
      return;
    }
    this.delivered.push({ id: String(e.id), type: String(e.type), trxid: String(e.data?.trxid), status: String(e.data?.status), raw, header, atSec });
    res.writeHead(200).end();
  }
}

function planOrders(ctx: ScenarioCtx, n: number): Planned[] {
  const out: Planned[] = [];
  for (let i = 0; i < n; i++) {
    const trxid = `Shop-${ctx.seed}-${String(i).padStart(4, '0')}`;
    const t = ctx.rand();
    const via: Transport = t < 0.1 ? 'curl' : t < 0.2 ? 'python' : 'fetch';
    let body: Json;
    if (via === 'python') {
      // Exactly what examples/shop/shop.py's place(trxid) sends.
      body = { trxid, pid: 'PUBG-60', userId: '5123456701', meta: { shopOrder: trxid } };
    } else {
      const r = ctx.rand();
      const uid = String(5_200_000_000 + i * 7 + Math.floor(ctx.rand() * 5));
      const meta = { shopOrder: i, channel: via };
      if (r < 0.1) body = { trxid, pid: 'KEY-PUBG-60', quantity: 1 + Math.floor(ctx.rand() * 3), meta };
      else if (r < 0.13) body = { trxid, pid: 'STEAM-5', meta };
      else if (r < 0.17) body = { trxid, pid: 'PUBG-60', userId: '99999', meta }; // fails at the supplier: cancelled, refunded
      else if (r < 0.3) body = { trxid, pid: 'ML-86', userId: uid.slice(0, 9), zoneId: String(1000 + (i % 9000)), meta };
      else body = { trxid, pid: ['PUBG-60', 'PUBG-325', 'PUBGCN-60', 'PRIME-1M'][Math.floor(ctx.rand() * 4)]!, userId: uid, meta };
    }
    const rr = ctx.rand();
    // Some at once (an answer lost in the shop's own code), some a while later (a retry job).
    const resends = Array.from({ length: rr < 0.03 ? 2 : rr < 0.1 ? 1 : 0 }, () => (ctx.rand() < 0.5 ? 0 : 300 + Math.floor(ctx.rand() * 3_000)));
    const c = ctx.rand();
    out.push({
      i, trxid, via, body, resends,
      conflict: c < 0.03,
      otherCase: c >= 0.03 && c < 0.05,
      cutAfterMs: via === 'fetch' && ctx.rand() < 0.03 ? Math.floor(ctx.rand() * 15) : null,
    });
  }
  return out;
}

/** Runs a child to its end: exit code and stdout (killed after `timeoutMs`). */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, input?: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    // No __pycache__ left in examples/shop/ by importing shop.py.
    const child = spawn(cmd, args, { env: { PATH: process.env.PATH, HOME: process.env.HOME, PYTHONDONTWRITEBYTECODE: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.resume();
    // A child that exits before reading its input (curl, a failed python3) must not end this process.
    child.stdin.on('error', () => undefined);
    child.on('error', () => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    child.stdin.end(input ?? '');
  });
}

export const api: Scenario = {
  name: 'api',
  title: 'Order API: 1,000 shop orders, resends, receiver outage, SIGKILLs',
  async run(ctx) {
    const started = Date.now();
    const n = ctx.quick ? 300 : 1000;
    const consolePort = await freePort();
    const receiver = new Receiver();
    await receiver.listen();
    ctx.defer(() => receiver.close());
    const base = `http://127.0.0.1:${consolePort}`;
    const w = await world(ctx, {
      limits: '40/250ms,200/15s',
      sandboxArgs: ['--processing-share', '0.4', '--processing-ms', '300-2500', '--fail-share', '0.03'],
      env: {
        TOPUP_RATE_MARGIN_MS: '100',
        TOPUP_CONSOLE: `127.0.0.1:${consolePort}`,
        TOPUP_ORDER_API_TOKEN: TOKEN,
        TOPUP_ORDER_WEBHOOK_URL: `http://127.0.0.1:${receiver.port}/topup`,
        TOPUP_ORDER_WEBHOOK_SECRET: SECRET,
      },
    });
    let daemon: Daemon = startDaemon(w, ctx);
    const ready = async (): Promise<void> =>
      waitUntil('the order API', async () => {
        try {
          return (await fetch(`${base}/api/v1/openapi.json`)).status === 200;
        } catch {
          return false;
        }
      }, 30_000, 50);
    await ready();
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as Json;
    const docErrors = await documentErrors(doc);
    for (const e of docErrors.slice(0, 5)) ctx.log(`openapi: ${e}`);

    // ── every answer the client gets, checked against the document ──
    const nonConforming: string[] = [];
    let answersChecked = 0;
    const check = (method: string, path: string, a: Answer): void => {
      if (a.status === null) return;
      answersChecked++;
      const problems = nonConformance(doc, method, path, a.status, a.type, a.body);
      if (problems.length > 0) {
        nonConforming.push(`${a.via} ${method} ${path} ${a.status}: ${problems.join('; ')}`);
        if (nonConforming.length <= 5) ctx.log(`not conforming: ${nonConforming.at(-1)} — ${a.body.slice(0, 200)}`);
      }
    };

    // ── the three ways a shop sends an order ──
    const viaFetch = async (body: Json, cutAfterMs: number | null = null): Promise<Answer> => {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), cutAfterMs ?? 10_000);
      try {
        const res = await fetch(`${base}/api/v1/orders`, {
          method: 'POST', signal: ac.signal,
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, type: res.headers.get('content-type'), body: text, via: 'fetch', at: Date.now() };
      } catch {
        return { status: null, type: null, body: '', via: 'fetch', at: Date.now() };
      } finally {
        clearTimeout(timer);
      }
    };
    const viaCurl = async (body: Json): Promise<Answer> => {
      const r = await run('curl', ['-sS', '-X', 'POST', `${base}/api/v1/orders`, '-H', `Authorization: Bearer ${TOKEN}`, '-H', 'Content-Type: application/json',
        '--data-binary', JSON.stringify(body), '--max-time', '10', '-w', '\n%{http_code} %{content_type}'], {}, 15_000);
      const nl = r.out.lastIndexOf('\n');
      const [code, type] = r.out.slice(nl + 1).split(' ');
      if (r.code !== 0 || !code || code === '000') return { status: null, type: null, body: '', via: 'curl', at: Date.now() };
      return { status: Number(code), type: type ?? null, body: r.out.slice(0, nl), via: 'curl', at: Date.now() };
    };
    const viaPython = async (trxid: string): Promise<Answer> => {
      const r = await run('python3', ['-c', 'import sys; sys.path.insert(0, sys.argv[1]); import shop; shop.place(sys.argv[2])', SHOP_DIR, trxid],
        { TOPUP_API: base, TOPUP_ORDER_API_TOKEN: TOKEN }, 40_000);
      // place() prints "POST /api/v1/orders: <status> <body>"; no answer: a traceback, exit 1.
      const m = /^POST \/api\/v1\/orders: (\d{3}) (.*)$/s.exec(r.out.trimEnd());
      if (r.code !== 0 || !m) return { status: null, type: null, body: '', via: 'python', at: Date.now() };
      return { status: Number(m[1]), type: null, body: m[2]!, via: 'python', at: Date.now() };
    };

    // ── the shop ──
    const plan = planOrders(ctx, n);
    /** Per order, every attempt of its own body in time order (null status: no answer). */
    const attempts = new Map<string, Answer[]>();
    const extra: { trxid: string; kind: 'conflict' | 'other-case'; a: Answer }[] = [];
    const gaveUp: string[] = [];
    let accepted = 0;
    let noAnswer = 0;
    let resendsSent = 0;
    let cutRequests = 0;
    const deadline = (): number => Date.now() + 120_000;
    /** How long each answered fetch POST of a new order took (202), in ms. */
    const latencies: { ms: number; at: number }[] = [];
    const sendOwn = async (p: Planned, cut: number | null = null): Promise<Answer> => {
      const sentAt = Date.now();
      const a = p.via === 'python' ? await viaPython(p.trxid) : p.via === 'curl' ? await viaCurl(p.body) : await viaFetch(p.body, cut);
      attempts.get(p.trxid)!.push(a);
      if (a.via === 'fetch' && a.status === 202) latencies.push({ ms: a.at - sentAt, at: sentAt - t0 });
      check('POST', '/api/v1/orders', a);
      return a;
    };
    /** Sends until an answer that is not "ask again" (no answer, 5xx): what a shop does on doubt. */
    const untilAnswered = async (p: Planned, cut: number | null = null): Promise<Answer | null> => {
      const until = deadline();
      for (let k = 0; ; k++) {
        const a = await sendOwn(p, k === 0 ? cut : null);
        if (a.status !== null && a.status < 500) return a;
        noAnswer++;
        if (Date.now() > until) return null;
        await sleep(Math.min(2_000, 100 * 2 ** k) + Math.floor(Math.random() * 100));
        resendsSent++;
      }
    };
    const shopOrder = async (p: Planned): Promise<void> => {
      attempts.set(p.trxid, []);
      if (p.cutAfterMs !== null) cutRequests++;
      const first = await untilAnswered(p, p.cutAfterMs);
      if (!first || (first.status !== 202 && first.status !== 200)) {
        gaveUp.push(`${p.trxid}: ${first ? `${first.status} ${first.body.slice(0, 200)}` : 'no answer for 120 s'}`);
        return;
      }
      accepted++;
      for (const wait of p.resends) {
        await sleep(wait);
        resendsSent++;
        if (!(await untilAnswered(p))) gaveUp.push(`${p.trxid}: resend unanswered for 120 s`);
      }
      const other = async (kind: 'conflict' | 'other-case', body: Json): Promise<void> => {
        const until = deadline();
        for (let k = 0; ; k++) {
          const a = await viaFetch(body);
          check('POST', '/api/v1/orders', a);
          if ((a.status !== null && a.status < 500) || Date.now() > until) {
            extra.push({ trxid: p.trxid, kind, a });
            return;
          }
          await sleep(Math.min(2_000, 100 * 2 ** k));
        }
      };
      if (p.conflict) await other('conflict', { ...p.body, userId: '5299999999', pid: 'PUBG-325', quantity: undefined });
      if (p.otherCase) await other('other-case', { ...p.body, trxid: p.trxid.toUpperCase() });
    };

    // ── faults, at seeded instants after the first order ──
    const outageStartMs = ctx.quick ? 5_000 + Math.floor(ctx.rand() * 3_000) : 15_000 + Math.floor(ctx.rand() * 10_000);
    const outageMs = ctx.quick ? 12_000 : 30_000;
    const killAtMs = [
      2_000 + Math.floor(ctx.rand() * (outageStartMs - 3_000)),
      outageStartMs + 2_000 + Math.floor(ctx.rand() * (outageMs - 4_000)),
      outageStartMs + outageMs + 2_000 + Math.floor(ctx.rand() * (ctx.quick ? 3_000 : 8_000)),
    ];
    const downMs = killAtMs.map(() => 300 + Math.floor(ctx.rand() * 1_500));
    const t0 = Date.now();
    const kills: { at: number; acceptedBefore: number; integrity: string; restart?: number; listeningMs?: number }[] = [];
    const faults = (async () => {
      const schedule = [
        { at: outageStartMs, go: async () => { await receiver.down(); ctx.log(`receiver down (connections refused) at ${((Date.now() - t0) / 1000).toFixed(1)} s`); } },
        { at: outageStartMs + outageMs / 2, go: async () => { await receiver.up('500'); ctx.log(`receiver answering 500 at ${((Date.now() - t0) / 1000).toFixed(1)} s`); } },
        { at: outageStartMs + outageMs, go: async () => { await receiver.up('up'); ctx.log(`receiver back at ${((Date.now() - t0) / 1000).toFixed(1)} s`); } },
        ...killAtMs.map((at, k) => ({
          at,
          go: async () => {
            const pid = daemon.child.pid;
            await daemon.kill();
            expireDeadLeases(w, pid);
            const integrity = integrityCheck(join(w.home.jobs, 'topup.db'));
            kills.push({ at: Date.now() - t0, acceptedBefore: accepted, integrity });
            ctx.log(`SIGKILL ${k + 1} at ${((Date.now() - t0) / 1000).toFixed(1)} s (${accepted} orders accepted), down ${downMs[k]} ms, integrity ${integrity}`);
            await sleep(downMs[k]!);
            const restart = Date.now();
            daemon = startDaemon(w, ctx);
            await ready().catch(() => undefined);
            kills.at(-1)!.restart = restart;
            kills.at(-1)!.listeningMs = Date.now() - restart;
          },
        })),
      ];
      // Two timelines side by side: the receiver's three steps, and the kills (each after the last restart).
      const chain = async (steps: typeof schedule): Promise<void> => {
        for (const f of steps.sort((a, b) => a.at - b.at)) {
          await sleep(Math.max(0, t0 + f.at - Date.now()));
          await f.go();
        }
      };
      await Promise.all([chain(schedule.slice(0, 3)), chain(schedule.slice(3))]);
    })();

    // ~14 orders a second (the compressed minute window allows 13.3/s), at most 32 shop tasks at once.
    const intervalMs = 70;
    const tasks: Promise<void>[] = [];
    let running = 0;
    for (const p of plan) {
      await sleep(Math.max(0, t0 + p.i * intervalMs - Date.now()));
      while (running >= 32) await sleep(10);
      running++;
      tasks.push(shopOrder(p).finally(() => running--));
    }
    await Promise.all(tasks);
    const shopDoneS = (Date.now() - t0) / 1000;
    ctx.log(`shop done at ${shopDoneS.toFixed(1)} s: ${accepted} accepted, ${noAnswer} attempts without an answer, ${gaveUp.length} given up`);
    await faults;
    await ready();

    // ── every order to its end, every event delivered ──
    const dbPath = join(w.home.jobs, 'topup.db');
    const q = <T>(sql: string): T[] => {
      const db = new Database(dbPath, { readonly: true, fileMustExist: true });
      try {
        return db.prepare(sql).all() as T[];
      } finally {
        db.close();
      }
    };
    await waitUntil('every API order ended', () => q<{ n: number }>(`SELECT count(*) AS n FROM rows WHERE api_body_hash IS NOT NULL AND state IN (${LIVE.map((s) => `'${s}'`).join(',')})`)[0]!.n === 0, 180_000, 500);
    const endedS = (Date.now() - t0) / 1000;
    await waitUntil('every webhook event delivered', () => q<{ n: number }>(`SELECT count(*) AS n FROM order_events WHERE delivery = 'pending'`)[0]!.n === 0, 240_000, 500)
      .catch((e: Error) => ctx.log(e.message));
    const deliveredS = (Date.now() - t0) / 1000;
    ctx.log(`orders ended at ${endedS.toFixed(1)} s, events delivered at ${deliveredS.toFixed(1)} s`);

    // ── read every order back (a shop that polls) and the feed; both held to the document ──
    const views = new Map<string, Json>();
    const get = async (path: string): Promise<Answer> => {
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const a: Answer = { status: res.status, type: res.headers.get('content-type'), body: await res.text(), via: 'fetch', at: Date.now() };
      check('GET', path.split('?')[0]!, a);
      return a;
    };
    for (const p of plan) {
      const a = await get(`/api/v1/orders/${encodeURIComponent(p.trxid)}`);
      if (a.status === 200) views.set(p.trxid.toLowerCase(), JSON.parse(a.body) as Json);
    }
    let feedEvents = 0;
    for (let since = '', k = 0; k < 100; k++) {
      const a = await get(`/api/v1/orders?limit=1000${since ? `&since=${since}` : ''}`);
      const page = JSON.parse(a.body) as { events: unknown[]; next: string };
      feedEvents += page.events.length;
      if (page.events.length === 0) break;
      since = page.next;
    }
    await daemon.kill();

    // ── the judge ──
    const ledger = await ledgerOf(w.sb);
    const planned = new Map(plan.map((p) => [p.trxid.toLowerCase(), p]));
    const ledgerBy = new Map<string, typeof ledger.orders>();
    for (const o of ledger.orders) ledgerBy.set(o.trxid.toLowerCase(), [...(ledgerBy.get(o.trxid.toLowerCase()) ?? []), o]);
    const boughtTwice = [...ledgerBy.entries()].filter(([, os]) => os.length > 1);
    for (const [t, os] of boughtTwice.slice(0, 5)) ctx.log(`bought twice: ${t}: ${os.map((o) => `${o.orderId} ${o.trxid} ${o.status}`).join(', ')}`);
    const notOurs = ledger.orders.filter((o) => !planned.has(o.trxid.toLowerCase()));

    // Orders the client got a 202/200 for: final, and as the ledger has them.
    const statuses: Record<string, number> = {};
    const notFinal: string[] = [];
    const disagree: string[] = [];
    for (const p of plan) {
      if (!(attempts.get(p.trxid) ?? []).some((a) => a.status === 202 || a.status === 200)) continue;
      const v = views.get(p.trxid.toLowerCase());
      const os = ledgerBy.get(p.trxid.toLowerCase()) ?? [];
      statuses[v?.status ?? 'missing'] = (statuses[v?.status ?? 'missing'] ?? 0) + 1;
      if (!v || !['completed', 'cancelled', 'rejected'].includes(v.status)) {
        notFinal.push(`${p.trxid}: ${v ? `${v.status} (${v.state})` : 'no order'}`);
        continue;
      }
      if (v.status === 'rejected') {
        if (os.length > 0 || !v.error) disagree.push(`${p.trxid}: rejected (${v.error?.message}) but the ledger has ${os.map((o) => `${o.orderId} ${o.status}`).join(', ') || 'nothing'}`);
      } else if (os.length !== 1 || os[0]!.orderId !== v.orderId || os[0]!.status !== v.status || Math.abs(os[0]!.amountUsd - Number(v.amountUsd)) >= 0.005) {
        disagree.push(`${p.trxid}: ${v.status} ${v.orderId} ${v.amountUsd} vs ledger ${os.map((o) => `${o.orderId} ${o.status} ${o.amountUsd}`).join(', ') || 'nothing'}`);
      }
    }
    for (const m of [...notFinal, ...disagree].slice(0, 8)) ctx.log(m);

    // Every resend answered as the same order: the first answer 202 (or 200 after an unanswered
    // attempt), every later one 200, all naming the same order; another body 409.
    const identity = (o: Json): string => JSON.stringify([o.trxid, o.batchId, o.createdAt, o.pid, o.quantity, o.player, o.meta]);
    const wrongResends: string[] = [];
    let answeredResends = 0;
    let resentOrders = 0;
    let resentTwice = 0;
    let unanswered = 0;
    let firstAnswer200 = 0;
    for (const p of plan) {
      const as = attempts.get(p.trxid) ?? [];
      const answered = as.filter((a) => a.status !== null && a.status < 500);
      if (as.length === 2) resentOrders++;
      if (as.length > 2) resentTwice++;
      if (as.some((a) => a.status === null || a.status >= 500)) unanswered++;
      const firstOk = answered.findIndex((a) => a.status === 202 || a.status === 200);
      if (firstOk < 0) continue;
      const first = answered[firstOk]!;
      const idOf = identity(JSON.parse(first.body) as Json);
      if (first.status === 200) {
        firstAnswer200++;
        if (as.indexOf(first) === 0) wrongResends.push(`${p.trxid}: the very first request answered 200 (an order it never stored?)`);
      }
      for (const a of answered.slice(firstOk + 1)) {
        answeredResends++;
        if (a.status !== 200) wrongResends.push(`${p.trxid}: resend via ${a.via} answered ${a.status} ${a.body.slice(0, 160)}`);
        else if (identity(JSON.parse(a.body) as Json) !== idOf) wrongResends.push(`${p.trxid}: resend answered another order: ${a.body.slice(0, 160)}`);
      }
      if (answered.slice(0, firstOk).length > 0) wrongResends.push(`${p.trxid}: answered ${answered[0]!.status} before its 2xx`);
      const v = views.get(p.trxid.toLowerCase());
      if (v && identity(v) !== idOf) wrongResends.push(`${p.trxid}: GET shows another order than the POST answered`);
    }
    const conflicts = extra.filter((x) => x.kind === 'conflict');
    const wrongConflicts = conflicts.filter((x) => x.a.status !== 409 || (JSON.parse(x.a.body) as Json).code !== 'TRXID_CONFLICT');
    const otherCase = extra.filter((x) => x.kind === 'other-case');
    const otherCaseAnswers: Record<string, number> = {};
    for (const x of otherCase) {
      const k = x.a.status === 409 ? `409 ${(JSON.parse(x.a.body) as Json).code}` : String(x.a.status);
      otherCaseAnswers[k] = (otherCaseAnswers[k] ?? 0) + 1;
    }
    // Another letter case is the same trxid: never a new order (409, or 200 the same order).
    const wrongOtherCase = otherCase.filter((x) => !(x.a.status === 409 || (x.a.status === 200 && (JSON.parse(x.a.body) as Json).trxid === x.trxid)));
    for (const m of [...wrongResends, ...wrongConflicts.map((x) => `${x.trxid}: other body answered ${x.a.status} ${x.a.body.slice(0, 160)}`), ...wrongOtherCase.map((x) => `${x.trxid}: upper case answered ${x.a.status}`)].slice(0, 8)) ctx.log(m);

    // Webhooks: every event of the store received (de-duplicated by id), per order in the store's order.
    const events = q<{ id: number; trxid: string; type: string; status: string; delivery: string; attempts: number }>(`SELECT id, trxid, type, status, delivery, attempts FROM order_events ORDER BY id`);
    const storeById = new Map(events.map((e) => [`evt_${e.id}`, e]));
    const storeSeq = new Map<string, string[]>();
    for (const e of events) storeSeq.set(e.trxid.toLowerCase(), [...(storeSeq.get(e.trxid.toLowerCase()) ?? []), `evt_${e.id}`]);
    const firstSeen = new Set<string>();
    const gotSeq = new Map<string, string[]>();
    let duplicates = 0;
    const unknownEvents: string[] = [];
    const wrongContent: string[] = [];
    for (const r of receiver.delivered) {
      if (firstSeen.has(r.id)) {
        duplicates++;
        continue;
      }
      firstSeen.add(r.id);
      const s = storeById.get(r.id);
      if (!s) {
        unknownEvents.push(r.id);
        continue;
      }
      if (s.type !== r.type || s.status !== r.status || s.trxid.toLowerCase() !== r.trxid.toLowerCase()) wrongContent.push(`${r.id}: got ${r.type}/${r.status} ${r.trxid}, the store has ${s.type}/${s.status} ${s.trxid}`);
      gotSeq.set(r.trxid.toLowerCase(), [...(gotSeq.get(r.trxid.toLowerCase()) ?? []), r.id]);
    }
    const missing = events.filter((e) => !firstSeen.has(`evt_${e.id}`));
    let outOfOrder = 0;
    for (const [t, seq] of storeSeq) {
      const got = (gotSeq.get(t) ?? []).join(' ');
      if (got !== seq.join(' ') && seq.every((id) => firstSeen.has(id))) {
        outOfOrder++;
        if (outOfOrder <= 5) ctx.log(`${t}: received ${got}, the store has ${seq.join(' ')}`);
      }
    }
    for (const e of missing.slice(0, 5)) ctx.log(`not received: evt_${e.id} ${e.trxid} ${e.type} (${e.delivery}, ${e.attempts} attempts)`);
    // Every status change is an event: each order's events start with accepted and end at its status now.
    let eventsNotCoveringChanges = 0;
    for (const [t, v] of views) {
      const ids = storeSeq.get(t) ?? [];
      const seq = ids.map((id) => storeById.get(id)!.status);
      const hist = ((v.history ?? []) as { eventId: string; status: string }[]).map((h) => `${h.eventId}:${h.status}`);
      const mine = ids.map((id, k) => `${id}:${seq[k]}`);
      if (seq[0] !== 'accepted' || seq.at(-1) !== v.status || mine.join(' ') !== hist.join(' ')) {
        eventsNotCoveringChanges++;
        if (eventsNotCoveringChanges <= 5) ctx.log(`${t}: events ${mine.join(' ')}, history ${hist.join(' ')}, status ${v.status}`);
      }
    }
    const undelivered = events.filter((e) => e.delivery !== 'delivered');
    const retried = events.filter((e) => e.attempts > 1).length;

    // The Python example's verify() on a sample of the bodies received (and a few forged).
    const sample = receiver.delivered.filter(() => ctx.rand() < 0.25).slice(0, 250);
    const forged = sample.slice(0, 5).map((r) => ({ ...r, raw: r.raw.replace('"status":"', '"status":"x') }));
    const lines = [...sample, ...forged].map((r) => JSON.stringify({ h: r.header, b: Buffer.from(r.raw).toString('base64'), now: r.atSec })).join('\n');
    const py = await run('python3', ['-c', [
      'import sys, json, base64; sys.path.insert(0, sys.argv[1]); import shop',
      'for line in sys.stdin:',
      '    x = json.loads(line)',
      '    print(1 if shop.verify(x["h"], base64.b64decode(x["b"]), sys.argv[2], now=x["now"]) else 0)',
    ].join('\n'), SHOP_DIR, SECRET], {}, 60_000, lines + '\n');
    const pyOut = py.out.trim().split('\n');
    const pyWrong = py.code !== 0 ? sample.length + forged.length
      : sample.filter((_, k) => pyOut[k] !== '1').length + forged.filter((_, k) => pyOut[sample.length + k] !== '0').length;

    // After each restart: when the API listened again, and the first order it answered 2xx.
    const all = [...attempts.values()].flat();
    const afterRestart = kills.map((k) => {
      const first = Math.min(...all.filter((a) => (a.status === 202 || a.status === 200) && a.at >= k.restart!).map((a) => a.at));
      return `${((k.listeningMs ?? 0) / 1000).toFixed(1)} / ${((first - k.restart!) / 1000).toFixed(1)}`;
    });
    // How long acceptance took (fetch only: curl and python3 include starting a process), and the
    // longest stretches in which the daemon stored no order at all (from the store's created_at).
    const lat = latencies.map((x) => x.ms).sort((a, b) => a - b);
    const pct = (q: number): number => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))] ?? 0;
    const created = q<{ c: number }>(`SELECT created_at AS c FROM rows WHERE api_body_hash IS NOT NULL ORDER BY created_at`).map((x) => x.c);
    const gaps = created.slice(1).map((c, k) => ({ start: created[k]! - t0, ms: c - created[k]! }));
    // A kill's window: from just before it until a while after the API listens again.
    const killWindows = kills.map((k, j) => [k.at - 500, k.at + downMs[j]! + (k.listeningMs ?? 0) + 2_500] as const);
    const stalls = gaps.filter((g) => g.ms >= 1_000 && !killWindows.some(([a, b]) => g.start + g.ms >= a && g.start <= b));
    for (const g of stalls.slice(0, 8)) ctx.log(`no order stored for ${(g.ms / 1000).toFixed(1)} s from ${(g.start / 1000).toFixed(1)} s (no kill near)`);
    const by = (t: Transport): number => plan.filter((p) => p.via === t).length;
    const figures: Figure[] = [
      info('orders (fetch / curl / Python example)', `${n} (${by('fetch')} / ${by('curl')} / ${by('python')})`),
      info('limits (both sides)', '40/250ms,200/15s (the spec\'s counts, windows a quarter as long)'),
      info('orders resent with the same body: planned (of them twice) / after no answer', `${plan.filter((p) => p.resends.length > 0).length} (${plan.filter((p) => p.resends.length > 1).length}) / ${unanswered}`),
      info('orders with 2 / 3 or more requests of their body', `${resentOrders} / ${resentTwice}`),
      info('resends sent / answered after the first 2xx', `${resendsSent} / ${answeredResends}`),
      info('requests without an answer or 5xx (kills, cut requests) / cut on purpose', `${noAnswer} / ${cutRequests}`),
      info('first 2xx was a 200 (an earlier unanswered request had stored it)', firstAnswer200),
      info('SIGKILLs (s after start: orders accepted before)', kills.map((k) => `${(k.at / 1000).toFixed(1)}: ${k.acceptedBefore}`).join(', ')),
      info('after each restart: API listening / first 2xx (s)', afterRestart.join(', ')),
      info('POST /orders answered 202 via fetch: p50 / p99 / max (ms)', `${pct(0.5)} / ${pct(0.99)} / ${lat.at(-1) ?? 0}`),
      info('stretches ≥ 1 s with no order stored and no kill near (longest, s)', `${stalls.length} (${(Math.max(0, ...stalls.map((g) => g.ms)) / 1000).toFixed(1)})`),
      info('receiver outage', `${outageMs / 1000} s (${outageMs / 2000} s refused, ${outageMs / 2000} s answering 500; ${receiver.refused500} posts answered 500)`),
      info('statuses', Object.entries(statuses).map(([k, v]) => `${k} ${v}`).join(', ')),
      info('events in the store / posts received / delivered distinct / duplicates', `${events.length} / ${receiver.posts} / ${firstSeen.size} / ${duplicates}`),
      info('events retried (more than one attempt)', retried),
      info('feed events read back', feedEvents),
      info('upper-case trxid resends answered', Object.entries(otherCaseAnswers).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none'),
      info('wall time: shop done / orders ended / events delivered (s)', `${shopDoneS.toFixed(0)} / ${endedS.toFixed(0)} / ${deliveredS.toFixed(0)}`),
      eq0('orders never accepted (the shop gave up)', gaveUp.length),
      eq0('trxids bought twice (any letter case)', boughtTwice.length),
      eq0('ledger orders the shop never placed', notOurs.length),
      eq0('accepted orders not completed/cancelled/rejected', notFinal.length),
      eq0('accepted orders disagreeing with the ledger', disagree.length),
      eq0('resends not answered 200 with the same order', wrongResends.length),
      eq0('other-body sends not answered 409 TRXID_CONFLICT', wrongConflicts.length),
      eq0('upper-case trxid sends making a new order', wrongOtherCase.length),
      eq0('store events never received', missing.length),
      eq0('events not delivered in the store (pending/failed)', undelivered.length),
      eq0('orders whose received events differ from the store\'s sequence', outOfOrder),
      eq0('orders whose events do not cover every status change', eventsNotCoveringChanges),
      eq0('received events the store does not have / with other content', unknownEvents.length + wrongContent.length),
      eq0('posts with an invalid signature (src/webhooks/signer.ts verify)', receiver.badSignatures.length),
      info('bodies checked by the Python example\'s verify (+ forged)', `${sample.length} (+ ${forged.length})`),
      eq0('Python verify disagreeing (a valid one refused, a forged one taken)', pyWrong),
      eq0('integrity_check failures after a kill', kills.filter((k) => k.integrity !== 'ok').length),
      eq0('OpenAPI 3.1 document errors', docErrors.length),
      atLeast('answers checked against the document', answersChecked, n),
      eq0('answers not conforming to the document', nonConforming.length),
    ];
    ctx.log(`wall ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return figures;
  },
};
