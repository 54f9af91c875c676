/**
 * The routes of /api/v1 as @hono/zod-openapi route definitions: each names its method, path,
 * scopes, request schemas and EVERY answer it can give (status, content type, schema). The same
 * definitions register the handlers (validation included) and generate openapi.json, and the
 * tests look each answer they receive up here (test/orderapi/conformance.ts).
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import {
  BatchIdParam,
  BatchJsonSchema,
  BatchQuery,
  BatchViewSchema,
  FeedPageSchema,
  FeedQuery,
  OrderInputSchema,
  OrderViewSchema,
  PlayerCheckInputSchema,
  PlayerCheckSchema,
  EXAMPLE_CSV,
  ProblemSchema,
  TrxidParam,
} from './schemas.js';
import { XLSX_TYPE } from './batches.js';
import type { Scope } from '../orders/types.js';
import { PROBLEM_TYPE } from './problem.js';

const problemContent = { [PROBLEM_TYPE]: { schema: ProblemSchema } };
const problems = (...list: [number, string][]) =>
  Object.fromEntries(list.map(([status, description]) => [status, { description, content: problemContent }])) as Record<number, { description: string; content: typeof problemContent }>;

/** Every route's guards that are not validation: the token (and for bodies, the size cap). */
export interface RouteGuards {
  auth(...scopes: Scope[]): MiddlewareHandler;
  cap(maxBytes: number): MiddlewareHandler;
  orderBodyMax: number;
  batchBodyMax: number;
}

const AUTH_PROBLEMS = problems([401, 'No token, or a wrong one (WWW-Authenticate: Bearer).'], [403, 'The token lacks a scope the route needs (INSUFFICIENT_SCOPE).']);
const ALWAYS = problems([500, 'The daemon failed (its log has the details); nothing about the order should be assumed: read it again.']);

