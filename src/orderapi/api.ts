/**
 * The order API (/api/v1, docs/order-api.md) as one Hono application, mounted by the console on
 * its listener (console/app.ts) before the console's own guards: a shop sends a bearer token, not
 * a session cookie, so the session gate, the read-only switch, the form parser and the CSRF check
 * are not its guards; auth.ts is. Everything under /api/v1 is answered here (a path the API does
 * not have is a 404 problem, a method it does not take a 405), never by a console page.
 *
 * Every answer is JSON, every error a problem (problem.ts), a failure included: the error handler
 * answers a 500 problem and logs the cause, and never shows it (it may hold paths or SQL).
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { createReadStream, existsSync } from 'node:fs';
import { Readable } from 'node:stream';
import { basename } from 'node:path';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import type { MiddlewareHandler } from 'hono';
import type { Runtime } from '../runtime.js';
import { SCOPES, type OrderDesk, type OrderView, type PlayerCheckDesk } from '../orders/types.js';
import { coerceError, UsageError } from '../kernel/errors.js';
import { bodyCap } from '../console/body.js';
import { requireScopes, type ApiEnv } from './auth.js';
import type { TokenStore } from './tokens.js';
import { fieldProblems, problem, problemResponse, type ProblemInit } from './problem.js';
import { PUBLIC_PATHS, routes } from './routes.js';
import { BatchJsonSchema, BatchQuery, FEED_DEFAULT } from './schemas.js';
import { batchBodyKind, batchFileName, batchView, claimBatchBytes, ordersCsv } from './batches.js';
import { outboxPaths } from '../outbox/paths.js';
import { docsPage } from './docs-page.js';

/** One order is a few hundred bytes; 16 KB leaves room for meta (4 KB) and long player fields. */
export const ORDER_BODY_MAX = 16 * 1024;

export interface OrderApiDeps {
  rt: Runtime;
  desk: OrderDesk;
  /** POST /players/check (orders/desk.ts implements it beside the orders). */
  players: PlayerCheckDesk;
  tokens: TokenStore;
  /** The runner: a batch just claimed is stored and sent at once, not at its next tick. */
  wake(): void;
  /** The daemon is stopping: new batches are refused (503) rather than claimed for nobody. */
  stopping(): boolean;
  /** The console's upload limit (TOPUP_CONSOLE_UPLOAD_MB): a batch is a file. */
  batchBodyMax: number;
  /** Each POST /orders answer, for /metrics (topup_api_orders_total): accepted, same, or the refusal's code. */
  onAnswer?: (answer: string) => void;
}

const tooLarge = (max: number) => () =>
  problemResponse({ status: 413, code: 'BODY_TOO_LARGE', detail: `The body is larger than the ${max >= 1024 * 1024 ? `${Math.round(max / 1024 / 1024)} MB` : `${Math.round(max / 1024)} KB`} this route takes.` });

function validationProblem(target: string, err: import('zod').ZodError, path = ''): Response {
  const errors = fieldProblems(err);
  if (target === 'json' && path.endsWith('/players/check')) return problemResponse({ status: 422, code: 'INVALID_CHECK', detail: `The player check is not valid: ${errors.map((e) => `${e.field || 'body'}: ${e.reason}`).join('; ')}.`.slice(0, 2000), errors });
  if (target === 'json') return problemResponse({ status: 422, code: 'INVALID_ORDER', detail: `The order is not valid: ${errors.map((e) => `${e.field || 'body'}: ${e.reason}`).join('; ')}.`.slice(0, 2000), errors });
  const cursor = errors.some((e) => e.field === 'since');
  // A batch's name has its own code (INVALID_NAME), as when the name fits no file the body can be.
  const name = errors.some((e) => e.field === 'name');
  // INVALID_NAME is 422 wherever it is found (problem.ts: one code, one status).
  return problemResponse({ status: name && !cursor ? 422 : 400, code: cursor ? 'INVALID_CURSOR' : name ? 'INVALID_NAME' : 'INVALID_PARAMETER', detail: errors.map((e) => `${e.field}: ${e.reason}`).join('; '), errors });
}

