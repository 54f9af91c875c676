/**
 * The order API's shapes as zod schemas: THE description of what /api/v1 takes and answers. The
 * same objects validate the requests (routes.ts, through @hono/zod-openapi) and generate the
 * OpenAPI 3.1 document (openapi.json), so the document cannot drift from what is enforced; the
 * tests hold every answer the API gives to the response schema the document names for it.
 *
 * The TypeScript shapes are src/orders/types.ts (the desk's contract); a type check below ties
 * each schema to its interface, so a field added there and not here fails the build.
 */
import { jsonDepth } from '../kernel/json-depth.js';
import { inCheckSpace, isWellFormed, NOT_WELL_FORMED, TRXID_MAX_LENGTH, TRXID_PATTERN, trxidProblem } from '../kernel/identity.js';
import { z } from '@hono/zod-openapi';
import { ROW_STATES } from '../store/row-states.js';
import { BATCH_STATES } from '../store/batch-states.js';
import { PUBLIC_STATUSES, SCOPES, type OrderEvent, type OrderInput, type OrderView, type FeedPage, type OrderEventType, type PlayerCheckInput, type PlayerCheckView } from '../orders/types.js';

/** meta is carried through to results, views and webhooks: bounded, so one order cannot bloat them. */
export const META_MAX_BYTES = 4096;
/**
 * A trxid is the supplier's idempotency key. Its rule is kernel/identity.ts's, the one a file's
 * trxid keeps: the server checks TRXID_PATTERN and the document publishes the same pattern and
 * maxLength (code points, as JSON Schema counts and the pattern's unicode mode does). A lone
 * surrogate is named as such before the pattern speaks (one reason per field).
 */
const TRXID = z
  .string()
  .trim()
  .refine(isWellFormed, { message: NOT_WELL_FORMED, abort: true })
  .min(1, { message: 'must not be empty', abort: true })
  .regex(TRXID_PATTERN, { error: (iss) => trxidProblem(String(iss.input)) ?? 'is not a trxid', abort: true })
  // Folded (NFKC, case), `－CHK-…` is a player check's trxid: the pattern cannot say it, the rule does.
  .refine((v) => !inCheckSpace(v), { error: (iss) => trxidProblem(String(iss.input)) ?? 'is a player check\'s trxid' })
  // The generator would write the flags into the pattern (`…$/u`): the source alone, which JSON Schema reads in unicode mode.
  .openapi({ maxLength: TRXID_MAX_LENGTH, pattern: TRXID_PATTERN.source });
/** Every identity (player fields, pid, account) is well-formed text: a lone surrogate cannot be stored or sent as itself. */
const CELL = (max = 128) => z.string().max(max, `at most ${max} characters`).refine(isWellFormed, NOT_WELL_FORMED);

/** Whether every string in a JSON value (keys too) is well-formed text. */
function wellFormedJson(v: unknown): boolean {
  if (typeof v === 'string') return isWellFormed(v);
  if (Array.isArray(v)) return v.every(wellFormedJson);
  if (typeof v === 'object' && v !== null) return Object.entries(v).every(([k, x]) => isWellFormed(k) && wellFormedJson(x));
  return true;
}

/** Nesting deeper than this is refused before anything walks it recursively (JSON.stringify, the body hash). */
export const META_MAX_DEPTH = 32;

const metaSchema = z
  .record(z.string(), z.unknown())
  .refine((m) => jsonDepth(m, META_MAX_DEPTH) <= META_MAX_DEPTH, { message: `must be nested at most ${META_MAX_DEPTH} levels deep`, abort: true })
  .refine((m) => Buffer.byteLength(JSON.stringify(m), 'utf8') <= META_MAX_BYTES, `must be at most ${META_MAX_BYTES} bytes as JSON`)
  .refine(wellFormedJson, 'holds text that is not well-formed (half of a UTF-16 surrogate pair, which cannot be stored or carried as itself)')
  .openapi({ description: `Your own data, carried through untouched to the result, the order's view and its webhooks (at most ${META_MAX_BYTES} bytes as JSON).`, example: { shopOrder: 'A-1001' } });

