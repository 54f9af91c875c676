/**
 * A simulated process's wire to the model API (model.ts): the real client (src/api/client.ts)
 * calls `send` exactly as it calls undici, and every step of the exchange is an event of the
 * simulator's queue: the request reaching the API after some latency (where the model decides
 * and records what happens), the answer coming back after more, or never. A process that crashed
 * meanwhile never gets its answer, but its request still arrives if it was on the wire: an order
 * can be made for a process that is gone, which is the case the engine's intent exists for.
 */
import type { Transport, TransportRequest, TransportResponse } from '../src/api/transport.js';
import type { Entropy } from '../src/kernel/entropy.js';
import type { ModelApi } from './model.js';
import type { SimScheduler } from './scheduler.js';

class NetworkError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * One exchange as it went (invariants 39 and 40, run-schedule.ts): sent, arrived, and its answer
 * delivered to the process that asked, or not. Filled in as the exchange goes.
 */
export interface Exchange {
  api: ModelApi;
  owner: string;
  method: string;
  path: string;
  /** Sim time (mono) it left, arrived at the model, and its answer reached the process. */
  sentAt: number;
  arrivedAt: number | null;
  deliveredAt: number | null;
  status: number | null;
  /** The answer's body as sent (null: lost); `cut`: cut short on the wire. */
  body: string | null;
  cut: boolean;
}

/** `apiAt`: the model API a URL's host reaches (two accounts: two hosts, two models). */
export function simTransport(sim: SimScheduler, apiAt: (url: URL) => ModelApi, owner: string, rand: Entropy, onPost?: (api: ModelApi, trxid: string) => void, onExchange?: (x: Exchange) => void): Transport {
  const latency = (api: ModelApi): number => {
    const [lo, hi] = api.profile.latencyMs;
    return lo + Math.floor(rand.random() * (hi - lo + 1));
  };
  return {
    send(req: TransportRequest): Promise<TransportResponse> {
      return new Promise<TransportResponse>((resolve, reject) => {
        let settled = false;
        const done = (f: () => void): void => {
          if (settled) return;
          settled = true;
          req.signal.removeEventListener('abort', onAbort);
          f();
        };
        // Aborted (timeout, stop): the client gives up; the request may still arrive.
        const onAbort = (): void => done(() => reject(req.signal.reason as Error));
        if (req.signal.aborted) return onAbort();
        req.signal.addEventListener('abort', onAbort, { once: true });
        const url = new URL(req.url);
        const api = apiAt(url);
        // The request travels: it arrives whatever becomes of the process (owner null).
        if (onPost && req.method === 'POST' && url.pathname.endsWith('/orders') && req.body) {
          // Where each trxid was sent (invariant 24: one trxid, one endpoint), when it leaves.
          const t = (JSON.parse(req.body) as { trxid?: unknown }).trxid;
          if (typeof t === 'string') onPost(api, t);
        }
        const hx: Exchange | null = onExchange ? { api, owner, method: req.method, path: url.pathname, sentAt: sim.mono, arrivedAt: null, deliveredAt: null, status: null, body: null, cut: false } : null;
        if (hx) onExchange!(hx);
        sim.at(latency(api), null, `${req.method} ${url.pathname} arrives from ${owner}`, () => {
          const checksBefore = api.checks.length;
          const reply = api.answer({ method: req.method, path: url.pathname, query: url.searchParams, headers: lower(req.headers), body: req.body });
          // A player check reached the model: who sent it (invariant 32 excuses a charge its killed sender never recorded).
          if (api.checks.length > checksBefore) api.checks[checksBefore]!.owner = owner;
          // Invariant 37: every POST /orders that arrived, whether its answer was a plain refusal and
          // whether it reaches the process (set when it does; a lost or cut answer never counts as one).
          const sentTrxid = req.method === 'POST' && url.pathname.endsWith('/orders') && req.body ? (JSON.parse(req.body) as { trxid?: unknown }).trxid : undefined;
          const post = typeof sentTrxid === 'string' ? { key: api.foldKey(sentTrxid), trxid: sentTrxid, owner, at: sim.mono, nothing: reply.kind === 'answer' && reply.cut !== true && api.lastPostNothing, delivered: false } : null;
          if (post) api.posts.push(post);
          if (hx) {
            hx.arrivedAt = sim.mono;
            // The body is kept for history only (39 reads what it listed); others need their status.
            if (reply.kind === 'answer') Object.assign(hx, { status: reply.status, body: hx.path.endsWith('/history') ? reply.body : '', cut: reply.cut === true });
          }
          if (reply.kind === 'lost') {
            // No answer ever: the connection is reset at some point, or hangs until the client's timeout.
            if (rand.random() < 0.5) sim.at(latency(api), owner, `reset to ${owner}`, () => done(() => reject(new NetworkError('ECONNRESET', 'socket hang up'))));
            return;
          }
          const trxid = req.method === 'POST' && req.body ? ((JSON.parse(req.body) as { trxid?: string }).trxid ?? null) : null;
          const slow = reply.slowMs ?? 0;
          if (slow > 0 && trxid) api.markInFlight(trxid, true);
          sim.at(slow + latency(api), owner, `${reply.status} for ${req.method} ${url.pathname} reaches ${owner}`, () => {
            if (slow > 0 && trxid) api.markInFlight(trxid, false);
            done(() => {
              if (post) post.delivered = true;
              if (hx) hx.deliveredAt = sim.mono;
              resolve({ status: reply.status, headers: reply.headers, body: bodyOf(reply.body, reply.cut === true) });
            });
          });
          if (slow > 0 && trxid) {
            // The in-flight mark ends with the answer even if the process is gone.
            sim.at(slow + latency(api), null, `in-flight mark of ${trxid} ends`, () => api.markInFlight(trxid, false));
          }
        });
      });
    },
    close: async () => {},
  };
}

function lower(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = v;
  return out;
}

/** The body as the client reads it: one chunk, or a cut transfer that fails after it. */
function bodyOf(text: string, cut: boolean): TransportResponse['body'] {
  let destroyed = false;
  const chunk = Buffer.from(text, 'utf8');
  return {
    async *[Symbol.asyncIterator]() {
      if (destroyed) return;
      yield chunk;
      if (cut) throw new NetworkError('UND_ERR_SOCKET', 'other side closed');
    },
    destroy: () => void (destroyed = true),
  };
}
