/**
 * POST /orders body reading and validation (spec §4.5, §7), and the public order shape (§2.3).
 * The order of checks is written down in choices.ts; this file follows it top to bottom.
 */
import { resolveRegion } from '../api/regions.js';
import { TRXID_KEYS } from '../kernel/identity.js';
import type { Failure } from './auth.js';
import { isKeyOrCard, type LiveCatalog, MAX_QUANTITY } from './live-catalog.js';
import type { CatalogProduct, OrderRecord, ServiceLine } from './types.js';
import { toMicros, toUsd } from './types.js';

export interface OrderBody {
  pid?: string; trxid?: string; userId?: string; zoneId?: string; serverId?: string;
  region?: string; moreId?: string; quantity?: number; idempotencyKey?: string;
}

const STRING_FIELDS: Record<Exclude<keyof OrderBody, 'quantity'>, string[]> = {
  pid: ['pid', 'PID'],
  trxid: [...TRXID_KEYS], // the spec's names, declared once (kernel/identity.ts)
  userId: ['userId', 'userID'],
  zoneId: ['zoneId'],
  serverId: ['serverId'],
  region: ['region'],
  moreId: ['moreId'],
  idempotencyKey: ['idempotencyKey', 'idempotency'],
};

export const badRequest = (error: string, code?: string): Failure =>
  ({ status: 400, body: code ? { success: false, code, error } : { success: false, error } });

/** Reads the body with its aliases. Strings may arrive as numbers; blank strings count as absent. */
export function readBody(raw: unknown): OrderBody | Failure {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return badRequest('INVALID BODY');
  const src = raw as Record<string, unknown>;
  const body: OrderBody = {};
  for (const [field, names] of Object.entries(STRING_FIELDS) as [keyof typeof STRING_FIELDS, string[]][]) {
    const name = names.find((n) => src[n] !== undefined && src[n] !== null);
    if (name === undefined) continue;
    const v = src[name];
    if (typeof v === 'number' && Number.isFinite(v)) body[field] = String(v);
    else if (typeof v === 'string') { if (v.trim() !== '') body[field] = v.trim(); }
    else return badRequest('INVALID BODY');
  }
  const q = src.quantity;
  if (q !== undefined && q !== null) {
    if (typeof q !== 'number' || !Number.isInteger(q) || q < 1) return badRequest('INVALID BODY');
    body.quantity = q;
  }
  return body;
}

/**
 * The idempotency key of a submit: `idempotencyKey` when given, else `trxid`. Read from those
 * fields alone, so a body with some other bad field still finds its earlier order first.
 */
export function idempotencyKeyOf(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const src = raw as Record<string, unknown>;
  const names = [...STRING_FIELDS.idempotencyKey, ...STRING_FIELDS.trxid];
  const body = readBody(Object.fromEntries(names.filter((n) => n in src).map((n) => [n, src[n]])));
  return isBody(body) ? (body.idempotencyKey ?? body.trxid) : undefined;
}

const isBody = (b: OrderBody | Failure): b is OrderBody => !('status' in b && 'body' in b);

export interface Plan {
  body: OrderBody & { pid: string; trxid: string };
  product: CatalogProduct;
  line: ServiceLine;
  quantity: number;
  amountMicros: number;
  /** Values echoed on the order: for region + server lines serverId is the region, moreId the server. */
  userId: string | null; serverId: string | null; moreId: string | null; zoneId: string | null;
}

