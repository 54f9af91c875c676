/**
 * The order API's vocabulary (docs/order-api.md): what a shop sends, what it is told, and the
 * contract between the order desk (src/orders/desk.ts: acceptance, reads, the change feed), the
 * HTTP layer (src/orderapi/) and the webhook deliverer (src/webhooks/). The HTTP layer's zod
 * schemas describe exactly these shapes; a test holds every answer to the OpenAPI document.
 *
 * An API order is a row like any file's (the same state machine, trxid rules, review, results).
 * A shop sees a coarser status than the row's state: what it can act on.
 */
import type { RowState } from '../store/row-states.js';

/**
 * A shop's view of a row's state. `accepted`: stored, no request for it has left yet (or waiting
 * before its first send, e.g. for balance); `sent`: a request left, whether an order exists is not known yet (never "not charged");
 * `processing`: the supplier has the order; `completed` / `cancelled`: the order's end (cancelled:
 * placed then failed, refunded or not); `rejected`: nothing was bought (refused, price rose,
 * cancelled before sending); `review`: a person must decide whether it was charged.
 */
export const PUBLIC_STATUSES = ['accepted', 'sent', 'processing', 'completed', 'cancelled', 'rejected', 'review'] as const;
export type PublicStatus = (typeof PUBLIC_STATUSES)[number];

/**
 * The same mapping as the triggers of migrations 12 and 22 (a test holds the two equal). `sentBefore`:
 * a request for the row has left (first_sent_at): a row back in `pending` after a plainly refused
 * send (maintenance, a rate limit, no balance) stays `sent` until it is placed or ends, so a shop
 * does not see `accepted` / `sent` flip with every resend, and never reads "not sent" of a row that
 * is sent again at the next probe (docs/order-api.md).
 */
export function publicStatus(state: RowState, sentBefore = false): PublicStatus {
  switch (state) {
    case 'pending':
      return sentBefore ? 'sent' : 'accepted';
    case 'sending':
    case 'resending':
    case 'verifying':
    case 'searching':
      return 'sent';
    case 'processing':
    case 'unseen':
      return 'processing';
    case 'invalid':
    case 'rejected':
    case 'skipped':
      return 'rejected';
    default:
      return state;
  }
}

/** The statuses an order never leaves (review may still be resolved: event `order.resolved`). */
export const FINAL_PUBLIC_STATUSES: readonly PublicStatus[] = Object.freeze(['completed', 'cancelled', 'rejected']);

/** Event types: `order.<status>`, and `order.resolved` when a review ends (its data.status is the end). */
export type OrderEventType = `order.${PublicStatus}` | 'order.resolved';

/**
 * The scopes a token may hold, declared once (tokens, `topup token create`, the document).
 * `players:check`: POST /players/check, a player-name check that may be charged by the supplier
 * (docs/player-checks.md), so a token makes checks only when it was given this scope.
 */
export const SCOPES = ['orders:write', 'orders:read', 'codes:read', 'players:check'] as const;
export type Scope = (typeof SCOPES)[number];

/** POST /api/v1/orders: the fields of a file row, by their API names. */
export interface OrderInput {
  trxid: string;
  pid?: string | undefined;
  slug?: string | undefined;
  pack?: string | undefined;
  userId?: string | undefined;
  zoneId?: string | undefined;
  serverId?: string | undefined;
  region?: string | undefined;
  moreId?: string | undefined;
  quantity?: number | undefined;
  maxPriceUsd?: number | undefined;
  /** Several accounts: pins the order to this account (as a file's account column). */
  account?: string | undefined;
  /** Carried through untouched (results, views, webhooks); at most 4 KB as JSON. */
  meta?: Record<string, unknown> | undefined;
  /** Where this order's webhooks go instead of TOPUP_ORDER_WEBHOOK_URL: only an origin TOPUP_ORDER_WEBHOOK_ALLOW names. */
  callbackUrl?: string | undefined;
  /** true: an order the balance cannot cover now is queued (waits for a top-up) instead of refused. */
  queue?: boolean | undefined;
  /**
   * The player check before the order is stored (docs/player-checks.md): true asks for one
   * whatever TOPUP_PLAYER_CHECKS says, false sends without one, absent follows TOPUP_PLAYER_CHECKS
   * for the order's line. How to send, not what to buy: not part of the body's identity.
   */
  checkPlayer?: boolean | undefined;
}

export interface OrderChange {
  /** The event's id (its feed cursor): `evt_<n>`. */
  eventId: string;
  type: OrderEventType;
  status: PublicStatus;
  /** ISO 8601, UTC. */
  at: string;
}

export interface OrderView {
  /** The shop's trxid, as it was accepted. */
  trxid: string;
  /** Several accounts: the trxid the order is sent under after it moved to another account (`<trxid>-<account>`). */
  sentAs?: string;
  status: PublicStatus;
  /** The row's state (docs/state-machine.md), for diagnosis: shops act on `status`. */
  state: RowState;
  /** The day's API batch it is stored in. */
  batchId: string;
  account: string;
  /** The supplier's order id, once known. */
  orderId: string | null;
  pid: string | null;
  slug: string | null;
  pack: string | null;
  quantity: number | null;
  player: { userId?: string; zoneId?: string; serverId?: string; region?: string; moreId?: string };
  /** The player's in-game name the supplier's check gave before the order was stored; null when no check was made (or it named no one). */
  playerName: string | null;
  /** Price per unit and the order's price when accepted (catalog), the cap given, and what the supplier charged. */
  unitPriceUsd: number | null;
  expectedUsd: number | null;
  maxPriceUsd: number | null;
  amountUsd: number | null;
  refunded: boolean | null;
  /** What the order cost in the end (charged minus refunded); null while not known. */
  netUsd: number | null;
  /** Codes of a key/card order: only for a token with codes:read (webhooks: only with TOPUP_ORDER_WEBHOOK_CODES=1). */
  codes?: string[];
  /** How many codes the order has (whoever reads it). */
  codeCount: number;
  error: { code: string | null; message: string } | null;
  meta: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  /** Every change of status, oldest first (GET /orders/{trxid} only). */
  history?: OrderChange[];
}

