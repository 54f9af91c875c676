/**
 * Issue 30 (5): the document's examples are orders the built-in sandbox accepts. The trial copied
 * the example order (pid "ml-86", slug "mobile-legends") and the first curl of docs/order-api.md
 * against `topup sandbox` and got 422: the sandbox's pack is ML-86 on the line mobilelegends.
 *
 * Real parts: `topup sandbox` as its own process (the built-in sandbox, its default catalog), the
 * real daemon (dist/cli.js) serving the order API, and every request example of the document it
 * serves (each media type's example, or the example of the schema it names) posted to it, with
 * the JSON bodies of docs/order-api.md's curls. Each must be accepted (202, or 200 for a body the
 * page repeats) and end completed: not one row invalid.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, ROOT, sandboxProcess, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { conforms } from './conformance.js';

releaseAfterEach();

const TOKEN = 'examples-test-order-api-token-0123456789';
type Json = Record<string, any>;

/** Every request body example of the document: [operation, media type, body as sent]. */
function requestExamples(doc: Json): { op: string; path: string; type: string; body: string }[] {
  const out: { op: string; path: string; type: string; body: string }[] = [];
  const deref = (s: Json | undefined): Json | undefined => (s?.$ref ? doc.components.schemas[String(s.$ref).split('/').pop()!] : s);
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (method !== 'post') continue;
      for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {})) {
        const example = media.example ?? deref(media.schema)?.example;
        if (example === undefined) continue;
        out.push({ op: op.operationId, path, type, body: typeof example === 'string' ? example : JSON.stringify(example) });
      }
    }
  }
  return out;
}

/** The path under /api/v1 and the JSON body (`-d '…'`) of each curl in docs/order-api.md that sends one. */
function pageBodies(): { path: string; body: string }[] {
  const page = readFileSync(join(ROOT, 'docs', 'order-api.md'), 'utf8');
  return [...page.matchAll(/curl [^`]*?\/api\/v1(\/[a-z/]+)[^`]*?-d '(\{[^']*\})'/g)].map((m) => ({ path: m[1]!, body: m[2]! }));
}

describe('the order API document\'s examples against the built-in sandbox', () => {
  it('accepts every request example of the served document and every curl body of docs/order-api.md, each ending completed', async () => {
    const sandbox = await sandboxProcess(['--fail-share', '0', '--processing-share', '0', '--lost-response-share', '0', '--html-share', '0', '--seed', '30']);
    try {
      const home = tempHome('topup-orderapi-examples-');
      const env = cliEnv(home, sandbox, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
      const daemon = startDaemon(env);
      const url = await consoleUrl(daemon);
      const doc = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as Json;
      const post = async (path: string, type: string, body: string) => {
        const res = await fetch(`${url}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type }, body });
        const text = await res.text();
        await conforms(doc, 'POST', `${url}/api/v1${path}`, res, text);
        return { status: res.status, text, json: JSON.parse(text) };
      };

      const examples = requestExamples(doc);
      // The document has an example for each body an order can come in (one order, a JSON batch, a CSV batch).
      // And the player check's (a player the sandbox knows: answered 200 with the name).
      expect(examples.map((e) => `${e.op} ${e.type}`).sort()).toEqual(['checkPlayer application/json', 'placeBatch application/json', 'placeBatch text/csv', 'placeOrder application/json']);
      const bodies = pageBodies();
      expect(bodies.filter((b) => b.path === '/orders').length).toBeGreaterThan(0);
      expect(bodies.filter((b) => b.path === '/players/check').length).toBeGreaterThan(0);

      const trxids: string[] = [];
      const batches: string[] = [];
      for (const e of examples) {
        const r = await post(e.path, e.type, e.body);
        if (e.op === 'checkPlayer') {
          expect(r.status, `${e.op}: ${r.text}`).toBe(200);
          expect(r.json.playerName).toEqual(expect.any(String));
          continue;
        }
        expect(r.status, `${e.op} ${e.type}: ${r.text}`).toBe(202);
        if (e.op === 'placeOrder') trxids.push(r.json.trxid);
        else batches.push(r.json.id);
      }
      for (const { path, body } of bodies) {
        const r = await post(path, 'application/json', body);
        if (path === '/players/check') {
          expect(r.status, `docs/order-api.md: ${body} → ${r.text}`).toBe(200);
          continue;
        }
        // The page may repeat the document's example order (then it is the same order: 200).
        expect([200, 202], `docs/order-api.md: ${body} → ${r.text}`).toContain(r.status);
        trxids.push(r.json.trxid);
      }

      const get = async (path: string) => (await (await fetch(`${url}/api/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as Json;
      for (const trxid of new Set(trxids)) {
        const order = await waitFor(`order ${trxid} ended`, async () => {
          const o = await get(`/orders/${encodeURIComponent(trxid)}`);
          return ['completed', 'cancelled', 'rejected'].includes(o.status) ? o : undefined;
        }, 120_000, 100);
        expect(order.status, JSON.stringify(order.error)).toBe('completed');
      }
      for (const id of batches) {
        // Until the batch ends either way (finishedAt: done, or failed): a failed batch is never
        // done, and waiting for `done` alone spent 120 s before saying so (a batch the runner had
        // loaded before the API's claim moved its file in: test/orderapi/batch-claim-race.test.ts).
        const b = await waitFor(`batch ${id} ended`, async () => {
          const v = await get(`/batches/${id}`);
          return v.finishedAt !== null ? v : undefined;
        }, 120_000, 200);
        expect({ state: b.state, done: b.done, fileError: b.fileError }).toEqual({ state: 'done', done: true, fileError: null });
        expect(b.counts.completed, JSON.stringify(b.counts)).toBe(b.rows);
        expect(b.rows).toBeGreaterThan(0);
      }
      await daemon.stop();
    } finally {
      await sandbox.stop();
    }
  }, 300_000);
});
