/**
 * Issue 30 (5): what Schemathesis found, as a property. Requests are generated from the document
 * the API SERVES (GET /api/v1/openapi.json, not the zod schemas behind it): every operation, its
 * parameters and each of its request bodies, every value within the document's rules. None may be
 * refused for a rule the document does not state, and every answer must be one the document
 * names (conformance.ts). Found before: limit=0 refused while the document stated no bound, a
 * batch name refused that the document allowed.
 *
 * The order desk is test/orderapi/world.ts's fake (the catalog, the balance and the trxid's
 * history are the engine's, stated in the document's descriptions; this is the HTTP layer's
 * promise). Its refusals (trxid `poor-…` 402, `bad-…` 422) are answers, not rule refusals.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { apiWorld, closeWorlds, type ApiWorld } from './world.js';
import { arbitraryOf } from './schema-arbitrary.js';

afterAll(closeWorlds);

type Json = Record<string, any>;
interface Request { method: string; path: string; query: Record<string, string>; type?: string; body?: string | Uint8Array; params: Record<string, unknown>; value?: unknown }

/** The operation's requests as the document allows them. */
function requestsOf(doc: Json, template: string, method: string): fc.Arbitrary<Request> {
  const op = doc.paths[template][method] as Json;
  const params = (op.parameters ?? []) as Json[];
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of params) model[p.name] = p.required ? arbitraryOf(p.schema, doc) : fc.option(arbitraryOf(p.schema, doc), { nil: undefined });
  const bodies = Object.entries<Json>(op.requestBody?.content ?? {});
  const body = bodies.length === 0 ? fc.constant(undefined) : fc.oneof(...bodies.map(([type, media]) => arbitraryOf(media.schema, doc).map((value) => ({ type, value }))));
  return fc.record({ p: fc.record(model), b: body }).map(({ p, b }) => {
    let path = template;
    const query: Record<string, string> = {};
    for (const def of params) {
      const v = p[def.name];
      if (v === undefined) continue;
      if (def.in === 'path') path = path.replace(`{${def.name}}`, encodeURIComponent(String(v)));
      else query[def.name] = String(v);
    }
    const req: Request = { method: method.toUpperCase(), path, query, params: p };
    if (b) {
      req.type = b.type;
      req.value = b.value;
      req.body = b.type === 'application/json' ? JSON.stringify(b.value) : String(b.value);
    }
    return req;
  });
}

/**
 * Known refusals that the document cannot state, each named. (The trxid's rules are stated:
 * the document publishes kernel/identity.ts's TRXID_PATTERN and maxLength.)
 */
function excluded(req: Request): string | undefined {
  // "." and ".." are dot segments: a URL cannot carry them as a path segment (fetch, like every
  // client, removes them, even as %2E), so such a trxid can be placed but not read by its URL.
  if (req.params.trxid === '.' || req.params.trxid === '..') return 'a dot segment cannot be a path segment';
  return undefined;
}

/** Why the answer is a refusal the document does not state, or undefined. */
function unstated(req: Request, status: number, json: Json | undefined): string | undefined {
  if (status >= 500) return `a ${status}`;
  if (status !== 400 && status !== 422) return undefined;
  const code = json?.code;
  // Stated in the name parameter's description: .xlsx only for a workbook body, the others not for one.
  if (code === 'INVALID_NAME' && req.query.name !== undefined) {
    const xlsxName = /\.xlsx$/i.test(req.query.name);
    const xlsxBody = req.type === 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    const hasExt = /\.(csv|tsv|txt|xlsx)$/i.test(req.query.name);
    if ((xlsxName && !xlsxBody) || (xlsxBody && hasExt && !xlsxName)) return undefined;
  }
  // The fake catalog's refusal (a `bad-` trxid), stated as the catalog's in the document.
  const trxids = [(req.value as Json | undefined)?.trxid];
  if (code === 'INVALID_ORDER' && trxids.some((t) => typeof t === 'string' && t.trim().startsWith('bad-'))) return undefined;
  // The fake's player not found (a `nobody-` user id): the supplier's answer, not a rule.
  if (code === 'PLAYER_NOT_FOUND' && String((req.value as Json | undefined)?.userId ?? '').startsWith('nobody-')) return undefined;
  return `${status} ${code}: ${json?.detail}`;
}

describe('requests generated from the served OpenAPI document', () => {
  let w: ApiWorld;
  it('the served document has operations to generate for', async () => {
    w = await apiWorld({ batchBodyMax: 1024 * 1024 });
    const ops = Object.entries<Json>(w.doc.paths).flatMap(([t, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${t}`));
    expect(ops.sort()).toEqual(['GET /batches/{id}', 'GET /batches/{id}/result', 'GET /orders', 'GET /orders/{trxid}', 'POST /batches', 'POST /orders', 'POST /players/check']);
  });

  const OPERATIONS: [string, string][] = [['/orders', 'post'], ['/orders', 'get'], ['/orders/{trxid}', 'get'], ['/batches', 'post'], ['/batches/{id}', 'get'], ['/batches/{id}/result', 'get'], ['/players/check', 'post']];
  for (const [template, method] of OPERATIONS) {
    it(`${method.toUpperCase()} ${template}: no schema-valid request is refused for a rule the document does not state`, async () => {
      const seenStatus = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(requestsOf(w.doc, template, method).filter((r) => excluded(r) === undefined), async (req) => {
          const qs = new URLSearchParams(req.query).toString();
          const res = await w.call(req.method, `/api/v1${req.path}${qs ? `?${qs}` : ''}`, { ...(req.body !== undefined ? { body: req.body, type: req.type } : {}) });
          seenStatus.set(res.status, (seenStatus.get(res.status) ?? 0) + 1);
          const why = unstated(req, res.status, res.json);
          expect(why, `${req.method} ${req.path}?${qs} ${req.type ?? ''} ${typeof req.body === 'string' ? req.body.slice(0, 300) : ''}`).toBeUndefined();
        }),
        { numRuns: 150 },
      );
      // The property ran against the real handlers: answers other than refusals came back.
      expect([...seenStatus.keys()].some((s) => s < 300 || s === 404)).toBe(true);
    }, 120_000);
  }
});