/**
 * The examples the document shows. Each is a real order of the built-in sandbox's catalog
 * (`topup sandbox`: Mobile Legends, pack ML-86, which needs a user id and a zone id), so a person
 * who copies one against a sandbox gets 202, not 422; test/orderapi/examples.test.ts posts every
 * request example of the served document, and the curls of docs/order-api.md, to a running one.
 */
export const EXAMPLE_ORDER = { trxid: 'shop-A-1001', pid: 'ML-86', userId: '12345678', zoneId: '2001', meta: { shopOrder: 'A-1001' } } as const;
export const EXAMPLE_BATCH = [
  { trxid: 'shop-B-1001', pid: 'ML-86', userId: '12345678', zoneId: '2001' },
  { trxid: 'shop-B-1002', slug: 'mobilelegends', pack: '172 Diamonds', userId: '87654321', zoneId: '2002' },
] as const;
export const EXAMPLE_CSV = 'trxid,pid,userId,zoneId\r\nshop-C-1001,ML-86,12345678,2001\r\nshop-C-1002,ML-172,87654321,2002\r\n';

/** The fields of an order that a file row has too (a batch's JSON array takes these only). */
const orderFields = {
  trxid: TRXID.openapi({ description: 'Your unique id for this order (the supplier\'s idempotency key): the same trxid with the same body is the same order.', example: 'shop-A-1001' }),
  pid: CELL(64).optional().openapi({ description: 'The pack\'s product id (or slug + pack).', example: EXAMPLE_ORDER.pid }),
  slug: CELL(64).optional().openapi({ description: 'The game\'s slug (with pack).', example: 'mobilelegends' }),
  pack: CELL(128).optional().openapi({ description: 'The pack\'s name (with slug).', example: '86 Diamonds' }),
  userId: CELL().optional().openapi({ description: 'The player as the pack\'s line needs it: Mobile Legends and PUBG Mobile ids are digits only (at most 20), Free Fire ids 5–20 digits, Riot lines name#tag; any other game a plain id (no spaces, at most 100 characters). Another form is refused, 422 naming userId (src/intake/field-checks.ts).', example: EXAMPLE_ORDER.userId }),
  zoneId: CELL().optional().openapi({ description: 'Mobile Legends–style lines: the zone id, digits only (at most 20); another form is refused, 422 naming zoneId.', example: EXAMPLE_ORDER.zoneId }),
  serverId: CELL().optional(),
  region: CELL().optional(),
  moreId: CELL().optional(),
  quantity: z.number().int('must be a whole number').min(1, 'must be at least 1').max(1_000_000, 'at most 1000000').optional().openapi({ description: 'Units of the pack (default 1).', example: 1 }),
  maxPriceUsd: z.number().positive('must be more than 0').optional().openapi({ description: 'Refuse the order if one unit costs more than this (USD).', example: 1.5 }),
  account: CELL(64).optional().openapi({ description: 'With several accounts: the account this order is placed on.' }),
  meta: metaSchema.optional(),
};

/**
 * What z.url({ protocol: /^https?$/ }) asks beyond a URI (format uri): it refuses "http:/x",
 * "http://" and "urn:x", which are URIs. The pattern states that (http or https, a host, no white
 * space) in the document, and the server checks the very same pattern too.
 */
const CALLBACK_URL_PATTERN = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^\s/?#]+(?:[/?#]\S*)?$/;

