/**
 * HTTP routing of the sandbox. Public request pipeline (choices.ts has the reasons):
 * admin routes aside → blackhole → settle due orders → key → account state / IP → rate limit
 * → body JSON → (real-world style: a proxy's HTML 502) → route. Unknown routes answer 501 only
 * after all of that, so an unauthenticated probe learns nothing about which paths exist. Every
 * public answer is written by Answers.render, in the answer style in force.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { adminRoute, type SandboxAdmin } from './admin.js';
import type { Answers, ProxyFault, Rendered } from './answers.js';
import { checkAccount, clientIp, identify, isFailure } from './auth.js';
import type { Faults } from './faults.js';
import type { LiveCatalog } from './live-catalog.js';
import { resolveOrderId } from './order-ids.js';
import { publicOrder } from './orders.js';
import type { RateLimiter } from './rate-limit.js';
import type { PlayerDirectory } from './players.js';
import type { AccountRow, SandboxState } from './state.js';
import { type SubmitContext, submitOrder } from './submit.js';
import type { CallLogEntry, Clock, FaultSettings } from './types.js';
import { toUsd } from './types.js';

export interface ServerDeps {
  state: SandboxState;
  catalog: LiveCatalog;
  faults: Faults;
  limiter: RateLimiter;
  admin: SandboxAdmin;
  adminToken: string;
  now: Clock;
  submit: SubmitContext;
  answers: Answers;
  players: PlayerDirectory;
  logger?: Logger | undefined;
}

type Answer = (status: number, body: unknown, headers?: Record<string, string>, forcedRetryAfter?: boolean) => void;

const MAX_BODY = 1 << 20;

function write(res: ServerResponse, r: Rendered): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(r.status, { ...r.headers, 'content-length': Buffer.byteLength(r.text) });
  res.end(r.text);
}

/** Admin answers: always plain JSON, whatever the answer style. */
const send = (res: ServerResponse, status: number, body: unknown): void =>
  write(res, { status, headers: { 'content-type': 'application/json; charset=utf-8' }, text: JSON.stringify(body) });

async function readText(req: IncomingMessage): Promise<string | null> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) return null;
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `undefined` when the text is not JSON. Empty text is not JSON either. */
function parseJson(text: string): { value: unknown } | undefined {
  try { return { value: JSON.parse(text) as unknown }; } catch { return undefined; }
}

