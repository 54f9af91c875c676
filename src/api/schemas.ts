/**
 * The API's resources (spec section 2) as this program's own types, and the readers that make
 * them from whatever a deployment sends (see read.ts for single values).
 *
 * Rules, in this one place:
 *  - A list (services, products, history) is read element by element: an element that cannot be
 *    read is skipped and reported through `skip`, never the whole list. One manual top-up with
 *    an odd status in the account's history must not blind the poller to every other order.
 *  - Fields go by the spec's name first, then by the names real deployments use (`id` for
 *    `orderId`, `userID`, `qty` …).
 *  - Unknown fields are kept: every Order carries the object it was read from (`raw`), for the
 *    redacted audit copy kept per row.
 *  - What the program cannot work without is required (a product's id and price, a balance); a
 *    missing optional field is absent, never a failure.
 */
import { absent, isObject, pick, readBoolean, readCodes, readInteger, readNumber, readStatus, readSuccess, readText, unwrap, type OrderStatus } from './read.js';
import { sameTrxid, TRXID_ANSWER_KEYS } from '../kernel/identity.js';
import { ORDER_ID_KEYS, orderObject } from './order-id.js';

export type { OrderStatus } from './read.js';

/** A problem with one element of a list, or with a whole answer. */
export type Skip = (what: string) => void;

// ───────────────────────────── catalog ─────────────────────────────

/**
 * Spec 2.1: "Element structure of serverIdOptions and regionOptions: not shown." An option is a
 * bare string/number, or an object carrying its value in one of `value`, `id`, `code`,
 * `serverId`, `region` and an optional display text in `label` / `name` / `text`.
 */
export interface Option {
  value: string;
  label: string;
}

export interface RequiredField {
  field: string;
  label: string;
}

export interface ServiceLine {
  productName: string;
  slug: string;
  gameName: string;
  required: RequiredField[];
  status: string;
  serverIdOptions?: Option[];
  regionOptions?: Option[];
}

export interface Product {
  id: string;
  slug: string;
  gameName: string;
  serviceName: string;
  category: string;
  price: number;
  status: string;
  quantity?: number;
  inStock?: boolean;
  quantityMin?: number;
  quantityMax?: number;
}

export function readOption(v: unknown): Option | undefined {
  const plain = readText(v);
  if (plain !== undefined) return { value: plain, label: plain };
  if (!isObject(v)) return undefined;
  const value = readText(pick(v, 'value', 'id', 'code', 'serverId', 'region'));
  if (value === undefined) return undefined;
  return { value, label: readText(pick(v, 'label', 'name', 'text')) ?? value };
}

function readOptions(v: unknown, where: string, skip: Skip): Option[] | undefined {
  if (absent(v)) return undefined;
  if (!Array.isArray(v)) return void skip(`${where}: not a list`);
  const out: Option[] = [];
  v.forEach((o, i) => {
    const opt = readOption(o);
    if (opt) out.push(opt);
    else skip(`${where}[${i}]: option has no value/id/code field`);
  });
  return out;
}

export function readServiceLine(v: unknown, skip: Skip): ServiceLine | undefined {
  if (!isObject(v)) return void skip('not an object');
  const slug = readText(v.slug);
  if (slug === undefined) return void skip('no slug');
  const required: RequiredField[] = [];
  if (Array.isArray(v.required)) {
    for (const r of v.required) {
      const field = isObject(r) ? readText(pick(r, 'field', 'name', 'key')) : readText(r);
      if (field === undefined) continue;
      required.push({ field, label: (isObject(r) ? readText(pick(r, 'label', 'title')) : undefined) ?? '' });
    }
  }
  const line: ServiceLine = {
    productName: readText(v.productName) ?? readText(v.gameName) ?? slug,
    slug,
    gameName: readText(v.gameName) ?? readText(v.productName) ?? slug,
    required,
    // Spec: "Unavailable games are not listed", so a listed line without a status is open.
    status: readText(v.status) ?? 'active',
  };
  const servers = readOptions(v.serverIdOptions, `${slug}.serverIdOptions`, skip);
  const regions = readOptions(v.regionOptions, `${slug}.regionOptions`, skip);
  if (servers) line.serverIdOptions = servers;
  if (regions) line.regionOptions = regions;
  return line;
}

export function readProduct(v: unknown, skip: Skip): Product | undefined {
  if (!isObject(v)) return void skip('not an object');
  const id = readText(pick(v, 'id', 'pid', 'productId'));
  if (id === undefined) return void skip('no id');
  const slug = readText(v.slug);
  if (slug === undefined) return void skip(`${id}: no slug`);
  const price = readNumber(v.price);
  if (price === undefined || price < 0) return void skip(`${id}: price ${JSON.stringify(v.price)} is not a number`);
  const p: Product = {
    id,
    slug,
    gameName: readText(v.gameName) ?? slug,
    serviceName: readText(pick(v, 'serviceName', 'name', 'packName')) ?? id,
    category: readText(v.category) ?? '',
    price,
    // Spec: "One row per active pack"; a row without a status is listed, so on sale.
    status: readText(v.status) ?? 'active',
  };
  const quantity = readInteger(v.quantity);
  const inStock = readBoolean(v.inStock);
  const quantityMin = readInteger(v.quantityMin);
  const quantityMax = readInteger(v.quantityMax);
  if (quantity !== undefined) p.quantity = quantity;
  if (inStock !== undefined) p.inStock = inStock;
  if (quantityMin !== undefined) p.quantityMin = quantityMin;
  if (quantityMax !== undefined) p.quantityMax = quantityMax;
  return p;
}