export function createOrderApi(deps: OrderApiDeps): OpenAPIHono<ApiEnv> {
  const { rt, desk, tokens } = deps;
  const log = rt.log.child({ component: 'order-api' });
  const api = new OpenAPIHono<ApiEnv>({
    defaultHook: (result, c) => (result.success ? undefined : validationProblem(result.target, result.error, c.req.path)),
  });

  api.onError((err, c) => {
    if (err instanceof HTTPException) {
      const status = err.status;
      const init: ProblemInit =
        status === 415 ? { status, code: 'UNSUPPORTED_MEDIA_TYPE', detail: `Content-Type ${c.req.header('content-type') ?? '(none)'} is not one this route takes: send application/json.` }
          : status === 400 && /json/i.test(err.message) ? { status, code: 'MALFORMED_JSON', detail: 'The body is not valid JSON.' }
            : { status, code: status === 400 ? 'BAD_REQUEST' : `HTTP_${status}`, detail: err.message || 'The request could not be handled.' };
      return problem(c, init);
    }
    log.error({ err: coerceError(err).message, method: c.req.method, path: c.req.path }, 'order API: request failed');
    return problem(c, { status: 500, code: 'INTERNAL', detail: 'The daemon failed handling this request (its log has the details). Read the order again, or send the same body again: the same trxid and body answer the same order.' });
  });

  // Headers for every answer: no sniffing, no framing, no caching (orders and codes), and a CSP
  // that lets the docs page use the console's stylesheet and nothing else.
  api.use('*', secureHeaders({
    contentSecurityPolicy: { defaultSrc: ["'none'"], styleSrc: ["'self'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] },
    referrerPolicy: 'no-referrer',
    xFrameOptions: 'DENY',
    strictTransportSecurity: false,
    crossOriginResourcePolicy: 'same-origin',
  }));
  api.use('*', async (c, next) => {
    await next();
    if (!c.res.headers.has('cache-control')) c.res.headers.set('cache-control', 'no-store');
  });

  const auth = (...scopes: Parameters<typeof requireScopes> extends [unknown, ...infer S] ? S : never) => requireScopes(tokens, ...scopes) as MiddlewareHandler;
  const cap = (max: number): MiddlewareHandler => bodyCap(max, tooLarge(max)) as unknown as MiddlewareHandler;
  const r = routes({ auth, cap, orderBodyMax: ORDER_BODY_MAX, batchBodyMax: deps.batchBodyMax });
  const withCodes = (scopes: readonly string[]): boolean => scopes.includes('codes:read');
  const orderAnswer = (order: OrderView, status: 200 | 202) =>
    new Response(JSON.stringify(order), { status, headers: { 'content-type': 'application/json', location: `/api/v1/orders/${encodeURIComponent(order.trxid)}` } });

  api.openapi(r.postOrder, async (c) => {
    const input = c.req.valid('json');
    const out = await desk.accept(input);
    deps.onAnswer?.(out.kind === 'refused' ? out.code : out.kind);
    if (out.kind === 'accepted') return orderAnswer(out.order, 202) as never;
    if (out.kind === 'same') return orderAnswer(out.order, 200) as never;
    // A conflict's order is shown only to a token that may read orders (an adversarial review: a
    // write-only token read any order by posting its trxid with another body).
    const { order: conflicting, ...rest } = out.extra ?? {};
    const extra = conflicting !== undefined && c.get('token').scopes.includes('orders:read') ? { ...rest, order: conflicting } : rest;
    return problem(c, { status: out.status, code: out.code, detail: out.detail, errors: out.problems, extra, ...(out.retryAfterS !== undefined ? { headers: { 'retry-after': String(out.retryAfterS) } } : {}) }) as never;
  });

  api.openapi(r.checkPlayer, async (c) => {
    const out = await deps.players.checkPlayer(c.req.valid('json'));
    if (out.kind === 'found') return c.json(out.view, 200) as never;
    return problem(c, { status: out.status, code: out.code, detail: out.detail, errors: out.problems, extra: out.extra, ...(out.retryAfterS !== undefined ? { headers: { 'retry-after': String(out.retryAfterS) } } : {}) }) as never;
  });

  api.openapi(r.getOrder, (c) => {
    const { trxid } = c.req.valid('param');
    const order = desk.get(trxid, { codes: withCodes(c.get('token').scopes) });
    if (!order) return problem(c, { status: 404, code: 'ORDER_NOT_FOUND', detail: `No API order has the trxid "${trxid.slice(0, 64)}".` }) as never;
    return c.json(order, 200) as never;
  });

  api.openapi(r.feed, (c) => {
    const q = c.req.valid('query');
    return c.json(desk.feed(q.since, q.limit ?? FEED_DEFAULT, { codes: withCodes(c.get('token').scopes) }), 200) as never;
  });

  // POST /batches takes three media types, two of them not JSON: @hono/zod-openapi would run its
  // JSON validator on a CSV body too (and fail it), so the route is documented from its definition
  // and validated here, with the same schemas (BatchQuery, BatchJsonSchema).
  const { middleware: _guards, ...postBatchDoc } = r.postBatch;
  api.openAPIRegistry.registerPath(postBatchDoc);
  api.post('/batches', auth('orders:write'), cap(deps.batchBodyMax), async (c) => {
    const kind = batchBodyKind(c.req.header('content-type'));
    if (!kind) return problem(c, { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', detail: `Content-Type ${c.req.header('content-type') ?? '(none)'} is not a batch: send text/csv, ${'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'} or application/json.` });
    const query = BatchQuery.safeParse(c.req.query());
    if (!query.success) return validationProblem('query', query.error);
    let bytes = new Uint8Array(await c.req.arrayBuffer());
    if (bytes.length === 0) return problem(c, { status: 400, code: 'EMPTY_BODY', detail: 'The batch has no body: send the file (or the JSON array of orders) as the body.' });
    if (kind === 'json') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
      } catch {
        return problem(c, { status: 400, code: 'MALFORMED_JSON', detail: 'The body is not valid JSON (UTF-8).' });
      }
      const orders = BatchJsonSchema.safeParse(parsed);
      if (!orders.success) return validationProblem('json', orders.error);
      bytes = new TextEncoder().encode(ordersCsv(orders.data));
    }
    let name: string;
    try {
      name = batchFileName(query.data.name, kind, rt.clock.now());
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      return problem(c, { status: 422, code: 'INVALID_NAME', detail: err.message, errors: [{ field: 'name', reason: err.message }] });
    }
    if (deps.stopping()) return problem(c, { status: 503, code: 'NOT_ACCEPTING', detail: 'The daemon is stopping: nothing was claimed. Send the batch again once it runs.' });
    const batch = await claimBatchBytes(rt, bytes, name);
    deps.wake();
    log.info({ batch: batch.id, file: name, token: c.get('token').id, duplicateOf: batch.duplicateOf }, 'order API: batch claimed');
    const view = batchView(rt, batch);
    return c.json(view, 202, { location: view.links.self });
  });

  api.openapi(r.getBatch, (c) => {
    const { id } = c.req.valid('param');
    const b = rt.batches.get(id);
    if (!b) return problem(c, { status: 404, code: 'BATCH_NOT_FOUND', detail: `No batch ${id}.` }) as never;
    return c.json(batchView(rt, b), 200) as never;
  });

  api.openapi(r.getResult, (c) => {
    const { id } = c.req.valid('param');
    const b = rt.batches.get(id);
    if (!b) return problem(c, { status: 404, code: 'BATCH_NOT_FOUND', detail: `No batch ${id}.` }) as never;
    const view = batchView(rt, b);
    if (b.state === 'failed') return problem(c, { status: 409, code: 'BATCH_FAILED', detail: `Batch ${id}'s file could not be read, so nothing of it was ordered and it has no result: ${b.fileError ?? 'see its error file in outbox/'}.`, extra: { fileError: b.fileError } }) as never;
    // The day's API batch stays open until its day ends: its partial result (every order so far,
    // the ended ones with their result) is the file of its orders meanwhile (trial s37 D8), marked
    // `topup-result: partial` so a shop never takes it for the final one. A file's batch answers
    // 409 until done, as before: a shop may wait for its 200.
    if (!view.done && b.apiDay !== null && b.state === 'open') {
      const partial = outboxPaths(rt, b).partialFile;
      if (existsSync(partial)) return csvFile(partial, 'partial') as never;
    }
    if (!view.done) return problem(c, { status: 409, code: 'BATCH_NOT_DONE', detail: `Batch ${id} has not finished (${view.counts.pending} pending, ${view.rows} rows): its result is written once every row has ended.`, extra: { state: b.state, rows: view.rows, counts: view.counts } }) as never;
    const path = outboxPaths(rt, b).resultFile;
    if (!existsSync(path)) return problem(c, { status: 404, code: 'RESULT_NOT_FOUND', detail: `Batch ${id} is done, but its result file ${basename(path)} is no longer in outbox/.` }) as never;
    return csvFile(path, 'final') as never;

    function csvFile(file: string, kind: 'final' | 'partial'): Response {
      log.info({ batch: id, token: c.get('token').id, kind }, 'order API: result file read');
      // Streamed: a 100,000-row result is tens of MB.
      const body = Readable.toWeb(createReadStream(file)) as unknown as ReadableStream<Uint8Array>;
      return new Response(body, { status: 200, headers: { 'content-type': 'text/csv; charset=utf-8', 'topup-result': kind, 'content-disposition': `attachment; filename="${basename(file).replace(/[^\w.()-]/g, '_')}"` } });
    }
  });

  const document = () =>
    api.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'topup-runner order API',
        version: '1',
        description: 'Place game top-up orders one at a time or as batches, read them back, and follow their changes. Orders are rows like any file\'s: the same validation, trxid rules, review and results.',
      },
      servers: [{ url: '/api/v1', description: 'this daemon (TOPUP_CONSOLE)' }],
      security: [{ bearer: [] }],
      tags: [{ name: 'orders', description: 'One order at a time.' }, { name: 'batches', description: 'A file over HTTP, handled exactly as an inbox file.' }, { name: 'players', description: 'The supplier\'s player-name check, for a checkout page to show the name before the buyer pays (beyond the Reseller API spec).' }],
    });
  api.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: `TOPUP_ORDER_API_TOKEN (every scope), or a token made with \`topup token create --scope …\` (scopes ${SCOPES.join(', ')}).`,
  });
  let cached: ReturnType<typeof document> | undefined;
  const doc = () => (cached ??= document());
  // The document and its page hold no data: no token, so a shop's tooling can fetch them.
  api.get('/openapi.json', (c) => c.json(doc()));
  api.get('/docs', (c) => c.html(docsPage(doc() as unknown as Record<string, unknown>)));

  // Anything else under /api/v1 is the API's to answer: never a console page or login redirect.
  api.all('*', (c) => {
    const sub = c.req.path.replace(/^\/api\/v1/, '');
    const known = PUBLIC_PATHS.find((p) => p.pattern.test(sub));
    if (known) {
      const allow = [...known.methods, ...(known.methods.includes('GET') ? ['HEAD'] : [])].join(', ');
      return problem(c, { status: 405, code: 'METHOD_NOT_ALLOWED', detail: `${c.req.method} is not taken here: ${allow}.`, headers: { allow } });
    }
    return problem(c, { status: 404, code: 'NOT_FOUND', detail: `There is no ${c.req.path} in the order API (see /api/v1/docs).` });
  });
  return api;
}