const FF_LINE = /^ff[a-z]+$/;
const DIGITS_5_20 = /^\d{5,20}$/;
const RIOT_ID = /^[^#]{3,16}#[A-Za-z0-9]{3,5}$/;

function isRiotLine(line: ServiceLine): boolean {
  return line.required.some((r) => r.field === 'userId' && /riot|#/i.test(r.label));
}

/** Everything but stock and balance. */
export function validate(body: OrderBody, catalog: LiveCatalog): Plan | Failure {
  if (body.pid === undefined || body.trxid === undefined) return badRequest('INVALID REQUEST');
  const product = catalog.product(body.pid);
  if (!product) return badRequest('UNKNOWN PID');
  const line = catalog.line(product.slug);
  if (!line) return badRequest('INVALID_PRODUCT', 'INVALID_PRODUCT');
  if (line.status !== 'active') return badRequest('GAME DISABLED');
  if (product.status === 'inactive' || product.status === 'disabled') return badRequest('PRODUCT_DISABLED', 'PRODUCT_DISABLED');
  if (product.status !== 'active') return badRequest('INVALID_PRODUCT', 'INVALID_PRODUCT');
  if (!(product.price > 0)) return badRequest('INVALID PACK');

  const keyOrCard = isKeyOrCard(product);
  if (body.quantity !== undefined && !keyOrCard) return badRequest('QUANTITY ONLY FOR GAMEKEY OR GIFTCARD');
  if (body.quantity !== undefined && body.quantity > MAX_QUANTITY) return badRequest('QUANTITY EXCEEDS MAX', 'QUANTITY_EXCEEDS_MAX');

  const needs = new Set(line.required.map((r) => r.field));
  const b = body as Record<string, string | number | undefined>;
  for (const field of needs) {
    if (field === 'quantity') continue; // optional: one unit when omitted
    // For region + server lines a region shortcut may come in serverId (spec §4.5).
    if (field === 'region' && body.region === undefined && body.serverId !== undefined) continue;
    if (b[field] === undefined) return badRequest('INVALID REQUEST');
  }
  if (needs.has('userId') && body.userId !== undefined) {
    if (FF_LINE.test(line.slug) && !DIGITS_5_20.test(body.userId)) return badRequest('INVALID REQUEST');
    if (isRiotLine(line) && !RIOT_ID.test(body.userId)) return badRequest('INVALID REQUEST');
  }
  if (needs.has('zoneId') && !/^\d{1,10}$/.test(body.zoneId ?? '')) return badRequest('INVALID REQUEST');

  let serverId = body.serverId ?? null;
  const moreId = body.moreId ?? null;
  if (needs.has('region') || line.regionOptions) {
    const given = body.region ?? body.serverId;
    const region = given === undefined ? undefined : resolveRegion(given, line.regionOptions ?? []);
    if (given !== undefined && region === undefined) return badRequest('INVALID PACK');
    serverId = region ?? null;
  } else if (line.serverIdOptions && body.serverId !== undefined) {
    const match = resolveOption(body.serverId, line.serverIdOptions);
    if (match === undefined) return badRequest('INVALID PACK');
    serverId = match;
  }

  const quantity = body.quantity ?? 1;
  return {
    body: body as Plan['body'], product, line, quantity,
    amountMicros: toMicros(product.price) * quantity,
    userId: body.userId ?? null, serverId, moreId, zoneId: body.zoneId ?? null,
  };
}

function resolveOption(given: string, options: readonly { value: string; label: string }[]): string | undefined {
  const g = given.toLowerCase();
  return options.find((o) => o.value.toLowerCase() === g || o.label.toLowerCase() === g)?.value;
}

export const rejection = (game: string, error: string): Failure & { body: never } =>
  ({ status: 400, body: { orderCreated: false, status: 'cancelled', game, error } as never });

/**
 * The order as the spec style shows it: empty fields omitted, plus trxid, pid and createdAt (a
 * manual order has no trxid). The real-world style starts from this too (real-world.ts).
 */
export function publicOrder(o: OrderRecord, now: number, replay = false): Record<string, unknown> {
  const end = o.status === 'processing' ? now : (o.doneAt ?? now);
  const out: Record<string, unknown> = {
    orderCreated: true, orderId: o.orderId, status: o.status, game: o.game, packName: o.packName,
    amountUsd: toUsd(o.amountMicros), durationSec: Math.max(0, Math.round((end - o.createdAt) / 1000)),
  };
  if (o.userId !== null) out.userId = o.userId;
  if (o.serverId !== null) out.serverId = o.serverId;
  if (o.moreId !== null) out.moreId = o.moreId;
  if (o.codes && o.status === 'completed') out.codes = o.codes;
  if (o.status === 'cancelled') { out.error = o.error ?? 'CANCELLED'; out.refunded = o.refunded; }
  if (replay) out.idempotentReplay = true;
  if (o.source !== 'manual') out.trxid = o.trxid;
  out.pid = o.pid;
  out.createdAt = new Date(o.createdAt).toISOString();
  return out;
}
