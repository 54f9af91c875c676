/**
 * The order API's HTTP layer on a real listener (127.0.0.1, a free port) over a real runtime in a
 * temp home (store, claims, outbox), mounted as the console mounts it (under /api/v1). The order
 * desk is a small fake that keeps the contract of src/orders/types.ts: the HTTP layer's own tests
 * do not need the engine (test/orderapi/daemon.test.ts runs the real one).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { createOrderApi } from '../../src/orderapi/api.js';
import { TokenStore } from '../../src/orderapi/tokens.js';
import type { AcceptOutcome, FeedPage, OrderDesk, OrderEvent, OrderInput, OrderView, PlayerCheckDesk, PlayerCheckInput, PlayerCheckOutcome } from '../../src/orders/types.js';
import { tempHome, type TempHome } from '../e2e/harness.js';
import { conforms } from './conformance.js';

export const CONFIG_TOKEN = 'config-token-0123456789abcdef';

/** A desk keeping the contract: same trxid + body → same; another body → 409; `poor-*` → 402; `bad-*` → 422. */
export class FakeDesk implements OrderDesk, PlayerCheckDesk {
  readonly orders = new Map<string, { body: string; view: OrderView }>();
  readonly events: OrderEvent[] = [];
  accepting = true;
  failNext = false;