export function createHandler(d: ServerDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const method = req.method ?? 'GET';
    if (url.pathname.startsWith('/__sandbox/')) return handleAdmin(d, req, res, method, url.pathname.slice('/__sandbox/'.length));
    if (d.faults.settings.blackhole) return; // never answered; close() destroys the socket

    d.submit.settle();
    const route = routeName(method, url.pathname);
    const call = d.answers.nextCall();
    const render = (status: number, body: unknown, headers: Record<string, string> = {}, forcedRetryAfter = false) =>
      d.answers.render(route, status, body, headers, { state: d.state, now: d.now(), call, forcedRetryAfter });
    const who = identify(req, d.state);
    if (isFailure(who)) return write(res, render(who.status, who.body));
    const now = d.now();
    const entry: CallLogEntry = { t: now, method, route, status: 0, account: who.fp, admitted: false };
    d.limiter.record(entry);
    d.limiter.noteArrival(now, method, route, who.fp);
    const log = (status: number) => {
      entry.status = status;
      d.logger?.debug({ method, route, status, account: who.fp }, 'sandbox call');
    };
    const answer: Answer = (status, body, headers, forcedRetryAfter) => {
      log(status);
      write(res, render(status, body, headers, forcedRetryAfter));
    };
    const proxyPage = () => {
      log(502);
      write(res, d.answers.proxyPage(call));
    };

    const denied = checkAccount(who, clientIp(req));
    if (denied) return answer(denied.status, denied.body);
    if (d.faults.maintenance(now) === 'RATE_LIMIT_UNAVAILABLE') {
      return answer(503, { success: false, code: 'RATE_LIMIT_UNAVAILABLE', error: 'RATE_LIMIT_UNAVAILABLE' });
    }
    const forced = d.faults.takeForcedRateLimit();
    if (forced) {
      d.limiter.noteForced(now, forced.retryAfterSec);
      const retryAfter = forced.format === 'http-date'
        ? new Date(now + forced.retryAfterSec * 1000).toUTCString() : String(forced.retryAfterSec);
      return answer(429, { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' }, { 'retry-after': retryAfter }, true);
    }
    const admission = d.limiter.admit(who.fp, now);
    if (!admission.ok) {
      return answer(429, { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' }, { 'retry-after': String(admission.retryAfterSec) });
    }
    entry.admitted = true;

    let body: unknown;
    if (route === 'POST /orders' || route === 'POST /pubgvvfy' || route === 'POST /mlvfy') {
      const text = await readText(req);
      const parsed = text === null ? undefined : parseJson(text);
      if (!parsed) return answer(401, { success: false, error: 'INVALID JSON' });
      body = parsed.value;
    }
    // A proxy in front of the API fails the call: before it reaches the API, or after (POST /orders).
    const proxy = d.answers.proxyFault(route, call);
    if (proxy === 'before') return proxyPage();
    await route_(d, who, route, url, body, answer, res, proxy, proxyPage, call);
  };
}

async function route_(d: ServerDeps, who: AccountRow, route: string, url: URL, body: unknown,
  answer: Answer, res: ServerResponse, proxy: ProxyFault, proxyPage: () => void, call: number): Promise<void> {
  const now = d.now();
  switch (route) {
    case 'GET /services': return answer(200, { success: true, services: d.catalog.services() });
    case 'GET /products':
    case 'GET /catalog': return answer(200, { success: true, products: d.catalog.products() });
    case 'GET /my-ip': return answer(200, { success: true, ip: clientIp(res.req) });
    case 'GET /balance': return answer(200, { success: true, balanceUsd: toUsd(who.balanceMicros), currency: 'USD' });
    case 'GET /history': return answer(200, history(d.state, who.fp, url.searchParams, now, d.faults.settings));
    case 'GET /orders/:orderId': {
      const id = resolveOrderId(decodeURIComponent(url.pathname.slice('/orders/'.length)));
      const o = id === undefined ? undefined : d.state.order(id);
      if (!o || o.account !== who.fp) return answer(404, { success: false, error: 'ORDER NOT FOUND' });
      return answer(200, publicOrder(o, now));
    }
    case 'POST /orders': {
      const out = await submitOrder(d.submit, who, body);
      if ('drop' in out) {
        res.socket?.destroy();
        return;
      }
      // The order (if one was made) stands; only its answer is lost behind the proxy.
      if (proxy === 'after') return proxyPage();
      return answer(out.status, out.body);
    }
    case 'POST /pubgvvfy':
    case 'POST /mlvfy': {
      // Beyond the spec (players.ts): a name check, never an order.
      const out = d.players.answer(d.state, who, route, body, now, d.answers.realWorld, call);
      if ('drop' in out) {
        // Charged, then the connection is cut: the client never learns what the check said.
        res.socket?.destroy();
        return;
      }
      if (out.holdMs !== undefined) await new Promise((r) => setTimeout(r, out.holdMs));
      if (typeof out.body === 'string') {
        res.writeHead(out.status, { 'content-type': 'text/html; charset=utf-8', ...(out.headers ?? {}) });
        res.end(out.body);
        return;
      }
      return answer(out.status, out.body, out.headers);
    }
    default: return answer(501, { success: false, error: 'NOT IMPLEMENTED' });
  }
}

function routeName(method: string, path: string): string {
  if (/^\/orders\/[^/]+$/.test(path)) return `${method} /orders/:orderId`;
  return `${method} ${path.length > 100 ? `${path.slice(0, 100)}…` : path}`;
}

/** Integers only; anything else (absent, junk) takes the default, out-of-range values are clamped. */
function intParam(v: string | null, def: number, min: number, max: number): number {
  const n = v === null || !/^-?\d+$/.test(v.trim()) ? def : Number(v);
  return Math.min(max, Math.max(min, n));
}

function history(state: SandboxState, fp: string, q: URLSearchParams, now: number, f: Pick<FaultSettings, 'historyKeepMs' | 'historyPageMax'>): Record<string, unknown> {
  // A history kept for an age only (historyKeepMs) lists and counts the orders made within it.
  const after = f.historyKeepMs === null ? undefined : now - f.historyKeepMs;
  if (q.has('page')) {
    const page = intParam(q.get('page'), 1, 1, Number.MAX_SAFE_INTEGER);
    const pageSize = Math.min(intParam(q.get('pageSize'), 20, 1, 50), f.historyPageMax ?? 50);
    const orders = state.history(fp, pageSize, (page - 1) * pageSize, after).map((o) => publicOrder(o, now));
    const total = state.countOrders(fp, after);
    return { success: true, count: orders.length, orders, total, hasMore: page * pageSize < total, page, pageSize };
  }
  const orders = state.history(fp, Math.min(intParam(q.get('limit'), 30, 1, 200), f.historyPageMax ?? 200), 0, after).map((o) => publicOrder(o, now));
  return { success: true, count: orders.length, orders };
}

async function handleAdmin(d: ServerDeps, req: IncomingMessage, res: ServerResponse, method: string, op: string): Promise<void> {
  if (req.headers['x-sandbox-admin'] !== d.adminToken) return send(res, 403, { success: false, error: 'ADMIN TOKEN REQUIRED' });
  let body: unknown;
  if (method === 'POST') {
    const text = await readText(req);
    const parsed = text === null ? undefined : parseJson(text === '' ? '{}' : text);
    if (!parsed) return send(res, 400, { success: false, error: 'INVALID JSON' });
    body = parsed.value;
  }
  const out = adminRoute(d.admin, method, op, body);
  send(res, out.status, out.body);
}