// ───────────────────────────── orders ─────────────────────────────

export interface Order {
  /** Exact, also when the supplier sends a 19-digit number. */
  orderId?: string;
  status: OrderStatus;
  /** The supplier's status word; `statusKnown` false when it is none we know (read as processing). */
  statusWord?: string;
  statusKnown: boolean;
  orderCreated?: boolean;
  success?: boolean;
  game?: string;
  packName?: string;
  amountUsd?: number;
  durationSec?: number;
  userId?: string;
  zoneId?: string;
  serverId?: string;
  moreId?: string;
  quantity?: number;
  codes?: string[];
  error?: string;
  refunded?: boolean;
  idempotentReplay?: boolean;
  trxid?: string;
  /**
   * Every trxid echo the answer holds, when they name more than one trxid (under two of
   * TRXID_ANSWER_KEYS: `trxid` ours beside `trx_id` another's). Then `trxid` is not set: which one
   * is the order's own cannot be told, so a submit's answer is not this row's order
   * (dispatch/order-match.ts) and a history element proves neither presence nor absence (readHistory).
   */
  trxidConflict?: string[];
  pid?: string;
  createdAt?: string | number;
  /** The object this was read from, unknown fields included (for the audit copy, never for decisions). */
  raw: Record<string, unknown>;
}

/** A placed order always has an id: an answer without one never counts as placed. */
export type PlacedOrder = Order & { orderId: string };

/** The fields that mark an object as an order (a body, or an element of history). */
const ORDER_MARKS = [...ORDER_ID_KEYS, 'id', 'status', 'orderCreated', 'orderStatus'] as const;

function set<K extends keyof Order>(o: Order, key: K, value: Order[K] | undefined): void {
  if (value !== undefined) o[key] = value;
}

/** Reads one order. Undefined only when `v` is not an object with any mark of an order. */
export function readOrder(v: unknown): Order | undefined {
  const body = orderObject(unwrap(orderObject(v), ORDER_MARKS));
  if (!isObject(body) || !ORDER_MARKS.some((k) => !absent(body[k]))) return undefined;
  // `orderStatus` first: beside it, `status` is an envelope's ("success"), not the order's.
  const st = readStatus(pick(body, 'orderStatus', 'order_status', 'status', 'state'));
  const o: Order = { status: st.status, statusKnown: st.known, raw: body };
  set(o, 'statusWord', st.word);
  // An order's own key first (api/order-id.ts), a bare `id` only after them.
  set(o, 'orderId', readText(pick(body, ...ORDER_ID_KEYS, 'id')));
  set(o, 'orderCreated', readBoolean(body.orderCreated));
  set(o, 'success', readSuccess(body));
  set(o, 'game', readText(pick(body, 'game', 'slug')));
  set(o, 'packName', readText(pick(body, 'packName', 'pack', 'serviceName')));
  set(o, 'amountUsd', readNumber(pick(body, 'amountUsd', 'amount_usd')));
  set(o, 'durationSec', readNumber(body.durationSec));
  set(o, 'userId', readText(pick(body, 'userId', 'userID', 'user_id')));
  set(o, 'zoneId', readText(pick(body, 'zoneId', 'zone_id')));
  set(o, 'serverId', readText(pick(body, 'serverId', 'server_id')));
  set(o, 'moreId', readText(body.moreId));
  set(o, 'quantity', readInteger(pick(body, 'quantity', 'qty')));
  set(o, 'codes', readCodes(pick({ ...body, code: deliveredCode(body.code) }, 'codes', 'code', 'vouchers', 'keys')));
  set(o, 'error', readText(pick(body, 'error', 'errorMessage', 'reason')) ?? (st.status === 'cancelled' ? readText(body.message) : undefined));
  set(o, 'refunded', readBoolean(body.refunded) ?? (st.saysRefunded ? true : undefined));
  set(o, 'idempotentReplay', readBoolean(body.idempotentReplay));
  const echoes = trxidEchoes(body);
  if (echoes.length > 1) o.trxidConflict = echoes;
  else set(o, 'trxid', echoes[0]);
  set(o, 'pid', readText(pick(body, 'pid', 'PID', 'productId')));
  set(o, 'createdAt', readTimestamp(pick(body, 'createdAt', 'created_at')));
  return o;
}

/** Each trxid the answer names, under any of TRXID_ANSWER_KEYS, as sent; one per trxid (compared by sameTrxid). */
function trxidEchoes(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of TRXID_ANSWER_KEYS) {
    const v = absent(body[k]) ? undefined : readText(body[k]);
    if (v !== undefined && !out.some((x) => sameTrxid(x, v))) out.push(v);
  }
  return out;
}

