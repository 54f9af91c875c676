/**
 * Conformance-test helpers: sandboxes on 127.0.0.1:0 driven THROUGH ResellerClient.
 * Every sandbox and client made here is closed in afterEach (sandbox first, so a request
 * the sandbox holds open — blackhole, slow — is cut and the client's agent can close).
 */
import { inspect } from 'node:util';
import { afterEach, expect } from 'vitest';
import { type CallGate, type CallInfo, type ClientOptions, ResellerClient } from '../../src/api/client.js';
import { ApiError, type Classification } from '../../src/kernel/errors.js';
import { type RunningSandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/index.js';

/** A canary key: if this string shows up anywhere in an error or a log line, the key leaked. */
export const KEY = 'CANARY-k3y-7f3a9c1e5b2d';
export const OTHER_KEY = 'other-account-key-0002';

const sandboxes: RunningSandbox[] = [];
const clients: ResellerClient[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((s) => s.close()));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const fn of cleanups.splice(0)) await fn();
});

export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

/** Sandbox with the test defaults: generous limits, every top-up completes at once. */
export async function sandbox(opts: Partial<SandboxOptions> = {}): Promise<RunningSandbox> {
  const sb = await startSandbox({
    host: '127.0.0.1',
    port: 0,
    ...(opts.accounts ? {} : { apiKey: KEY }),
    rateLimits: [{ limit: 100_000, windowMs: 1000 }],
    ...opts,
    fulfilment: { processingShare: 0, failShare: 0, ...opts.fulfilment },
  });
  sandboxes.push(sb);
  return sb;
}

export function client(sb: { url: string }, opts: Partial<ClientOptions> = {}): ResellerClient {
  const c = new ResellerClient({ baseUrl: sb.url, apiKey: KEY, timeoutMs: 5000, ...opts });
  clients.push(c);
  return c;
}

/** Sandbox + client on it, the common case. */
export async function setup(opts: Partial<SandboxOptions> = {}, copts: Partial<ClientOptions> = {}) {
  const sb = await sandbox(opts);
  return { sb, api: client(sb, copts) };
}

let n = 0;
export const trx = (tag = 'T') => `${tag}-${process.pid}-${++n}`;

/** Awaits the promise and returns the error it rejects with; fails the test if it resolves. */
export async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail, it succeeded');
}

/** Awaits the promise, expects an ApiError, checks its classification and returns it. */
export async function apiFailure(p: Promise<unknown>, classification: Classification): Promise<ApiError> {
  const err = await failure(p);
  expect(err).toBeInstanceOf(ApiError);
  const e = err as ApiError;
  expect(e.code).toBe('E_API');
  expect(e.classification, `${e.message}`).toBe(classification);
  return e;
}

/** A fake gate that counts and records what it is asked. */
export function countingGate(): CallGate & { calls: CallInfo[]; holdOffs: number[]; events: string[] } {
  const g = {
    calls: [] as CallInfo[],
    holdOffs: [] as number[],
    events: [] as string[],
    async acquire(call: CallInfo) {
      g.calls.push(call);
      g.events.push(`acquire:${call.route}`);
    },
    holdOff(ms: number) {
      g.holdOffs.push(ms);
      g.events.push(`holdOff:${ms}`);
    },
  };
  return g;
}

/** Charges and orders of the (only/first) account in the sandbox ledger. */
export function money(sb: RunningSandbox) {
  const l = sb.admin.ledger();
  return {
    orders: l.orders.length,
    charges: l.entries.filter((e) => e.kind === 'charge').length,
    refunds: l.entries.filter((e) => e.kind === 'refund').length,
    balances: l.balances,
  };
}

/**
 * Everything an error could reveal: every own property (enumerable or not, string or symbol
 * keyed) recursively incl. `cause`, the prototype getters (`reason`), the message and stack,
 * String(err) and util.inspect with hidden properties.
 */
export function serializeThoroughly(err: unknown): string {
  const seen = new Set<unknown>();
  const walk = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object') return typeof v === 'function' ? `[fn ${v.name}]` : typeof v === 'symbol' ? String(v) : v;
    if (seen.has(v) || depth > 12) return '[seen]';
    seen.add(v);
    const out: Record<string, unknown> = {};
    for (const k of Reflect.ownKeys(v)) {
      let val: unknown;
      try { val = (v as Record<string | symbol, unknown>)[k]; } catch (e) { val = `[throws ${String(e)}]`; }
      out[String(k)] = walk(val, depth + 1);
    }
    // Getters on the prototype chain (e.g. ApiError.reason).
    for (let p = Object.getPrototypeOf(v); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const k of Object.getOwnPropertyNames(p)) {
        const d = Object.getOwnPropertyDescriptor(p, k);
        if (d?.get && !(k in out)) {
          try { out[k] = walk(d.get.call(v), depth + 1); } catch { /* not applicable */ }
        }
      }
    }
    return out;
  };
  const e = err as { stack?: unknown; message?: unknown };
  return [
    JSON.stringify(walk(err, 0)),
    JSON.stringify(err, Object.getOwnPropertyNames(err as object)),
    inspect(err, { depth: 10, showHidden: true }),
    String(e?.stack),
    String(e?.message),
    String(err),
  ].join('\n');
}
