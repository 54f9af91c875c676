/**
 * The API key never appears in a thrown error or a log line. For every failure class the error
 * is serialized every way we know (own props incl. non-enumerable and `cause`, prototype getters,
 * util.inspect with hidden props, stack) and searched for the canary key.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/kernel/log.js';
import { client, failure, KEY, onCleanup, OTHER_KEY, sandbox, serializeThoroughly, setup, trx } from './helpers.js';

const pubg = () => ({ pid: 'PUBG-60', trxid: trx(), userId: '5123456' });

interface Case { name: string; classification: string; make: (auth: 'x-api-key' | 'bearer') => Promise<unknown> }

/** Each case returns the error thrown by a client holding the canary key. */
const cases: Case[] = [
  {
    name: 'rejected (400 UNKNOWN PID)', classification: 'rejected',
    make: async (auth) => { const { api } = await setup({}, { auth }); return failure(api.submitOrder({ ...pubg(), pid: 'NOPE' })); },
  },
  {
    name: 'insufficient-balance (400 INSUFFICIENT BALANCE, cancelled shape)', classification: 'insufficient-balance',
    make: async (auth) => { const { api } = await setup({ balanceUsd: 0 }, { auth }); return failure(api.submitOrder(pubg())); },
  },
  {
    name: 'account (403 ACCOUNT_BANNED)', classification: 'account',
    make: async (auth) => { const { sb, api } = await setup({}, { auth }); sb.admin.setAccount({ state: 'banned' }); return failure(api.balance()); },
  },
  {
    name: 'account (401 INVALID_API_KEY: the canary itself is the unknown key)', classification: 'account',
    make: async (auth) => { const sb = await sandbox({ accounts: [{ apiKey: OTHER_KEY }] }); return failure(client(sb, { auth }).submitOrder(pubg())); },
  },
  {
    name: 'forbidden (403 FORBIDDEN)', classification: 'forbidden',
    make: async (auth) => {
      const sb = await sandbox({ accounts: [{ apiKey: OTHER_KEY }, { apiKey: KEY }] });
      const body = pubg();
      await client(sb, { apiKey: OTHER_KEY }).submitOrder(body);
      return failure(client(sb, { auth }).submitOrder(body));
    },
  },
  {
    name: 'retry-later (429 RATE_LIMIT)', classification: 'retry-later',
    make: async (auth) => {
      const { api } = await setup({ faults: { forceRateLimit: { remaining: 1, retryAfterSec: 2, format: 'seconds' } } }, { auth });
      return failure(api.balance());
    },
  },
  {
    name: 'paused (503 MAINTENANCE)', classification: 'paused',
    make: async (auth) => { const { api } = await setup({ faults: { maintenance: { code: 'MAINTENANCE' } } }, { auth }); return failure(api.submitOrder(pubg())); },
  },
  {
    name: 'ambiguous (lost response: socket destroyed)', classification: 'ambiguous',
    make: async (auth) => { const { api } = await setup({ faults: { lostResponseShare: 1 } }, { auth }); return failure(api.submitOrder(pubg())); },
  },
  {
    name: 'ambiguous (500 after create)', classification: 'ambiguous',
    make: async (auth) => { const { api } = await setup({ faults: { error5xxAfterShare: 1 } }, { auth }); return failure(api.submitOrder(pubg())); },
  },
  {
    name: 'ambiguous (timeout against blackhole)', classification: 'ambiguous',
    make: async (auth) => { const { api } = await setup({ faults: { blackhole: true } }, { auth, timeoutMs: 200 }); return failure(api.submitOrder(pubg())); },
  },
  {
    name: 'ambiguous (connection refused)', classification: 'ambiguous',
    make: async (auth) => { const sb = await sandbox(); await sb.close(); return failure(client(sb, { auth }).balance()); },
  },
  {
    name: 'not-found (404 ORDER NOT FOUND)', classification: 'not-found',
    make: async (auth) => { const { api } = await setup({}, { auth }); return failure(api.getOrder('ORD404')); },
  },
  {
    name: 'response shape (ApiResponseShapeError)', classification: '(shape)',
    make: async (auth) => {
      const server = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"success":true,"balanceUsd":"x"}'); });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      onCleanup(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
      return failure(client({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, { auth }).balance());
    },
  },
];

describe('§5.1 the API key never appears in a thrown error', () => {
  it('§5.1 control: the serializer finds a key hidden in a non-enumerable nested cause', () => {
    const inner = new Error('inner');
    Object.defineProperty(inner, 'request', { value: { headers: { 'x-api-key': KEY } }, enumerable: false });
    const outer = new Error('outer', { cause: { wrapped: inner } });
    expect(serializeThoroughly(outer)).toContain(KEY);
  });

  for (const auth of ['x-api-key', 'bearer'] as const) {
    for (const c of cases) {
      it(`§5.1 ${auth}: ${c.name}`, async () => {
        const err = await c.make(auth);
        const e = err as { classification?: string; code?: string };
        if (c.classification === '(shape)') expect(e.code).toBe('E_API_RESPONSE_SHAPE');
        else expect(e.classification).toBe(c.classification);
        const text = serializeThoroughly(err);
        expect(text.length).toBeGreaterThan(100);
        expect(text).toContain(e.code ?? 'E_API');
        expect(text).not.toContain(KEY);
      });
    }
  }
});

describe('§5.1 a pino logger logging the errors never writes the key (redact + scrub hook)', () => {
  function captured() {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: [KEY], destination: { write: (s: string) => { lines.push(s); } } });
    return { logger, lines };
  }

  it('§5.1: every failure class logged as { err } — and a key placed in message text is scrubbed', async () => {
    const { logger, lines } = captured();
    const errors: unknown[] = [];
    for (const c of cases) errors.push(await c.make('x-api-key'));
    for (const err of errors) logger.error({ err }, 'API call failed');
    logger.warn(`the key ${KEY} was pasted into a message`);
    logger.error({ err: new Error(`boom with ${KEY} inside`) }, 'wrapped');
    logger.info({ apiKey: KEY, headers: { 'x-api-key': KEY, authorization: `Bearer ${KEY}` } }, 'fields that hold the key');
    logger.info({ detail: { nested: `Bearer ${KEY}` } }, 'free text in a nested field');
    expect(lines).toHaveLength(errors.length + 4);
    for (const line of lines) expect(line).not.toContain(KEY);
    expect(lines[errors.length]).toContain('the key [REDACTED] was pasted');
    expect(lines[errors.length + 1]).toContain('boom with [REDACTED] inside');
    expect(lines.slice(0, errors.length).every((l) => l.includes('"err"'))).toBe(true);
  });

  it('§5.1 control: without the secret configured, the same message line would carry the key', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', secrets: [], destination: { write: (s: string) => { lines.push(s); } } });
    logger.warn(`the key ${KEY} was pasted into a message`);
    expect(lines.join('')).toContain(KEY);
  });
});