export function routes(g: RouteGuards) {
  const location = z.object({ Location: z.string().openapi({ description: 'The order\'s URL.', example: '/api/v1/orders/shop-A-1001' }) });
  const retryAfter = z.object({ 'Retry-After': z.string().openapi({ description: 'Seconds to wait before asking again.', example: '30' }) });

  const postOrder = createRoute({
    method: 'post',
    path: '/orders',
    operationId: 'placeOrder',
    summary: 'Place one order',
    description: 'Validated against the live catalog like a file row and stored durably before the answer: 202 accepted (new), 200 the same trxid with the same body (the order it already is), 409 the same trxid with another body. Scope orders:write.',
    tags: ['orders'],
    security: [{ bearer: ['orders:write'] }],
    middleware: [g.auth('orders:write'), g.cap(g.orderBodyMax)],
    request: { body: { required: true, content: { 'application/json': { schema: OrderInputSchema } } } },
    responses: {
      202: { description: 'Accepted: stored durably just now.', headers: location, content: { 'application/json': { schema: OrderViewSchema } } },
      200: { description: 'The same trxid with the same body: the order it already is.', headers: location, content: { 'application/json': { schema: OrderViewSchema } } },
      ...problems(
        [400, 'The body is not JSON (MALFORMED_JSON).'],
        [402, 'The balance cannot cover the order now (INSUFFICIENT_BALANCE); send queue: true to have it wait for a top-up.'],
        [409, 'The trxid was used with another body (TRXID_CONFLICT) or by an earlier order (TRXID_USED).'],
        [413, `The body is larger than ${g.orderBodyMax} bytes (BODY_TOO_LARGE).`],
        [415, 'The body is not application/json (UNSUPPORTED_MEDIA_TYPE).'],
        [422, 'The order is not valid (INVALID_ORDER, CALLBACK_NOT_ALLOWED): errors names each field; or its player check says the player does not exist (PLAYER_NOT_FOUND, naming userId / zoneId), or its game has no check (NO_PLAYER_CHECK, naming checkPlayer). Nothing was stored.'],
        [502, 'The supplier refused the player check itself (PLAYER_CHECK_REFUSED). Nothing was stored; not "not found".'],
        [503, 'The catalog or the balance cannot be read now (CATALOG_UNAVAILABLE, BALANCE_UNAVAILABLE), the player check got no usable answer (PLAYER_CHECK_IN_DOUBT, Retry-After), or no order is taken now (NOT_ACCEPTING): nothing was stored; send the same order again later.'],
      ),
      429: { description: 'The player check could not be made now: the account\'s call budget (PLAYER_CHECK_RATE_LIMITED). Nothing was stored; not "not found".', headers: retryAfter, content: problemContent },
      ...AUTH_PROBLEMS,
      ...ALWAYS,
    },
  });

  const getOrder = createRoute({
    method: 'get',
    path: '/orders/{trxid}',
    operationId: 'getOrder',
    summary: 'Read one order',
    description: 'Its status, the supplier\'s order id, pack, money, error, refund, every change of status with its time; its codes only for a token with codes:read. Scope orders:read.',
    tags: ['orders'],
    security: [{ bearer: ['orders:read'] }],
    middleware: [g.auth('orders:read')],
    request: { params: TrxidParam },
    responses: {
      200: { description: 'The order.', content: { 'application/json': { schema: OrderViewSchema } } },
      ...problems([400, 'The trxid is not one (INVALID_PARAMETER).'], [404, 'No API order has this trxid (ORDER_NOT_FOUND).']),
      ...AUTH_PROBLEMS,
      ...ALWAYS,
    },
  });

  const feed = createRoute({
    method: 'get',
    path: '/orders',
    operationId: 'listOrderEvents',
    summary: 'The change feed',
    description: 'Every change of status of API orders after the cursor, oldest first: for a shop that polls instead of taking webhooks. Pass the page\'s next as since to read on. Scope orders:read.',
    tags: ['orders'],
    security: [{ bearer: ['orders:read'] }],
    middleware: [g.auth('orders:read')],
    request: { query: FeedQuery },
    responses: {
      200: { description: 'A page of events (empty when nothing is new; next is then the same cursor).', content: { 'application/json': { schema: FeedPageSchema } } },
      ...problems([400, 'since is not a cursor (INVALID_CURSOR), or limit is not a whole number within its bounds (INVALID_PARAMETER).']),
      ...AUTH_PROBLEMS,
      ...ALWAYS,
    },
  });

  const postBatch = createRoute({
    method: 'post',
    path: '/batches',
    operationId: 'placeBatch',
    summary: 'Place a batch (a file over HTTP)',
    description: 'A CSV body, an .xlsx body, or a JSON array of orders: handled exactly as a file dropped into the inbox (the same validation, the same duplicate rule, one result row per input row in outbox/). Answered 202 with the batch\'s id once claimed; follow it with GET /batches/{id}. Scope orders:write.',
    tags: ['batches'],
    security: [{ bearer: ['orders:write'] }],
    middleware: [g.auth('orders:write'), g.cap(g.batchBodyMax)],
    request: {
      query: BatchQuery,
      body: {
        required: true,
        content: {
          // minLength 1: an empty body is refused (EMPTY_BODY), and the document says so.
          'text/csv': { schema: z.string().min(1).openapi({ description: 'An order file, as for the inbox (docs/input-files.md).' }), example: EXAMPLE_CSV },
          [XLSX_TYPE]: { schema: z.string().min(1).openapi({ format: 'binary', description: 'An Excel workbook, as for the inbox.' }) },
          'application/json': { schema: BatchJsonSchema },
        },
      },
    },
    responses: {
      202: { description: 'Claimed: the batch is stored and ordered by the daemon.', headers: z.object({ Location: z.string().openapi({ description: 'The batch\'s URL.', example: '/api/v1/batches/b251126-3fa9c1' }) }), content: { 'application/json': { schema: BatchViewSchema } } },
      ...problems(
        [400, 'The body is empty or not JSON (EMPTY_BODY, MALFORMED_JSON).'],
        [413, `The body is larger than the console's upload limit, ${Math.round(g.batchBodyMax / 1024 / 1024)} MB (BODY_TOO_LARGE).`],
        [415, 'Not text/csv, the .xlsx type or application/json (UNSUPPORTED_MEDIA_TYPE).'],
        [422, 'A JSON array whose orders are not valid (INVALID_ORDER): errors names each field as [index].field; or name is not a usable file name (INVALID_NAME: see the name parameter\'s pattern — a path in it, nothing a file name can keep, or the wrong extension; .xlsx only for a workbook body).'],
        [503, 'The daemon is stopping (NOT_ACCEPTING): send it again later.'],
      ),
      ...AUTH_PROBLEMS,
      ...ALWAYS,
    },
  });

  const getBatch = createRoute({
    method: 'get',
    path: '/batches/{id}',
    operationId: 'getBatch',
    summary: 'Read a batch',
    description: 'Its state, counts per row state, why it waits, and its result file once done. Scope orders:read.',
    tags: ['batches'],
    security: [{ bearer: ['orders:read'] }],
    middleware: [g.auth('orders:read')],
    request: { params: BatchIdParam },
    responses: {
      200: { description: 'The batch.', content: { 'application/json': { schema: BatchViewSchema } } },
      ...problems([400, 'Not a batch id (INVALID_PARAMETER).'], [404, 'No such batch (BATCH_NOT_FOUND).']),
      ...AUTH_PROBLEMS,
      ...ALWAYS,
    },
  });

  const getResult = createRoute({
    method: 'get',
    path: '/batches/{id}/result',
    operationId: 'getBatchResult',
    summary: 'A batch\'s result file',
    description: 'The result CSV (one row per input row) once the batch is done; header topup-result: final. The order API\'s day batch (api-YYYY-MM-DD) stays open until its day ends: meanwhile its partial result is answered (every order so far, those not ended yet as pending or in progress; rewritten at most every TOPUP_PARTIAL_RESULT_MS), with topup-result: partial. It holds the codes of key/card orders: scopes orders:read and codes:read.',
    tags: ['batches'],
    security: [{ bearer: ['orders:read', 'codes:read'] }],
    middleware: [g.auth('orders:read', 'codes:read')],
    request: { params: BatchIdParam },
    responses: {
      200: { description: 'The result file (topup-result: final), or the open day batch\'s partial result (topup-result: partial).', content: { 'text/csv': { schema: z.string() } } },
      ...problems(
        [400, 'Not a batch id (INVALID_PARAMETER).'],
        [404, 'No such batch (BATCH_NOT_FOUND), or its result file is gone from outbox/ (RESULT_NOT_FOUND).'],
        [409, 'Not done yet (BATCH_NOT_DONE, with its counts; the day\'s API batch only before its first partial result is written), or the file could not be read (BATCH_FAILED: nothing was ordered, fileError says why).'],
      ),
      ...AUTH_PROBLEMS,
      ...ALWAYS,
    },
  });

  const checkPlayer = createRoute({
    method: 'post',
    path: '/players/check',
    operationId: 'checkPlayer',
    summary: 'Check a player before the buyer pays',
    description: 'The supplier\'s player-name check (PUBG Mobile: POST /pubgvvfy; Mobile Legends: POST /mlvfy; beyond the Reseller API spec, docs/player-checks.md): 200 with the in-game name for a checkout page to show before the customer pays, or 422 PLAYER_NOT_FOUND. A check never places an order. It may be charged by the supplier\'s tariff: an answer is kept (TOPUP_PLAYER_CHECK_CACHE_DAYS) and a repeat is answered from it; a repeat within a minute of a check that settled nothing (429, 502, 503) is answered as that check was, without a new call. Scope players:check.',
    tags: ['players'],
    security: [{ bearer: ['players:check'] }],
    middleware: [g.auth('players:check'), g.cap(g.orderBodyMax)],
    request: { body: { required: true, content: { 'application/json': { schema: PlayerCheckInputSchema } } } },
    responses: {
      200: { description: 'The player exists: the name to show (cached: the answer kept from an earlier check, no call now).', content: { 'application/json': { schema: PlayerCheckSchema } } },
      ...problems(
        [400, 'The body is not JSON (MALFORMED_JSON).'],
        [413, `The body is larger than ${g.orderBodyMax} bytes (BODY_TOO_LARGE).`],
        [415, 'The body is not application/json (UNSUPPORTED_MEDIA_TYPE).'],
        [422, 'The supplier says no player has this id (PLAYER_NOT_FOUND: errors names userId, and zoneId for Mobile Legends); the game has no check (NO_PLAYER_CHECK); or the request is not valid (INVALID_CHECK: errors names each field).'],
      ),
      429: { description: 'The check could not be made now: the supplier account\'s call budget (PLAYER_CHECK_RATE_LIMITED). Nothing is known about the player: not "not found".', headers: retryAfter, content: problemContent },
      502: { description: 'The supplier refused the check itself: the key, the account, a supplier without the check (PLAYER_CHECK_REFUSED). Not "not found".', content: problemContent },
      503: { description: 'No usable answer from the supplier (PLAYER_CHECK_IN_DOUBT, Retry-After), or the catalog cannot be read to find a pid\'s game (CATALOG_UNAVAILABLE). Nothing is known about the player: not "not found".', headers: z.object({ 'Retry-After': z.string().optional().openapi({ description: 'Seconds to wait before asking again (PLAYER_CHECK_IN_DOUBT).', example: '30' }) }), content: problemContent },
      ...AUTH_PROBLEMS,
      ...ALWAYS,
    },
  });

  return { postOrder, getOrder, feed, postBatch, getBatch, getResult, checkPlayer };
}

export type ApiRoutes = ReturnType<typeof routes>;

/** The paths and methods of /api/v1 (for 405 and the checker), openapi.json and docs included. */
export const PUBLIC_PATHS: readonly { pattern: RegExp; methods: readonly string[] }[] = [
  { pattern: /^\/orders$/, methods: ['GET', 'POST'] },
  { pattern: /^\/orders\/[^/]+$/, methods: ['GET'] },
  { pattern: /^\/batches$/, methods: ['POST'] },
  { pattern: /^\/batches\/[^/]+$/, methods: ['GET'] },
  { pattern: /^\/batches\/[^/]+\/result$/, methods: ['GET'] },
  { pattern: /^\/players\/check$/, methods: ['POST'] },
  { pattern: /^\/openapi\.json$/, methods: ['GET'] },
  { pattern: /^\/docs$/, methods: ['GET'] },
];