/** POST /api/v1/orders. Strict: an unknown field is refused (422) rather than silently dropped. */
export const OrderInputSchema = z
  .strictObject({
    ...orderFields,
    callbackUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL', abort: true }).regex(CALLBACK_URL_PATTERN, 'must be an http:// or https:// URL').max(2048).optional().openapi({ format: 'uri', description: 'Where this order\'s webhooks go instead of TOPUP_ORDER_WEBHOOK_URL: only an origin TOPUP_ORDER_WEBHOOK_ALLOW names.' }),
    queue: z.boolean().optional().openapi({ description: 'true: an order the balance cannot cover now waits for a top-up instead of being refused (402).' }),
    checkPlayer: z.boolean().optional().openapi({ description: 'The supplier\'s player-name check before the order is stored (PUBG Mobile top-ups, Mobile Legends): true checks it, false sends without a check, absent follows the reseller\'s TOPUP_PLAYER_CHECKS for the order\'s line. With the reseller\'s TOPUP_PLAYER_CHECK_SKIP_DAYS, a player who got a completed top-up of the same game (Mobile Legends: the same zone) in those days is not checked again, and the order carries no playerName. A player the supplier says does not exist is refused (422 PLAYER_NOT_FOUND naming the fields), nothing stored; a check that could not be made is refused too (429 PLAYER_CHECK_RATE_LIMITED, 503 PLAYER_CHECK_IN_DOUBT, 502 PLAYER_CHECK_REFUSED: never read as "not found"), nothing stored. Not part of the body\'s identity (as queue).' }),
  })
  .openapi('OrderInput', { example: EXAMPLE_ORDER });

/** One order of POST /api/v1/batches' JSON array: a file row's fields (callbackUrl and queue are an API order's, not a file's). */
export const BatchOrderSchema = z
  .strictObject({
    ...orderFields,
    sendWithoutCheck: z.boolean().optional().openapi({ description: 'true: this order is sent without the player check TOPUP_PLAYER_CHECKS would make (the file\'s sendWithoutCheck column; docs/player-checks.md).' }),
  })
  .openapi('BatchOrder');
export const BatchJsonSchema = z.array(BatchOrderSchema).min(1, 'must hold at least one order').max(100_000, 'at most 100000 orders: split the batch').openapi('BatchOrders', { example: EXAMPLE_BATCH as never });

const ISO = z.string().openapi({ description: 'ISO 8601, UTC', example: '2025-11-26T09:15:02.123Z' });
const Status = z.enum(PUBLIC_STATUSES).openapi('OrderStatus', { description: 'accepted: stored, no request has left for it yet; sent: a request left and it is not placed yet: not known yet whether an order exists, or a plainly refused send (maintenance) waits to be sent again (never read it as "not charged"); processing: the supplier has the order; completed / cancelled: its end (cancelled: placed, then failed); rejected: nothing was bought; review: a person decides whether it was charged.' });
const EVENT_TYPES = ['order.resolved', ...PUBLIC_STATUSES.map((s): OrderEventType => `order.${s}`)] as [OrderEventType, ...OrderEventType[]];
const EventType = z.enum(EVENT_TYPES).openapi('OrderEventType');
const NUM = z.number().nullable();

export const OrderChangeSchema = z.object({ eventId: z.string(), type: EventType, status: Status, at: ISO }).openapi('OrderChange');

export const OrderViewSchema = z
  .object({
    trxid: z.string().openapi({ description: 'Your trxid, as the order was accepted.' }),
    sentAs: z.string().optional().openapi({ description: 'Several accounts: the trxid the order is sent under after it moved to another account (<trxid>-<account>); absent otherwise.' }),
    status: Status,
    state: z.enum(ROW_STATES).openapi({ description: 'The row\'s state (docs/state-machine.md), for diagnosis: act on status.' }),
    batchId: z.string(),
    account: z.string(),
    orderId: z.string().nullable().openapi({ description: 'The supplier\'s order id, once known.' }),
    pid: z.string().nullable(),
    slug: z.string().nullable(),
    pack: z.string().nullable(),
    quantity: z.number().int().nullable(),
    player: z.object({ userId: z.string().optional(), zoneId: z.string().optional(), serverId: z.string().optional(), region: z.string().optional(), moreId: z.string().optional() }),
    playerName: z.string().nullable().openapi({ description: 'The player\'s in-game name the supplier\'s check gave before the order was stored; null when no check was made (or it named no one).' }),
    unitPriceUsd: NUM,
    expectedUsd: NUM,
    maxPriceUsd: NUM,
    amountUsd: NUM.openapi({ description: 'What the supplier charged.' }),
    refunded: z.boolean().nullable(),
    netUsd: NUM.openapi({ description: 'Charged minus refunded; null while not known.' }),
    codes: z.array(z.string()).optional().openapi({ description: 'The codes of a key/card order: only for a token with codes:read.' }),
    codeCount: z.number().int(),
    error: z.object({ code: z.string().nullable(), message: z.string() }).nullable(),
    meta: z.record(z.string(), z.unknown()).nullable(),
    createdAt: ISO,
    updatedAt: ISO,
    history: z.array(OrderChangeSchema).optional().openapi({ description: 'Every change of status, oldest first (GET /orders/{trxid} only).' }),
  })
  .openapi('Order');

