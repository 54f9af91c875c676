/**
 * The answer corpus (test/fixtures/answers/*.json): what real deployments of the Reseller API
 * answer, exactly as it goes on the wire, and what each answer must become through the REAL
 * client (ResellerClient over undici) talking HTTP to a node:http server on 127.0.0.1 that
 * replays it. See test/fixtures/answers/README.md for the format.
 *
 * Every variant also checks, whatever it is about:
 *  - the client sent exactly the variant's request (method, path and query, body);
 *  - what the gate was asked to hold off (nothing unless the variant says so);
 *  - what was reported through onProblem (nothing unless the variant says so);
 *  - the API key (or a cut piece of it) appears nowhere in the result or the error.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResellerClient } from '../../src/api/client.js';
import { ApiError, ApiResponseShapeError } from '../../src/kernel/errors.js';
import { client, countingGate, KEY, serializeThoroughly } from './helpers.js';

interface Variant {
  name: string;
  why?: string;
  request: { method: 'GET' | 'POST'; path: string; body?: Record<string, unknown> };
  response: {
    status: number;
    headers?: Record<string, string>;
    /** The body exactly as sent ({{KEY}} → the canary key). */
    body: string;
    /** Spaces appended after the body (valid JSON stays valid, only bigger). */
    padBytes?: number;
    /** Declared Content-Length; with dropAfterBody the socket closes after the body. */
    contentLength?: number;
    dropAfterBody?: boolean;
  };
  client?: { retryAfterMaxMs?: number };
  expect: {
    placed?: Record<string, unknown>;
    value?: unknown;
    /** Dot paths that must be absent from the result. */
    absent?: string[];
    error?: {
      class: 'ApiError' | 'ApiResponseShapeError';
      classification?: string;
      mayExist?: boolean;
      /** null: no code at all. */
      apiCode?: string | null;
      status?: number | null;
      retryAfterMs?: number | null;
      messageContains?: string;
    };
    /** Substrings, one per onProblem report, in order. */
    problems?: string[];
    holdOffs?: number[];
    holdOffWithin?: [number, number];
  };
}

const DIR = fileURLToPath(new URL('../fixtures/answers/', import.meta.url));
const files = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();
const corpus: (Variant & { file: string })[] = files.flatMap((file) =>
  (JSON.parse(readFileSync(`${DIR}${file}`, 'utf8')) as Variant[]).map((v) => ({ ...v, file })),
);

const fill = (s: string): string =>
  s.replaceAll('{{KEY}}', KEY).replace(/\{\{HTTP_DATE\+(\d+)\}\}/g, (_m, sec: string) => new Date(Date.now() + Number(sec) * 1000).toUTCString());

// ─────────── the replay server: variant i is served under /v<i>/… ───────────

const seen = new Map<number, { method: string; url: string; body: string }>();
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const m = /^\/v(\d+)(\/.*)$/.exec(req.url ?? '');
    const i = Number(m?.[1]);
    const variant = corpus[i];
    let text = '';
    req.on('data', (c: Buffer) => { text += c.toString('utf8'); });
    req.on('end', () => {
      req.socket.on('error', () => {});
      if (!m || !variant) { res.writeHead(599).end(); return; }
      seen.set(i, { method: req.method ?? '', url: m[2]!, body: text });
      const r = variant.response;
      let body = Buffer.from(fill(r.body), 'utf8');
      if (r.padBytes) body = Buffer.concat([body, Buffer.alloc(r.padBytes, 0x20)]);
      const headers = Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, x]) => [k, fill(x)]));
      res.writeHead(r.status, { ...headers, 'content-length': String(r.contentLength ?? body.length) });
      if (r.dropAfterBody) res.write(body, () => req.socket.destroy());
      else res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** The client call a variant's request stands for. */
function call(api: ResellerClient, r: Variant['request']): Promise<unknown> {
  const url = new URL(r.path, 'http://x');
  const p = url.pathname;
  if (r.method === 'POST' && p === '/orders') return api.submitOrder(r.body as never);
  if (p.startsWith('/orders/')) return api.getOrder(decodeURIComponent(p.slice('/orders/'.length)));
  if (p === '/history') {
    const q = url.searchParams;
    if (q.has('page')) return api.history({ page: Number(q.get('page')), ...(q.has('pageSize') ? { pageSize: Number(q.get('pageSize')) } : {}), partial: true });
    // partial: the corpus holds how each shape is read; a money reader refuses a page with unreadable elements (test/order-id/history-unread-entry).
    return api.history({ ...(q.has('limit') ? { limit: Number(q.get('limit')) } : {}), partial: true });
  }
  const reads: Record<string, () => Promise<unknown>> = {
    '/balance': () => api.balance(),
    '/products': () => api.products(),
    '/catalog': () => api.catalog(),
    '/services': () => api.services(),
    '/my-ip': () => api.myIp(),
  };
  const read = reads[p];
  if (!read) throw new Error(`corpus: no client call for ${r.method} ${r.path}`);
  return read();
}

function at(v: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o === null || typeof o !== 'object' ? undefined : (o as Record<string, unknown>)[k]), v);
}

// ─────────── the corpus itself ───────────

