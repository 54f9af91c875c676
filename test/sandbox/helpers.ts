/** Starts sandboxes on port 0 and talks to them with plain fetch. */
import { afterEach } from 'vitest';
import { type RunningSandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

export const KEY = 'test-key-0001';
export const OTHER_KEY = 'test-key-0002';

const running: RunningSandbox[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** A hand-driven clock; starts at a whole second so window edges are easy to read. */
export function manualClock(start = Date.UTC(2025, 0, 1)) {
  const c = { t: start, now: () => c.t, set: (ms: number) => { c.t = start + ms; }, advance: (ms: number) => { c.t += ms; } };
  return c;
}

/** Defaults for tests: generous limits, no random failures, nothing left processing. */
export async function start(opts: Partial<SandboxOptions> = {}): Promise<RunningSandbox> {
  const sb = await startSandbox({
    apiKey: KEY,
    rateLimits: [{ limit: 10_000, windowMs: 1000 }],
    ...opts,
    fulfilment: { processingShare: 0, failShare: 0, ...opts.fulfilment },
  });
  running.push(sb);
  return sb;
}

export interface Reply { status: number; body: any; headers: Headers }

export async function call(sb: { url: string }, method: string, path: string, body?: unknown,
  opts: { key?: string | null; headers?: Record<string, string>; raw?: string } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== null) headers['x-api-key'] = opts.key ?? KEY;
  if (body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(sb.url + path, {
    method, headers, body: opts.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

export const get = (sb: { url: string }, path: string, key?: string | null) => call(sb, 'GET', path, undefined, { key });
export const order = (sb: { url: string }, body: unknown, key?: string) => call(sb, 'POST', '/orders', body, { key });

let n = 0;
export const trx = (tag = 'T') => `${tag}-${process.pid}-${++n}`;

export async function admin(sb: RunningSandbox, method: string, op: string, body?: unknown, token = sb.adminToken): Promise<Reply> {
  return call(sb, method, `/__sandbox/${op}`, body, { key: null, headers: { 'x-sandbox-admin': token } });
}

/** A sandbox in the real-world answer style; no proxy 502s unless a test asks for them. */
export async function startRealWorld(opts: Partial<SandboxOptions> = {}): Promise<RunningSandbox> {
  return start({ ...opts, answers: 'real-world', realWorld: { htmlShare: 0, ...opts.realWorld } });
}

export interface RawReply { status: number; type: string | null; headers: Headers; text: string; json: any }

/** Like `call`, but keeps the text: JSON.parse would round a 19-digit id. `json` is undefined for non-JSON. */
export async function raw(sb: { url: string }, method: string, path: string, body?: unknown, key = KEY): Promise<RawReply> {
  const res = await fetch(sb.url + path, {
    method, headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try { json = JSON.parse(text); } catch { json = undefined; }
  return { status: res.status, type: res.headers.get('content-type'), headers: res.headers, text, json };
}

/** Every `orderId` as written in the JSON text: the exact digits (or string). */
export const exactIds = (text: string): string[] => [...text.matchAll(/"orderId":"?([^",}]+)"?/g)].map((m) => m[1] as string);

/** Status words of the real-world style, by the state they stand for (the aliases public clients map). */
export const WORDS: Record<'completed' | 'processing' | 'cancelled', string[]> = {
  completed: ['Completed', 'Success', 'Done'],
  processing: ['Processing', 'Pending', 'Waiting'],
  cancelled: ['Cancelled', 'Canceled', 'Failed', 'Refunded'],
};
export const stateOf = (word: string): string | undefined =>
  (Object.keys(WORDS) as (keyof typeof WORDS)[]).find((k) => WORDS[k].includes(word));
export const isTrue = (v: unknown): boolean => v === true || v === 'true' || v === 1;
export const isFalse = (v: unknown): boolean => v === false || v === 'false' || v === 0;
