/**
 * The real-world answer style, as presentation: turns the spec-shaped answer the sandbox has
 * computed into the way real deployments of this API write it (numbers as strings, null for
 * empty fields, capitalised status aliases, numeric and 19-digit ids, codes in several shapes…).
 * Which orders exist, what they cost, the ledger and every rule are the same code in both
 * styles; the few facts this needs beyond the answer (an order's sequence, source, refund, key
 * or not) are read from the state. Every variation is a draw of uniform(seed, …): the same order
 * is always written the same way, and a run can be replayed. The reasons are in choices.ts.
 */
import { uniform } from './fulfilment.js';
import { isStockBased, type LiveCatalog } from './live-catalog.js';
import { publicIdOf } from './order-ids.js';
import type { SandboxState } from './state.js';
import type { OrderRecord, RealWorldSettings } from './types.js';
import { toMicros } from './types.js';

/** A JSON number written as these exact digits (JSON.stringify cannot write a number above 2^53 exactly). */
export class RawNumber {
  constructor(readonly digits: string) {}
}

export interface PresentCtx {
  state: SandboxState;
  now: number;
  settings: RealWorldSettings;
  /** Sequence number of this public call: draws that are per call (not per order) use it. */
  call: number;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Only the aliases public clients of this API handle (issue 11); 'Refunded' only on a refunded cancel. */
const STATUS_WORDS: Record<OrderRecord['status'], string[]> = {
  completed: ['Completed', 'Success', 'Done'],
  processing: ['Processing', 'Pending', 'Waiting'],
  cancelled: ['Cancelled', 'Canceled', 'Failed'],
};
/** A manual order's status: a word outside every alias list, which a client must not read as final. */
const MANUAL_WORDS = ['Manual Review', 'On Hold'];

const pick = <T>(list: readonly T[], r: number): T => list[Math.min(list.length - 1, Math.floor(r * list.length))] as T;

/** A boolean as true, "true" or 1 (half native, a quarter each of the others). */
function bool(v: boolean, r: number): boolean | string | number {
  if (r < 0.5) return v;
  return r < 0.75 ? String(v) : v ? 1 : 0;
}

/** USD as a numeric string with at least two decimals ("0.92", "91.00", "0.000001"), exact to the micro-dollar. */
export function money(usd: unknown): unknown {
  if (typeof usd !== 'number') return usd ?? null;
  const micros = toMicros(usd);
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const frac = String(abs % 1_000_000).padStart(6, '0').replace(/0{1,4}$/, '');
  return `${sign}${Math.floor(abs / 1_000_000)}.${frac}`;
}

/** A user id that is a plain safe integer is echoed as a JSON number, as deployments that store it as one do. */
const userIdValue = (u: string | null): unknown => (u !== null && /^[1-9]\d{0,14}$/.test(u) ? Number(u) : u);

/**
 * The id an order is shown by: its digits, unless it was created while the spec style was in
 * force (then the `ORD…` it was handed out as: a supplier does not respell the ids of orders it
 * already gave out, and a client pairs its own orders in the history by them; trial s36, D2).
 */
const idValue = (rec: Pick<OrderRecord, 'orderId' | 'idStyle'>): unknown => {
  if (rec.idStyle === 'spec') return rec.orderId;
  const digits = publicIdOf(rec.orderId);
  return digits.length > 15 ? new RawNumber(digits) : Number(digits);
};

export function toRealWorld(route: string, status: number, body: unknown, ctx: PresentCtx): unknown {
  if (!isRec(body)) return body;
  // The player checks write their own real-world variants (players.ts): a 200 that says not found must stay one.
  if (route === 'POST /pubgvvfy' || route === 'POST /mlvfy') return body;
  const perCall = (...k: (string | number)[]) => uniform(ctx.settings.seed, route, ctx.call, ...k);
  if (status !== 200) return failure(body, perCall);
  const success = { success: bool(true, perCall('success')) };
  switch (route) {
    case 'POST /orders':
    case 'GET /orders/:orderId': return order(body, ctx, false);
    case 'GET /history': return history(body, ctx, success);
    case 'GET /products':
    case 'GET /catalog': return { ...body, ...success, products: (body.products as Rec[]).map((p) => product(p, ctx)) };
    case 'GET /services':
      return {
        ...body, ...success,
        services: (body.services as Rec[]).map((s) => ({ ...s, serverIdOptions: s.serverIdOptions ?? null, regionOptions: s.regionOptions ?? null })),
      };
    case 'GET /balance': {
      const out: Rec = { ...success, balanceUsd: money(body.balanceUsd) };
      if (perCall('currency') < 0.5) out.currency = body.currency;
      return out;
    }
    default: return { ...body, ...success };
  }
}

/** Error bodies: `code: null` when there is none; a rejection at submit with its status word. */
function failure(body: Rec, perCall: (...k: string[]) => number): Rec {
  if (body.orderCreated === false) {
    return { orderCreated: bool(false, perCall('orderCreated')), orderId: null, status: pick(STATUS_WORDS.cancelled, perCall('status')), game: body.game ?? null, error: body.error ?? null };
  }
  if (body.success === false) return { success: bool(false, perCall('success')), code: body.code ?? null, error: body.error ?? null };
  return body;
}

function history(body: Rec, ctx: PresentCtx, success: Rec): Rec {
  const out: Rec = { ...success, count: String(body.count), orders: (body.orders as Rec[]).map((o) => order(o, ctx, true)) };
  if (body.total !== undefined) out.total = String(body.total);
  if (body.hasMore !== undefined) out.hasMore = bool(body.hasMore === true, uniform(ctx.settings.seed, 'hasMore', ctx.call));
  if (body.page !== undefined) out.page = String(body.page);
  if (body.pageSize !== undefined) out.pageSize = String(body.pageSize);
  return out;
}

/**
 * One order. Every field of the spec's order shape is present, null when empty; the sandbox's
 * own additions (trxid, pid, createdAt) are gone, as in the spec's shape.
 */
function order(spec: Rec, ctx: PresentCtx, inHistory: boolean): Rec {
  const rec = ctx.state.order(String(spec.orderId));
  if (!rec) return spec;
  const draw = (...k: (string | number)[]) => uniform(ctx.settings.seed, rec.orderId, ...k);
  const id = idValue(rec);
  const out: Rec = {
    orderCreated: bool(true, draw('orderCreated')),
    orderId: id,
    id,
    status: statusWord(rec, draw),
    game: spec.game ?? null,
    packName: spec.packName ?? null,
    amountUsd: money(spec.amountUsd),
    // The spec: "omitted in some responses". History rows carry none here.
    durationSec: inHistory || spec.durationSec === undefined ? null : String(spec.durationSec),
    userId: userIdValue(rec.userId),
    serverId: spec.serverId ?? null,
    moreId: spec.moreId ?? null,
    codes: codes(rec, spec, ctx, draw),
    error: spec.error ?? null,
    refunded: null,
    idempotentReplay: spec.idempotentReplay === true ? bool(true, draw('replay', ctx.call)) : null,
  };
  if (rec.status === 'cancelled') {
    if (rec.refunded) out.refunded = bool(true, draw('refunded'));
    // A cancel that kept the money says so with false, or says nothing at all.
    else if (draw('refunded-absent') < 0.5) out.refunded = bool(false, draw('refunded'));
    else delete out.refunded;
  }
  return out;
}

function statusWord(rec: OrderRecord, draw: (...k: string[]) => number): string {
  if (rec.source === 'manual') return pick(MANUAL_WORDS, uniform('manual-word', rec.account));
  const words = rec.status === 'cancelled' && rec.refunded ? [...STATUS_WORDS.cancelled, 'Refunded'] : STATUS_WORDS[rec.status];
  return pick(words, draw('status-word', rec.status));
}

/**
 * Codes as an array of strings, one comma-separated string, or `[{ code, pin }]`. Some key
 * orders say completed before their codes are readable: no codes until a seeded delay after
 * completion has passed (the money and the codes are already there; only the answer lags).
 */
function codes(rec: OrderRecord, spec: Rec, ctx: PresentCtx, draw: (...k: (string | number)[]) => number): unknown {
  const list = spec.codes;
  if (!Array.isArray(list) || list.length === 0) return null;
  const s = ctx.settings;
  if (draw('late-codes') < s.lateCodesShare) {
    const [min, max] = s.lateCodesMs;
    const readyAt = (rec.doneAt ?? rec.createdAt) + min + Math.round(draw('late-codes-ms') * (max - min));
    if (ctx.now < readyAt) return draw('late-empty') < 0.5 ? null : [];
  }
  const shape = draw('codes-shape');
  if (shape < 1 / 3) return list;
  if (shape < 2 / 3) return list.join(',');
  return (list as string[]).map((code, i) => ({ code, pin: String(Math.floor(draw('pin', i) * 10_000)).padStart(4, '0') }));
}

/** Top-up packs carry every stock field as null; stock packs write their figures as numbers or numeric strings. */
function product(p: Rec, ctx: PresentCtx): Rec {
  const r = (k: string) => uniform(ctx.settings.seed, 'product', String(p.id), k);
  const asText = r('stock-as-text') < 0.5;
  const n = (v: unknown) => (v === undefined || v === null ? null : asText ? String(v) : v);
  return {
    ...p,
    price: money(p.price),
    quantity: n(p.quantity),
    inStock: typeof p.inStock === 'boolean' ? bool(p.inStock, r('inStock')) : null,
    quantityMin: n(p.quantityMin),
    quantityMax: n(p.quantityMax),
  };
}

/** The idempotency key of an account's manual order; a NUL cannot collide with a client's trxid by accident. */
const manualKey = (fp: string): string => `\u0000manual:${fp}`;

/**
 * One order per account placed outside the API (on the supplier's website), charged like any
 * other and never settling: its status is a word no client knows. Placed when the real-world
 * style is switched on (and for accounts created while it is on); an account that cannot pay
 * for it gets none. Charged in the ledger, with no trxid, so the ledger stays the truth.
 */
export function placeManualOrders(state: SandboxState, catalog: LiveCatalog, now: number): void {
  const products = catalog.products();
  const p = products.find((x) => !isStockBased(x)) ?? products[0];
  if (!p) return;
  for (const a of state.accounts()) {
    state.createManualOrder({
      account: a.fp, idemKey: manualKey(a.fp), trxid: '', pid: p.id, game: p.slug, packName: p.serviceName,
      amountMicros: toMicros(p.price), quantity: null, userId: '5120000001', serverId: null, moreId: null, zoneId: null,
      codes: null, status: 'processing', error: null, refunded: false, refundOnCancel: true, source: 'manual', idStyle: 'real-world',
      createdAt: now, settleAt: null, settleTo: null, doneAt: null,
    });
  }
}