describe('answer corpus: shape of the corpus', () => {
  it('holds at least 60 variants, each named once per file, each with one expected outcome', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    for (const file of files) {
      const names = corpus.filter((v) => v.file === file).map((v) => v.name);
      expect(new Set(names).size, `duplicate names in ${file}`).toBe(names.length);
    }
    for (const v of corpus) {
      const outcomes = [v.expect.placed, v.expect.value, v.expect.error].filter((x) => x !== undefined);
      expect(outcomes, `${v.file}: ${v.name}`).toHaveLength(1);
    }
  });

  it('covers proxy/CDN pages for 502, 504 and 520–524 on POST /orders (always in doubt) and on GETs', () => {
    const html = (v: Variant) => (v.response.headers?.['content-type'] ?? '').startsWith('text/html');
    for (const status of [502, 504, 520, 521, 522, 523, 524]) {
      const submit = corpus.filter((v) => v.request.method === 'POST' && v.response.status === status && html(v));
      expect(submit.length, `POST /orders ${status} HTML`).toBeGreaterThan(0);
      for (const v of submit) expect(v.expect.error, v.name).toMatchObject({ classification: 'ambiguous', mayExist: true });
    }
    for (const status of [502, 504, 520, 521, 522, 523, 524]) {
      expect(corpus.some((v) => v.request.method === 'GET' && v.response.status === status && html(v)), `GET ${status} HTML`).toBe(true);
    }
  });
});

describe.each(files)('answer corpus: %s', (file) => {
  const variants = corpus.map((v, i) => ({ v, i })).filter(({ v }) => v.file === file);
  it.each(variants.map(({ v, i }) => [v.name, v, i] as const))('%s', async (_name, v, i) => {
    const gate = countingGate();
    const problems: string[] = [];
    const api = client({ url: `${base}/v${i}` }, { gate, onProblem: (_route, p) => problems.push(p), ...v.client });
    let result: unknown;
    let error: unknown;
    try {
      result = await call(api, v.request);
    } catch (e) {
      error = e;
    }
    const x = v.expect;

    // The client asked exactly what the variant says.
    expect(seen.get(i), 'the request that reached the server').toMatchObject({ method: v.request.method, url: v.request.path });
    if (v.request.body) expect(JSON.parse(seen.get(i)!.body)).toEqual(v.request.body);

    if (x.error) {
      expect(error, `expected ${x.error.class}, resolved with ${JSON.stringify(result)}`).toBeDefined();
      const Class = x.error.class === 'ApiError' ? ApiError : ApiResponseShapeError;
      expect(error, String(error)).toBeInstanceOf(Class);
      const e = error as ApiError;
      if (x.error.classification !== undefined) expect(e.classification, e.message).toBe(x.error.classification);
      if (x.error.mayExist !== undefined) expect(e.mayExist, e.message).toBe(x.error.mayExist);
      if (x.error.apiCode !== undefined) expect(e.apiCode, e.message).toBe(x.error.apiCode ?? undefined);
      if (x.error.status !== undefined) expect(e.status, e.message).toBe(x.error.status ?? undefined);
      if (x.error.retryAfterMs !== undefined) expect(e.retryAfterMs, e.message).toBe(x.error.retryAfterMs ?? undefined);
      if (x.error.messageContains !== undefined) expect(e.message).toContain(x.error.messageContains);
    } else {
      expect(error, `expected a value, failed with ${String(error)}`).toBeUndefined();
      if (x.placed) {
        expect(result).toMatchObject(x.placed);
        // Exactly the digits sent: never a rounded neighbour.
        expect((result as { orderId: unknown }).orderId).toBe(x.placed.orderId);
      }
      if (Array.isArray(x.value)) {
        expect(result).toHaveLength(x.value.length);
        expect(result).toMatchObject(x.value);
      } else if (x.value !== null && typeof x.value === 'object') {
        const want = x.value as { orders?: unknown[] };
        if (want.orders) expect((result as { orders: unknown[] }).orders).toHaveLength(want.orders.length);
        expect(result).toMatchObject(want);
      } else if (x.value !== undefined) {
        expect(result).toBe(x.value);
      }
      for (const path of x.absent ?? []) expect(at(result, path), `${path} must be absent`).toBeUndefined();
    }

    // What was reported, what was held: exactly what the variant says, nothing more.
    expect(problems, 'onProblem reports').toHaveLength(x.problems?.length ?? 0);
    (x.problems ?? []).forEach((p, n) => expect(problems[n]).toContain(p));
    if (x.holdOffWithin) {
      expect(gate.holdOffs).toHaveLength(1);
      expect(gate.holdOffs[0]).toBeGreaterThanOrEqual(x.holdOffWithin[0]);
      expect(gate.holdOffs[0]).toBeLessThanOrEqual(x.holdOffWithin[1]);
    } else {
      expect(gate.holdOffs, 'holdOff calls').toEqual(x.holdOffs ?? []);
    }

    // The key, or a cut piece of it, is nowhere.
    const everything = `${serializeThoroughly(error ?? result)}\n${JSON.stringify(result) ?? ''}\n${problems.join('\n')}`;
    for (const piece of [KEY, KEY.slice(0, 8), KEY.slice(-8)]) expect(everything).not.toContain(piece);
  });
});