  async accept(input: OrderInput): Promise<AcceptOutcome> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('SQLITE_BUSY: /secret/path/topup.db is locked');
    }
    if (!this.accepting) return { kind: 'refused', status: 503, code: 'NOT_ACCEPTING', detail: 'the daemon is stopping' };
    const body = JSON.stringify(input);
    const had = this.orders.get(input.trxid);
    if (had) return had.body === body ? { kind: 'same', order: had.view } : { kind: 'refused', status: 409, code: 'TRXID_CONFLICT', detail: `trxid ${input.trxid} was accepted with another body` };
    if (input.trxid.startsWith('poor-')) return { kind: 'refused', status: 402, code: 'INSUFFICIENT_BALANCE', detail: 'balance 1.00 USD, the order costs 2.00 USD', extra: { balanceUsd: 1, costUsd: 2 } };
    if (input.trxid.startsWith('bad-')) return { kind: 'refused', status: 422, code: 'INVALID_ORDER', detail: 'pid: no such pack', problems: [{ field: 'pid', reason: 'no such pack in the catalog' }] };
    const at = new Date(1_764_000_000_000 + this.events.length * 1000).toISOString();
    const view: OrderView = {
      trxid: input.trxid, status: 'completed', state: 'completed', batchId: 'b251126-abcdef', account: 'default', orderId: 'ORD-1',
      pid: input.pid ?? null, slug: input.slug ?? null, pack: input.pack ?? null, quantity: input.quantity ?? 1,
      player: { ...(input.userId !== undefined ? { userId: input.userId } : {}), ...(input.zoneId !== undefined ? { zoneId: input.zoneId } : {}) },
      playerName: null,
      unitPriceUsd: 0.92, expectedUsd: 0.92, maxPriceUsd: input.maxPriceUsd ?? null, amountUsd: 0.92, refunded: false, netUsd: 0.92,
      codes: ['CODE-SECRET-1'], codeCount: 1, error: null, meta: input.meta ?? null, createdAt: at, updatedAt: at,
      history: [{ eventId: `evt_${this.events.length + 1}`, type: 'order.accepted', status: 'accepted', at }],
    };
    this.orders.set(input.trxid, { body, view });
    this.events.push({ id: `evt_${this.events.length + 1}`, type: 'order.accepted', createdAt: at, data: view });
    return { kind: 'accepted', order: view };
  }

  #show(v: OrderView, codes: boolean, history: boolean): OrderView {
    const { codes: c, history: h, ...rest } = v;
    return { ...rest, ...(codes && c ? { codes: c } : {}), ...(history && h ? { history: h } : {}) };
  }

  get(trxid: string, opts: { codes: boolean }): OrderView | undefined {
    const o = this.orders.get(trxid);
    return o && this.#show(o.view, opts.codes, true);
  }

  feed(since: string | undefined, limit: number, opts: { codes: boolean }): FeedPage {
    const from = since ? Number(since.slice(4)) : 0;
    const events = this.events.filter((e) => Number(e.id.slice(4)) > from).slice(0, limit).map((e) => ({ ...e, data: this.#show(e.data, opts.codes, false) }));
    return { events, next: events.length > 0 ? events.at(-1)!.id : (since ?? 'evt_0') };
  }

  event(id: number, opts: { codes: boolean }): OrderEvent | undefined {
    const e = this.events.find((x) => x.id === `evt_${id}`);
    return e && { ...e, data: this.#show(e.data, opts.codes, false) };
  }

  /** Player checks: `nobody-*` not found, `busy-*` 429, `doubt-*` 503, anything else found (the real one: test/players/api-check.test.ts). */
  async checkPlayer(input: PlayerCheckInput): Promise<PlayerCheckOutcome> {
    const check = input.zoneId !== undefined ? 'ml' as const : 'pubg' as const;
    const player = { userId: input.userId, ...(input.zoneId !== undefined ? { zoneId: input.zoneId } : {}) };
    if (input.userId.startsWith('nobody-')) return { kind: 'refused', status: 422, code: 'PLAYER_NOT_FOUND', detail: 'no such player', problems: [{ field: 'userId', reason: 'no such player' }], extra: { check, player, checkedAt: new Date(0).toISOString(), cached: false } };
    if (input.userId.startsWith('busy-')) return { kind: 'refused', status: 429, code: 'PLAYER_CHECK_RATE_LIMITED', detail: 'budget spent', extra: { check, said: '429' }, retryAfterS: 7 };
    if (input.userId.startsWith('doubt-')) return { kind: 'refused', status: 503, code: 'PLAYER_CHECK_IN_DOUBT', detail: 'no answer', extra: { check, said: 'timeout' }, retryAfterS: 60 };
    return { kind: 'found', view: { found: true, check, player, playerName: 'FakeName1', checkedAt: new Date(0).toISOString(), cached: false } };
  }
}

export interface ApiWorld {
  url: string;
  rt: Runtime;
  home: TempHome;
  desk: FakeDesk;
  tokens: TokenStore;
  wakes: number;
  stopping: boolean;
  doc: Record<string, any>;
  /** A request to the API, its answer held to the document (conformance.ts) unless `check: false`. */
  call(method: string, path: string, opts?: { token?: string | null; body?: string | Uint8Array; type?: string; headers?: Record<string, string>; check?: boolean }): Promise<{ status: number; headers: Headers; text: string; json: any }>;
  close(): Promise<void>;
}

const worlds: ApiWorld[] = [];

export async function apiWorld(opts: { batchBodyMax?: number; env?: Record<string, string> } = {}): Promise<ApiWorld> {
  const home = tempHome('topup-orderapi-');
  const config = loadConfig({}, { TOPUP_HOME: home.dir, TOPUP_API_URL: 'http://127.0.0.1:9', TOPUP_API_KEY: 'orderapi-test-key-1', TOPUP_ORDER_API_TOKEN: CONFIG_TOKEN, ...opts.env } as never);
  const rt = openRuntime(config, silentLogger(), 'http://127.0.0.1:9');
  const desk = new FakeDesk();
  const tokens = new TokenStore(rt.db, rt.clock, config.orderApi.token);
  const state = { wakes: 0, stopping: false };
  const api = createOrderApi({ rt, desk, players: desk, tokens, wake: () => void state.wakes++, stopping: () => state.stopping, batchBodyMax: opts.batchBodyMax ?? 1024 * 1024 });
  const app = new Hono();
  app.route('/api/v1', api);
  app.all('*', (c) => c.text('a console page', 200));
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const doc = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as Record<string, any>;
  const w: ApiWorld = {
    url, rt, home, desk, tokens, doc,
    get wakes() { return state.wakes; },
    get stopping() { return state.stopping; },
    set stopping(v: boolean) { state.stopping = v; },
    async call(method, path, o = {}) {
      const token = o.token === undefined ? CONFIG_TOKEN : o.token;
      const res = await fetch(url + path, {
        method,
        headers: { ...(token !== null ? { authorization: `Bearer ${token}` } : {}), ...(o.type ? { 'content-type': o.type } : {}), ...o.headers },
        ...(o.body !== undefined ? { body: o.body } : {}),
      });
      const text = await res.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      if (o.check !== false) await conforms(doc, method, url + path, res, text);
      return { status: res.status, headers: res.headers, text, json };
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
      await rt.close();
    },
  } as ApiWorld;
  worlds.push(w);
  return w;
}

export async function closeWorlds(): Promise<void> {
  for (const w of worlds.splice(0)) await w.close();
}