/**
 * When an order was made: epoch milliseconds, or the supplier's date text as sent (ISO or not).
 * Epoch SECONDS (PHP's time(), 10 digits) are common: read as milliseconds they would date the
 * order in January 1970, and the history check would think its page reaches back to then. A
 * number below 1e11 is seconds (1e11 ms is March 1973, 1e11 s the year 5138).
 */
function readTimestamp(v: unknown): string | number | undefined {
  const n = typeof v === 'number' || (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v)) ? readNumber(v) : undefined;
  if (n !== undefined) return n < 1e11 ? Math.round(n * 1000) : n;
  return readText(v);
}

// ───────────────────────────── account ─────────────────────────────

export interface Balance {
  balanceUsd: number;
  currency: string;
}

export interface History {
  count: number;
  orders: Order[];
  /**
   * Elements of the page that could not be read as an order with an id. Such an element may be the
   * very order looked for (its id under a key no reader knows): a page with one proves no absence,
   * so the client refuses it to every reader but the reports' (api/client.ts history).
   */
  skipped: number;
  total?: number;
  hasMore?: boolean;
}

/** Reads a list field element by element; a body without the list is unreadable (undefined). */
export function readList<T>(body: unknown, field: string, readOne: (v: unknown, skip: Skip) => T | undefined, skip: Skip): T[] | undefined {
  const b = unwrap(body, [field]);
  const list = isObject(b) ? b[field] : Array.isArray(b) ? b : undefined;
  if (!Array.isArray(list)) return undefined;
  const out: T[] = [];
  list.forEach((e, i) => {
    const value = readOne(e, (what) => skip(`${field}[${i}]: ${what}`));
    if (value !== undefined) out.push(value);
  });
  return out;
}

export function readHistory(body: unknown, skip: Skip): History | undefined {
  let skipped = 0;
  const orders = readList(body, 'orders', (v, s) => {
    const o = readOrder(v);
    if (!o) s('not an order');
    else if (o.orderId === undefined) s('order without an id');
    // Two trxids named by one element: which is its own cannot be told, so it may be the order looked for.
    else if (o.trxidConflict) s(`order naming two trxids (${o.trxidConflict.join(', ')})`);
    else return o;
    skipped += 1;
    return undefined;
  }, skip);
  if (!orders) return undefined;
  const b = unwrap(body, ['orders']) as Record<string, unknown>;
  const h: History = { count: readInteger(b.count) ?? orders.length + skipped, orders, skipped };
  const total = readInteger(b.total);
  const hasMore = readBoolean(b.hasMore);
  if (total !== undefined) h.total = total;
  if (hasMore !== undefined) h.hasMore = hasMore;
  return h;
}

/**
 * Spec 2.4 says `{balanceUsd: number, currency: "USD"}`. A string amount or no currency is read
 * as USD; a currency that is not USD is refused (undefined): every sum here is in USD.
 */
export function readBalance(body: unknown): Balance | undefined {
  const b = unwrap(body, ['balanceUsd', 'balance']);
  if (!isObject(b)) return undefined;
  const balanceUsd = readNumber(pick(b, 'balanceUsd', 'balance_usd', 'balance'));
  const currency = readText(b.currency)?.trim().toUpperCase() ?? 'USD';
  if (balanceUsd === undefined || currency !== 'USD') return undefined;
  return { balanceUsd, currency };
}

export function readMyIp(body: unknown): string | undefined {
  const b = unwrap(body, ['ip']);
  return isObject(b) ? readText(pick(b, 'ip', 'yourIp', 'address'))?.trim() : undefined;
}

/** Body of POST /orders (spec 4.5). Field names are the canonical ones, never the aliases. */
export interface OrderRequest {
  pid: string;
  trxid: string;
  userId?: string;
  zoneId?: string;
  serverId?: string;
  region?: string;
  moreId?: string;
  quantity?: number;
}

/** readProduct for values that must be a product (catalog files, tests): throws on what it cannot read. */
export function parseProduct(v: unknown): Product {
  let problem = 'not a product';
  const p = readProduct(v, (what) => void (problem = what));
  if (!p) throw new TypeError(`product: ${problem}`);
  return p;
}

/** readServiceLine that throws on what it cannot read. */
export function parseServiceLine(v: unknown): ServiceLine {
  let problem = 'not a service line';
  const s = readServiceLine(v, (what) => void (problem = what));
  if (!s) throw new TypeError(`service line: ${problem}`);
  return s;
}

/**
 * A single `code` is a delivered code only when it does not look like the envelope's own: an
 * HTTP-ish number (`code: 200`) or a status word (`SUCCESS`, `OK`) would otherwise finish a
 * key order with a fake code and never fetch the real one.
 */
function deliveredCode(v: unknown): unknown {
  const t = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : undefined;
  if (t !== undefined && (/^\d{1,3}$/.test(t) || /^[A-Za-z_]+$/.test(t))) return undefined;
  return v;
}