/** One event, as the feed lists it and a webhook posts it. */
export interface OrderEvent {
  id: string;
  type: OrderEventType;
  /** ISO 8601, UTC: when the order changed. */
  createdAt: string;
  /** The order now; `data.status` is the status this event is about (it may have moved on since). */
  data: OrderView;
}

export interface FeedPage {
  events: OrderEvent[];
  /** Pass as ?since= to read on; the same cursor when nothing is new. */
  next: string;
}

/** Stable codes of a refused order (problem+json `code`). */
export type RefusalCode =
  | 'INVALID_ORDER'
  | 'TRXID_CONFLICT'
  | 'TRXID_USED'
  | 'INSUFFICIENT_BALANCE'
  | 'CATALOG_UNAVAILABLE'
  | 'BALANCE_UNAVAILABLE'
  | 'CALLBACK_NOT_ALLOWED'
  | 'NOT_ACCEPTING'
  | PlayerCheckRefusalCode;

export interface FieldProblem {
  /** The JSON field ('pid', 'quantity', 'meta' …), as RFC 9457 problem details' `errors[].field`. */
  field: string;
  reason: string;
}

export type AcceptOutcome =
  /** 202: stored durably just now. */
  | { kind: 'accepted'; order: OrderView }
  /** 200: the same trxid with the same body: the order it already is. */
  | { kind: 'same'; order: OrderView }
  | { kind: 'refused'; status: 402 | 409 | 422 | 429 | 502 | 503; code: RefusalCode; detail: string; problems?: FieldProblem[]; extra?: Record<string, unknown>; retryAfterS?: number };

/** What the HTTP layer and the deliverer need from the engine (src/orders/desk.ts implements it). */
export interface OrderDesk {
  /** `recovered`: accepted again from the journal after the store was lost (orders/journal.ts): the catalog's stock and price now are not judged. */
  accept(input: OrderInput, opts?: { recovered?: boolean; account?: string }): Promise<AcceptOutcome>;
  get(trxid: string, opts: { codes: boolean }): OrderView | undefined;
  /** Events after the cursor (`evt_<n>`, or undefined for the start), oldest first, at most `limit`. */
  feed(since: string | undefined, limit: number, opts: { codes: boolean }): FeedPage;
  /** One event by its number (order_events.id), as a webhook posts it; undefined if there is none. */
  event(id: number, opts: { codes: boolean }): OrderEvent | undefined;
}

/** POST /api/v1/players/check: which game (its slug, or a pack of it by pid) and the player's fields, by the order's names. */
export interface PlayerCheckInput {
  pid?: string | undefined;
  slug?: string | undefined;
  userId: string;
  zoneId?: string | undefined;
  /** Several accounts: the account whose supplier key (and rate budget) makes the check. */
  account?: string | undefined;
}

/** The answer of a check that found the player (200). */
export interface PlayerCheckView {
  found: true;
  /** The check: `pubg` (POST /pubgvvfy, a player id) or `ml` (POST /mlvfy, a user id and a zone id). */
  check: 'pubg' | 'ml';
  player: { userId: string; zoneId?: string };
  /** The in-game name; null when the supplier said the player exists without naming them. */
  playerName: string | null;
  /** When the supplier gave this answer (ISO 8601, UTC). */
  checkedAt: string;
  /** true: the answer kept from an earlier check (no call now; TOPUP_PLAYER_CHECK_CACHE_DAYS). */
  cached: boolean;
}

/**
 * Stable codes of a check's refusal, for POST /players/check and for an order that asks for a check:
 * PLAYER_NOT_FOUND (422: the supplier says no such player; the only answer that means "wrong id"),
 * PLAYER_CHECK_RATE_LIMITED (429: the account's call budget; nothing is known about the player),
 * PLAYER_CHECK_IN_DOUBT (503: no usable answer; nothing is known about the player),
 * PLAYER_CHECK_REFUSED (502: the supplier refused the check itself: the key, the route),
 * NO_PLAYER_CHECK (422: the game has no check).
 */
export type PlayerCheckRefusalCode = 'PLAYER_NOT_FOUND' | 'PLAYER_CHECK_RATE_LIMITED' | 'PLAYER_CHECK_IN_DOUBT' | 'PLAYER_CHECK_REFUSED' | 'NO_PLAYER_CHECK' | 'INVALID_CHECK' | 'CATALOG_UNAVAILABLE';

export type PlayerCheckOutcome =
  | { kind: 'found'; view: PlayerCheckView }
  | { kind: 'refused'; status: 422 | 429 | 502 | 503; code: PlayerCheckRefusalCode; detail: string; problems?: FieldProblem[]; extra?: Record<string, unknown>; retryAfterS?: number };

/** What POST /api/v1/players/check needs (orders/desk.ts implements it beside OrderDesk). */
export interface PlayerCheckDesk {
  checkPlayer(input: PlayerCheckInput): Promise<PlayerCheckOutcome>;
}