export const OrderEventSchema = z.object({ id: z.string().openapi({ example: 'evt_42' }), type: EventType, createdAt: ISO, data: OrderViewSchema }).openapi('OrderEvent');
export const FeedPageSchema = z.object({ events: z.array(OrderEventSchema), next: z.string().openapi({ description: 'Pass as ?since= to read on; the same cursor when nothing is new.', example: 'evt_42' }) }).openapi('FeedPage');

export const FieldProblemSchema = z.object({ field: z.string().openapi({ example: 'quantity' }), reason: z.string() }).openapi('FieldProblem');

/** RFC 9457 problem details, plus a stable `code` and the fields at fault. Other members may be added (e.g. balanceUsd). */
export const ProblemSchema = z
  .looseObject({
    type: z.string().openapi({ description: 'A URI reference naming the kind of problem (this API\'s docs page).', example: '/api/v1/docs#problem-invalid_order' }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().openapi({ description: 'Stable: act on this, not on title or detail.', example: 'INVALID_ORDER' }),
    errors: z.array(FieldProblemSchema).optional(),
  })
  .openapi('Problem');

const COUNTS = Object.fromEntries(ROW_STATES.map((s) => [s, z.number().int()])) as Record<(typeof ROW_STATES)[number], z.ZodNumber>;
export const BatchViewSchema = z
  .object({
    id: z.string().openapi({ example: 'b251126-3fa9c1' }),
    name: z.string().openapi({ description: 'The file name the batch was made from.' }),
    origin: z.string(),
    state: z.enum(BATCH_STATES).openapi({ description: 'claimed: being stored; open: ordering; done: every row ended, results written; failed: the file could not be read (nothing was sent); duplicate: the same bytes as an earlier batch (nothing was sent).' }),
    done: z.boolean().openapi({ description: 'The result file is written (GET …/result answers).' }),
    duplicateOf: z.string().nullable(),
    fileError: z.string().nullable(),
    waitReason: z.enum(['balance', 'maintenance', 'account', 'catalog', 'player-checks']).nullable(),
    waitDetail: z.string().nullable(),
    cancelRequested: z.boolean(),
    rows: z.number().int(),
    counts: z.object(COUNTS).openapi('RowCounts'),
    spentUsd: z.number(),
    resultFile: z.string().nullable().openapi({ description: 'The result file\'s name in outbox/ (once done).' }),
    createdAt: ISO,
    finishedAt: ISO.nullable(),
    links: z.object({ self: z.string(), result: z.string() }),
  })
  .openapi('Batch');

export const BatchAcceptedSchema = BatchViewSchema;

// Patterns spell digits [0-9], never \d: the document's patterns are read by other engines too
// (Python's re, .NET), where \d is any Unicode digit ("b٢٥١١٢٦-…" would pass there, not here).
export const TrxidParam = z.object({ trxid: z.string().min(1).refine((s) => [...s].length <= TRXID_MAX_LENGTH, `at most ${TRXID_MAX_LENGTH} characters`).openapi({ param: { name: 'trxid', in: 'path' }, maxLength: TRXID_MAX_LENGTH, example: EXAMPLE_ORDER.trxid } as never) });
export const BatchIdParam = z.object({ id: z.string().regex(/^b[0-9]{6}-[0-9a-f]{6}$/, 'is not a batch id (b<yymmdd>-<6 hex>)').openapi({ param: { name: 'id', in: 'path' }, example: 'b251126-3fa9c1' }) });

export const FEED_MAX = 1000;
export const FEED_DEFAULT = 100;
/** The feed's page size as a number: the server's rule, and (minValue, maxValue) the document's bounds. */
const FEED_LIMIT = z.number().int('must be a whole number').min(1, 'must be at least 1').max(FEED_MAX, `at most ${FEED_MAX}`);
export const FeedQuery = z.object({
  since: z.string().regex(/^evt_[0-9]{1,15}$/, 'is not a cursor: pass the `next` of an earlier page (evt_<n>), or leave it out to start at the beginning').optional().openapi({ param: { name: 'since', in: 'query' }, example: 'evt_42' }),
  // A query value is text: the digits are read as the number FEED_LIMIT bounds. The document
  // states it as the integer it is, with FEED_LIMIT's own bounds (not copies of them).
  limit: z
    .string()
    .regex(/^[0-9]+$/, 'must be a whole number')
    .transform(Number)
    .pipe(FEED_LIMIT)
    .optional()
    .openapi({ param: { name: 'limit', in: 'query', description: `Events per page, ${FEED_LIMIT.minValue} to ${FEED_LIMIT.maxValue} (default ${FEED_DEFAULT}).` }, type: 'integer', minimum: FEED_LIMIT.minValue, maximum: FEED_LIMIT.maxValue, default: FEED_DEFAULT, example: FEED_DEFAULT } as never),
});

/**
 * A batch's name: a file name with an ASCII letter or digit before its extension, no folder
 * (no / or \), and the extension of a file topup reads, or none (then the body's own is added).
 * The server refuses any other with this message, and the document states this very pattern:
 * before it, a name such as "..." or "%%%" was cleaned down to nothing and refused as if its
 * extension were wrong. Why ASCII: a pattern in the document must mean the same to every
 * engine, and Unicode classes (\p{L}) are not read alike; a name in another script gets a
 * letter or digit in front ("1 заказы.csv").
 */
export const BATCH_NAME_PATTERN = /^(?:[^./\\]*[A-Za-z0-9][^./\\]*|[^/\\]*[A-Za-z0-9][^/\\]*\.(?:[Cc][Ss][Vv]|[Tt][Ss][Vv]|[Tt][Xx][Tt]|[Xx][Ll][Ss][Xx]))$/;
/**
 * Why a batch name is refused, in words: the one explanation for BATCH_NAME_PATTERN's refusal
 * (the query's check) and for batchFileName's (orderapi/batches.ts), so one name gets one reason.
 */
export function batchNameProblem(asked: string, ext = '.csv'): string {
  const shown = asked.slice(0, 200);
  if (/[\\/]/.test(asked)) {
    const last = asked.split(/[\\/]/).pop() ?? '';
    return `name "${shown}" has a path in it (/ or \\): give a file name only${last.trim() !== '' ? `, e.g. "${last.slice(0, 100)}"` : ''}`;
  }
  const stem = asked.replace(/\.[^.]*$/, '');
  if (!/[\p{L}\p{N}]/u.test(stem)) return `name "${shown}" has nothing a file name can keep (letters, digits, spaces, . _ - ( ) + ,): give a name like "shop-day${ext}"`;
  return `name "${shown}" is not a file name topup can write: use a letter or digit (A-Z, a-z, 0-9) before the extension, no / or \\, and end it .csv, .tsv, .txt or .xlsx (or leave the extension out), e.g. shop-2025-11-26.csv; or leave name out for api-<time>.csv`;
}

export const BatchQuery = z.object({
  name: z
    .string()
    .max(200, 'at most 200 characters')
    .regex(BATCH_NAME_PATTERN, { error: (iss) => batchNameProblem(String(iss.input)) })
    .optional()
    .openapi({ param: { name: 'name', in: 'query', description: 'The file name (results are written under it in outbox/): a letter or digit (A-Z, a-z, 0-9) before the extension, no folder, and .csv, .tsv, .txt or .xlsx (.xlsx only for a workbook body, the others only for CSV or JSON) or no extension (the body\'s is added). Without it: api-<time>.csv or .xlsx.' }, example: 'shop-2025-11-26.csv' }),
});

export const SCOPE_ENUM = z.enum(SCOPES);

/** The example check: a player the built-in sandbox knows (every id but a few exists there). */
export const EXAMPLE_CHECK = { slug: 'mobilelegends', userId: '12345678', zoneId: '2001' } as const;

/** POST /api/v1/players/check. Strict, as an order: an unknown field is refused rather than dropped. */
/** Not blank: a character other than white space (a pattern, so the document states it too). */
const NOT_BLANK = /\S/;
export const PlayerCheckInputSchema = z
  .strictObject({
    pid: CELL(64).regex(NOT_BLANK, 'must not be blank').optional().openapi({ description: 'A pack of the game (its product id): the check is the game\'s. Give pid or slug.', example: EXAMPLE_ORDER.pid }),
    slug: CELL(64).regex(NOT_BLANK, 'must not be blank').optional().openapi({ description: 'The game\'s slug (pubg…: PUBG Mobile top-ups; mobilelegends…: Mobile Legends). Give pid or slug.', example: EXAMPLE_CHECK.slug }),
    userId: CELL().regex(NOT_BLANK, 'must not be blank').openapi({ description: 'The player id (PUBG Mobile) or user id (Mobile Legends), as the order will carry it: digits only (at most 20). Another form is refused before any call, 422 INVALID_CHECK naming userId (and a zoneId that is not digits, naming zoneId).', example: EXAMPLE_CHECK.userId }),
    zoneId: CELL().optional().openapi({ description: 'Mobile Legends: the zone id (required there; refused for PUBG Mobile: 422 INVALID_CHECK).', example: EXAMPLE_CHECK.zoneId }),
    account: CELL(64).optional().openapi({ description: 'With several accounts: the account whose supplier key and rate budget make the check (default: the first).' }),
  })
  .refine((b) => b.pid !== undefined || b.slug !== undefined, { message: 'give pid or slug: the game whose check to make', path: ['slug'] })
  // The refinement, stated in the document: one of the two is required.
  .openapi('PlayerCheckInput', { example: EXAMPLE_CHECK, anyOf: [{ required: ['pid'] }, { required: ['slug'] }] } as never);

/** 200 of POST /api/v1/players/check: the player exists. */
export const PlayerCheckSchema = z
  .object({
    found: z.literal(true),
    check: z.enum(['pubg', 'ml']).openapi({ description: 'pubg: the supplier\'s POST /pubgvvfy (a player id); ml: POST /mlvfy (a user id and a zone id).' }),
    player: z.object({ userId: z.string(), zoneId: z.string().optional() }),
    playerName: z.string().nullable().openapi({ description: 'The in-game name to show the buyer before they pay; null when the supplier said the player exists without naming them.', example: 'ShadowFox21' }),
    checkedAt: ISO.openapi({ description: 'When the supplier gave this answer (ISO 8601, UTC).' }),
    cached: z.boolean().openapi({ description: 'true: the answer kept from an earlier check (no call was made now; kept TOPUP_PLAYER_CHECK_CACHE_DAYS).' }),
  })
  .openapi('PlayerCheck');

// The schemas describe exactly the desk's contract (src/orders/types.ts): checked at build time.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const checks: [Same<keyof z.infer<typeof OrderInputSchema>, keyof OrderInput>, Same<keyof z.infer<typeof OrderViewSchema>, keyof OrderView>, Same<keyof z.infer<typeof OrderEventSchema>, keyof OrderEvent>, Same<keyof z.infer<typeof FeedPageSchema>, keyof FeedPage>, Same<keyof z.infer<typeof PlayerCheckInputSchema>, keyof PlayerCheckInput>, Same<keyof z.infer<typeof PlayerCheckSchema>, keyof PlayerCheckView>] = [true, true, true, true, true, true];
void checks;
