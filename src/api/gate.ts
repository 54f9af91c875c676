/**
 * What the API client asks of the rate scheduler before every request (account/rate-gate.ts is
 * the one implementation): admission by priority, a hold-off when the API says to wait, and a
 * hook that runs right before a request leaves (where the sender commits its intent to send).
 */
export type RouteName = 'services' | 'products' | 'my-ip' | 'balance' | 'submit' | 'order' | 'history' | 'player-check';

/**
 * Lower runs later. Orders first; reports give way to everything. `acceptance`: the reads a shop's
 * POST /api/v1/orders waits for (the catalog and the balance, orders/desk.ts; a few per minute at
 * most, and only when there is no reading to serve from): a customer waits at a checkout while
 * they are queued, so they go before the orders queued in the gate.
 */
export const Priority = { acceptance: 40, submit: 30, poll: 20, lookup: 10, report: 0 } as const;

export interface CallInfo {
  route: RouteName;
  method: 'GET' | 'POST';
  priority: number;
}

/** A call answered 429 RATE_LIMIT (the account's budget, not one trxid's DUPLICATE_IN_FLIGHT). */
export interface RateLimitedInfo {
  route: RouteName;
  /** Monotonic ms right after the gate admitted the call: the gate finds the call in its log by it. */
  startedMono: number;
  retryAfterMs: number | undefined;
}

/** What the client asks of the rate scheduler. */
export interface CallGate {
  /**
   * Resolves when the call may leave now; the call is counted from that moment. May resolve
   * with a function the client calls once the answer (or the failure) has arrived.
   */
  acquire(call: CallInfo, signal?: AbortSignal): Promise<(() => void) | void>;
  /** The API said to wait (429 RATE_LIMIT / Retry-After): no call of this account before `ms` from now. */
  holdOff(ms: number): void;
  /**
   * Resolves once no hold-off is in force. Called again right before a request leaves, since a
   * Retry-After may have arrived while this call was being prepared after its admission.
   */
  untilClear?(signal?: AbortSignal): Promise<void>;
  /** Called after holdOff on a 429 RATE_LIMIT: a gate that learns its limits judges which window refused (account/learned-limits.ts). */
  onRateLimited?(info: RateLimitedInfo): void;
}

export interface CallOptions {
  priority?: number;
  signal?: AbortSignal;
  /**
   * Runs after the gate admits the call and right before the request leaves. If it throws,
   * nothing is sent and the error is passed on. The sender commits its intent here (a promise:
   * the request leaves once it resolves; the intents of sends admitted together share a commit).
   */
  beforeSend?: () => void | Promise<void>;
}

/** No rate limit: a client built without a gate (the API tests); every runtime passes its scheduler (account/account.ts). */
export const openGate: CallGate = { acquire: async () => {}, holdOff: () => {} };
