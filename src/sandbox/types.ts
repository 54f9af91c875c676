/** Types shared by the sandbox modules. The behaviour they encode is documented in choices.ts. */

export type AccountState = 'active' | 'api_disabled' | 'disabled_by_admin' | 'not_eligible' | 'banned' | 'restricted';
export const ACCOUNT_STATES: readonly AccountState[] = [
  'active', 'api_disabled', 'disabled_by_admin', 'not_eligible', 'banned', 'restricted',
];

export interface SandboxAccountInit {
  apiKey: string;
  balanceUsd?: number;
  state?: AccountState;
  ipAllowlist?: string[] | null;
}

export interface RateWindow { limit: number; windowMs: number }

export type MaintenanceCode = 'MAINTENANCE' | 'API_ORDER_DISABLED' | 'RATE_LIMIT_UNAVAILABLE';

export interface FaultSettings {
  /** POST /orders: order created, then the socket is destroyed without a reply. */
  lostResponseShare: number;
  /** POST /orders: 500 before anything is created. */
  error5xxBeforeShare: number;
  /** POST /orders: 500 after the order was created and charged. */
  error5xxAfterShare: number;
  /** POST /orders: share of new orders whose answer is held back `slowMs` (the order stays in flight). */
  slowShare: number;
  slowMs: number;
  /** `untilMs` is an absolute time on the sandbox clock (epoch ms); absent = until cleared. */
  maintenance: null | { code: MaintenanceCode; untilMs?: number };
  /** Accept connections and never answer any public request (admin routes still answer). */
  blackhole: boolean;
  forceRateLimit: null | { remaining: number; retryAfterSec: number; format: 'seconds' | 'http-date' };
  validateBeforeIdempotency: boolean;
  /**
   * GET /history keeps only orders made within this many ms (sandbox clock) and says it has ended
   * there (`hasMore: false`, `total` of those kept): a supplier whose "recent orders" stop at an
   * age. null: every order.
   */
  historyKeepMs: number | null;
  /** GET /history pages hold at most this many orders whatever pageSize asks (a supplier serving short pages). null: as asked. */
  historyPageMax: number | null;
  seed: number;
}

export interface FulfilmentSettings {
  /** Share of top-ups that stay `processing` for a while before completing. */
  processingShare: number;
  /** Range of processing times in ms, [min, max]. */
  processingMs: [number, number];
  /** Share of top-ups that end cancelled + refunded (after their processing time). */
  failShare: number;
  seed: number;
}

export const DEFAULT_FAULTS: FaultSettings = Object.freeze({
  lostResponseShare: 0,
  error5xxBeforeShare: 0,
  error5xxAfterShare: 0,
  slowShare: 0,
  slowMs: 2000,
  maintenance: null,
  blackhole: false,
  forceRateLimit: null,
  validateBeforeIdempotency: false,
  historyKeepMs: null,
  historyPageMax: null,
  seed: 0,
}) as FaultSettings;

export const DEFAULT_FULFILMENT: FulfilmentSettings = Object.freeze({
  processingShare: 0.5,
  processingMs: [2000, 8000],
  failShare: 0.05,
  seed: 0,
}) as FulfilmentSettings;

/**
 * How answers are written (choices.ts, "Answer styles"): `spec` is the spec's exact types;
 * `real-world` writes them the way real deployments of this API do (real-world.ts).
 */
export type AnswerStyle = 'spec' | 'real-world';
export const ANSWER_STYLES: readonly AnswerStyle[] = ['spec', 'real-world'];

/** Knobs of the real-world style; every draw is uniform(seed, …) (fulfilment.ts). */
export interface RealWorldSettings {
  /** Share of public calls answered by a proxy's HTML 502 page; for POST /orders half come after the order was made. 0 disables. */
  htmlShare: number;
  /** Share of failing top-ups that fail at submit (200, orderCreated, cancelled) instead of after processing. */
  instantFailShare: number;
  /** Share of failing top-ups cancelled WITHOUT a refund: the charge stays in the ledger. */
  unrefundedShare: number;
  /** Share of key/card orders that report completed without codes until `lateCodesMs` after placement. */
  lateCodesShare: number;
  lateCodesMs: [number, number];
  seed: number;
}

export const DEFAULT_REAL_WORLD: RealWorldSettings = Object.freeze({
  htmlShare: 0.025,
  instantFailShare: 0.5,
  unrefundedShare: 0.5,
  lateCodesShare: 0.3,
  lateCodesMs: [1000, 4000],
  seed: 0,
}) as RealWorldSettings;

export const DEFAULT_RATE_LIMITS: readonly RateWindow[] = Object.freeze([
  { limit: 40, windowMs: 1000 },
  { limit: 200, windowMs: 60_000 },
]);

export interface RequiredField { field: string; label: string }
export interface OptionValue { value: string; label: string }

export interface ServiceLine {
  productName: string;
  slug: string;
  gameName: string;
  required: RequiredField[];
  status: string;
  serverIdOptions?: OptionValue[];
  regionOptions?: OptionValue[];
  [extra: string]: unknown;
}

export interface CatalogProduct {
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
  [extra: string]: unknown;
}

export interface Catalog { services: ServiceLine[]; products: CatalogProduct[] }

export type OrderStatus = 'processing' | 'completed' | 'cancelled';

/** An order as stored; amounts in micro-dollars so sums never drift. */
export interface OrderRecord {
  orderId: string;
  account: string; // fingerprint, never the key
  idemKey: string;
  trxid: string;
  pid: string;
  game: string;
  packName: string;
  amountMicros: number;
  quantity: number | null;
  userId: string | null;
  serverId: string | null;
  moreId: string | null;
  zoneId: string | null;
  codes: string[] | null;
  status: OrderStatus;
  error: string | null;
  refunded: boolean;
  /** Whether a cancel gives the money back; decided at placement (real-world: not always). */
  refundOnCancel: boolean;
  /** 'manual': placed outside the API (real-world.ts), never settles, has no trxid. */
  source: 'api' | 'manual';
  /**
   * The answer style in force when the order was created, which fixes the id it is shown by for
   * good (order-ids.ts): a real supplier never respells an order id it has handed out. Null for
   * orders of state files written before this was kept: they follow the style in force.
   */
  idStyle: 'spec' | 'real-world' | null;
  createdAt: number;
  settleAt: number | null;
  settleTo: 'completed' | 'cancelled' | null;
  doneAt: number | null;
}

export interface LedgerEntry {
  time: number;
  account: string;
  /** `check`: a player check charged by the check tariff (players.ts), never an order. */
  kind: 'charge' | 'refund' | 'topup' | 'check';
  orderId: string | null;
  trxid: string | null;
  amountUsd: number;
}

export interface CallLogEntry {
  t: number;
  method: string;
  route: string;
  status: number;
  account: string;
  /** true when the call consumed rate budget (it passed the limiter). */
  admitted: boolean;
}

export type Clock = () => number;

export const MICROS = 1_000_000;
export const toMicros = (usd: number): number => Math.round(usd * MICROS);
export const toUsd = (micros: number): number => Math.round(micros) / MICROS;
