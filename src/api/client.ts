/**
 * Typed client of the Reseller API: one method per endpoint, on undici with keep-alive.
 *
 * Every request passes through a CallGate first (the process-wide rate scheduler), so no
 * caller can spend the account's call budget behind the scheduler's back. Answers are read
 * tolerantly (schemas.ts, read.ts): what a real deployment sends becomes this program's types,
 * and nothing past src/api sees a raw answer except the redacted audit copy (ApiAnswer).
 * Every failure is an ApiError with one classification (classify.ts); a 200 that cannot be read
 * as what the route returns is an ApiResponseShapeError.
 * The API key lives only in #headers and is never put in an error, a log line or a cause.
 */
import type { LookupFunction } from 'node:net';
import { errors as undiciErrors } from 'undici';
import { systemClock, type Clock } from '../kernel/clock.js';
import { httpTransport, type Transport } from './transport.js';
import { ApiError, ApiResponseShapeError, ErrorCode, NotDispatchedError, TopupError, type ApiAnswer } from '../kernel/errors.js';
import { classifyFailure, parseRetryAfter } from './classify.js';
import { hasOrderIdKey } from './order-id.js';
import { openGate, type CallGate, type CallOptions, type RouteName } from './gate.js';
import { ok, readAnswer, readCapped, saysItFailed, type Exchange } from './wire.js';
import { CHECK_PATHS, checkBody, readCheckAnswer, type PlayerCheckRequest, type PlayerCheckResult } from './player-check.js';
import { inCheckSpace, isCheckTrxid, sameOrderId } from '../kernel/identity.js';
import {
  readBalance,
  readHistory,
  readList,
  readMyIp,
  readOrder,
  readProduct,
  readServiceLine,
  type Balance,
  type History,
  type Order,
  type OrderRequest,
  type PlacedOrder,
  type Product,
  type ServiceLine,
} from './schemas.js';

// The contract with the rate scheduler (gate.ts), re-exported: most callers import it from here.
export type { CheckKind, CheckOutcome, PlayerCheckRequest, PlayerCheckResult } from './player-check.js';
export { Priority, type CallGate, type CallInfo, type CallOptions, type RouteName } from './gate.js';

/** `4`: IPv4 only (account allowlists are IPv4-only, spec §5); `6`: IPv6 only; `auto`: the system's choice. */
export type IpFamily = 4 | 6 | 'auto';

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** `x-api-key` (default) or `bearer` (Authorization: Bearer). */
  auth?: 'x-api-key' | 'bearer';
  /** Upper bound for one request, from leaving to the last byte of the answer. */
  timeoutMs?: number;
  gate?: CallGate;
  /** Longest Retry-After honoured at once; a longer one holds calls this long, then they look again. */
  retryAfterMaxMs?: number;
  /** Default 4: dual-stack hosts otherwise reach the API over IPv6 and get IP_NOT_ALLOWED. */
  ipFamily?: IpFamily;
  /** Name resolution (default: the system's, dns.lookup); tests give a host name both families. */
  lookup?: LookupFunction;
  /** Told about every response (status, route), for metrics. Never sees headers. */
  onResponse?: (info: { route: RouteName; status: number | undefined; ms: number; serverDate?: string | undefined }) => void;
  /** Told about every element of a list that could not be read and was skipped, and similar oddities. */
  onProblem?: (route: RouteName, problem: string) => void;
  connections?: number;
  /** How requests travel (default: undici over HTTP); the simulator passes its model API. */
  transport?: Transport;
  /** Timers of the request timeout, and the time an answer is stamped with. */
  clock?: Clock;
}

export type HistoryQuery = ({ limit?: number } | { page: number; pageSize?: number }) & {
  /**
   * Take a page with elements that cannot be read as orders (History.skipped), for a report that
   * lists what it can. Every other reader looks for an order and concludes from its absence: for
   * it, such a page is not an answer (an ApiResponseShapeError: read again later, never "not there").
   */
  partial?: boolean;
};

/** An order answer with what came with it: the HTTP status (an order can ride on a 400) and the audit copy. */
export type SubmitAnswer = PlacedOrder & { httpStatus: number; answer: ApiAnswer };
export type OrderAnswer = Order & { answer: ApiAnswer };

/**
 * Largest answer read. Orders, balance and the like are a few hundred bytes, a history page of
 * 200 orders some 100 KB; catalogs of real accounts reach megabytes. A larger answer is not a
 * bigger version of what we expect (a proxy streaming a file, a loop): stop reading it.
 */
const BODY_CAP: Record<RouteName, number> = {
  services: 32 << 20, products: 32 << 20, history: 8 << 20, 'my-ip': 1 << 20, balance: 1 << 20, submit: 1 << 20, order: 1 << 20, 'player-check': 1 << 20,
};
/**
 * Does a POST /orders answer say that an order EXISTS, so that the id it carries is an order's?
 * An id alone does not: a gateway's failure body names its request (`500 {success: false,
 * error: "INTERNAL ERROR", id: "req-…"}`), and taking that for an order would stop the resends
 * that find the real one. So an id is an order id only when the answer says an order exists:
 *  - `orderCreated: true`, whatever else it says (a charge is never read away); never with
 *    `orderCreated: false`;
 *  - a body that says it failed (`success: false`) only if it still names a live order as one: the
 *    id under an order's own key (`orderId`, `order_id`) and the status of an order that exists
 *    (processing, completed: "queued with warnings");
 *  - otherwise a 2xx (an order answer, as the spec shapes it), or, on another status, the id
 *    under an order's own key with an order's status word (a gateway that relayed the order).
 * Leaving an id untaken costs nothing: the row stays in doubt and the same trxid is sent again,
 * which the API answers with the order if it exists. Taking a wrong one stops those resends.
 */
export function saysOrderExists(x: Exchange, order: Order): boolean {
  if (order.orderCreated !== undefined) return order.orderCreated;
  const raw = order.raw;
  const ownKey = hasOrderIdKey(raw);
  if (order.success === false || saysItFailed(x)) return ownKey && order.statusKnown && order.status !== 'cancelled';
  if (ok(x)) return true;
  return ownKey && order.statusKnown;
}

/** Why a request's timeout timer is cancelled: it ended first. */
const REQUEST_ENDED = Symbol('request ended');

export class ResellerClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly ipFamily: IpFamily;
  /** The only copy of the key: in the request headers, nowhere else. */
  readonly #headers: Record<string, string>;
  /** Removes the key from text an answer might echo (a proxy page listing request headers). */
  readonly #redact: (text: string) => string;
  readonly #transport: Transport;
  readonly #clock: Clock;
  readonly #gate: CallGate;
  readonly #retryAfterMaxMs: number;
  readonly #onResponse: ClientOptions['onResponse'];
  readonly #onProblem: ClientOptions['onProblem'];

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.ipFamily = opts.ipFamily ?? 4;
    this.#headers =
      (opts.auth ?? 'x-api-key') === 'bearer'
        ? { authorization: `Bearer ${opts.apiKey}` }
        : { 'x-api-key': opts.apiKey };
    const key = opts.apiKey;
    this.#redact = (text) => (key.length >= 4 ? text.split(key).join('[REDACTED]') : text);
    this.#transport = opts.transport ?? httpTransport({ family: this.ipFamily, ...(opts.lookup ? { lookup: opts.lookup } : {}), ...(opts.connections ? { connections: opts.connections } : {}) });
    this.#clock = opts.clock ?? systemClock;
    this.#gate = opts.gate ?? openGate;
    this.#retryAfterMaxMs = opts.retryAfterMaxMs ?? 300_000;
    this.#onResponse = opts.onResponse;
    this.#onProblem = opts.onProblem;
  }

  async services(opts?: CallOptions): Promise<ServiceLine[]> {
    return this.#list('services', '/services', 'services', readServiceLine, opts);
  }

  async products(opts?: CallOptions): Promise<Product[]> {
    return this.#list('products', '/products', 'products', readProduct, opts);
  }

  /** The `/catalog` alias of `/products` (spec 4.2). */
  async catalog(opts?: CallOptions): Promise<Product[]> {
    return this.#list('products', '/catalog', 'products', readProduct, opts);
  }

  async myIp(opts?: CallOptions): Promise<string> {
    return this.#read('my-ip', '/my-ip', readMyIp, opts);
  }

  async balance(opts?: CallOptions): Promise<Balance> {
    return this.#read('balance', '/balance', readBalance, opts);
  }

  /**
   * GET /orders/:id. Only a 2xx describes the order: a 404 or 500 body with `status: "failed"` is
   * a failure, never a cancelled order. A 2xx about another order id (a cache or proxy mixing
   * answers) says nothing about this one; one without any id whose text says the order was not
   * found ("Order not found") is not-found, not an order in the state its status word names.
   */
  async getOrder(orderId: string, opts?: CallOptions): Promise<OrderAnswer> {
    const path = `/orders/${encodeURIComponent(orderId)}`;
    const x = await this.#exchange('order', 'GET', path, undefined, opts);
    const order = ok(x) && x.readable ? readOrder(x.json) : undefined;
    if (!order || order.success === false) this.#fail(x, 'GET', path, 'no order in the answer');
    // The same order under the order id's one fold (kernel/identity.ts): suppliers answer an id in their own case.
    if (order.orderId !== undefined && !sameOrderId(order.orderId, orderId)) {
      throw new ApiResponseShapeError('/orders/:id', `asked for order ${orderId}, the answer is about order ${order.orderId}`, x.answer, order.orderId);
    }
    if (order.orderId === undefined && classifyFailure(x.status, x.json, { method: 'GET', path }).classification === 'not-found') {
      this.#classified(x, 'GET', path);
    }
    // An answer that names no order cannot end one: `{status: "success", data: null}` is an
    // envelope's word for the call, not the order's state (it stays on the row's doubt clock).
    if (order.orderId === undefined && (order.status === 'completed' || order.status === 'cancelled')) {
      throw new ApiResponseShapeError('/orders/:id', `the answer names no order, so its "${order.statusWord ?? order.status}" is not taken as order ${orderId}'s end`, x.answer);
    }
    return { ...order, answer: x.answer };
  }

  async history(query: HistoryQuery = {}, opts?: CallOptions): Promise<History> {
    const params = new URLSearchParams();
    if ('page' in query) {
      params.set('page', String(query.page));
      if (query.pageSize !== undefined) params.set('pageSize', String(query.pageSize));
    } else if (query.limit !== undefined) {
      params.set('limit', String(query.limit));
    }
    const path = `/history${params.size > 0 ? `?${params}` : ''}`;
    const h = await this.#read('history', path, (body) => readHistory(body, (p) => this.#onProblem?.('history', p)), opts);
    // An element no reader can take as an order may be the one looked for (its id under a key the
    // readers do not know, api/order-id.ts): the page proves no absence (an adversarial review: a
    // charged row read as not placed, test/order-id/history-unread-entry).
    if (h.skipped > 0 && query.partial !== true) {
      throw new ApiResponseShapeError(path.split('?')[0] ?? path, `${h.skipped} element(s) of the history page could not be read as orders with ids: the page cannot show that an order is absent`, undefined);
    }
    return h;
  }

  /**
   * POST /orders. Resolves with the order whenever the answer carries one: an order id, not
   * marked `orderCreated: false`, whatever the HTTP status (a 400 with `orderCreated: true` and
   * an orderId was charged). Rejects with an ApiError otherwise. A 2xx without a readable order
   * is ambiguous: only a resend of the same trxid can tell whether the order exists.
   */
  async submitOrder(body: OrderRequest, opts?: CallOptions): Promise<SubmitAnswer> {
    const path = '/orders';
    // The two trxid spaces never meet (kernel/identity.ts): an order is never sent under a check's.
    const sent = (body as { trxid?: unknown } | undefined)?.trxid;
    if (isCheckTrxid(sent) || (typeof sent === 'string' && inCheckSpace(sent))) throw new TopupError(ErrorCode.Internal, `refused to send an order under the player-check trxid ${body.trxid}`);
    const x = await this.#exchange('submit', 'POST', path, body, opts);
    const order = x.readable ? readOrder(x.json) : undefined;
    if (order?.orderId !== undefined && saysOrderExists(x, order)) {
      return { ...order, orderId: order.orderId, httpStatus: x.status, answer: x.answer };
    }
    const said = saysItFailed(x) || order?.success === false || order?.orderCreated === false || !ok(x);
    if (x.status >= 200 && x.status < 300 && !said) {
      throw new ApiError({ classification: 'ambiguous', method: 'POST', path, status: x.status, detail: 'a 2xx answer without a readable order', body: x.json, answer: x.answer });
    }
    this.#fail(x, 'POST', path);
  }

  /**
   * POST /pubgvvfy or /mlvfy (api/player-check.ts): the player's name, or not-found, in doubt,
   * refused, rate-limited. Never throws for an answer or a lost one: every way a check can end is
   * an outcome. It goes through the account's rate gate like every call (priority: lookup unless
   * told). Refuses (throws) a trxid outside the check space before anything is sent.
   */
  async checkPlayer(req: PlayerCheckRequest, opts?: CallOptions): Promise<PlayerCheckResult> {
    if (!isCheckTrxid(req.trxid)) throw new TopupError(ErrorCode.Internal, `a player check's trxid must be of the check space (kernel/identity.ts), not ${req.trxid}`);
    const path = CHECK_PATHS[req.kind];
    let x: Exchange;
    try {
      x = await this.#exchange('player-check', 'POST', path, checkBody(req), opts);
    } catch (err) {
      // No answer, a timeout, a body too large: nothing is known about the player. A stop before
      // the request left (NotDispatchedError) and the gate's own errors are passed on.
      if (err instanceof ApiError) return { outcome: 'in-doubt', charged: 'maybe', trxid: req.trxid, status: err.status, said: err.message };
      throw err;
    }
    return readCheckAnswer(x, req.trxid, path);
  }

  async close(): Promise<void> {
    await this.#transport.close();
  }

  /** Only a 2xx is read: a 500 carrying `balanceUsd: 0` or `data: []` is a failure, not a value. */
  async #read<T>(route: RouteName, path: string, reader: (body: unknown) => T | undefined, opts?: CallOptions): Promise<T> {
    const x = await this.#exchange(route, 'GET', path, undefined, opts);
    const value = ok(x) && x.readable && !saysItFailed(x) ? reader(x.json) : undefined;
    if (value === undefined) this.#fail(x, 'GET', path);
    return value;
  }

  async #list<T>(route: RouteName, path: string, field: string, readOne: (v: unknown, skip: (p: string) => void) => T | undefined, opts?: CallOptions): Promise<T[]> {
    return this.#read(route, path, (body) => readList(body, field, readOne, (p) => this.#onProblem?.(route, p)), opts);
  }

  /**
   * A 2xx that did not give what the route returns: if its body says it failed (success:false),
   * it is classified like any refusal; otherwise it is a shape error. Non-2xx: classified.
   */
  #fail(x: Exchange, method: 'GET' | 'POST', path: string, what = 'not the expected answer'): never {
    if (ok(x) && !saysItFailed(x) && method === 'GET') {
      throw new ApiResponseShapeError(path.split('?')[0] ?? path, x.readable ? what : 'the body is not JSON', x.answer);
    }
    this.#classified(x, method, path);
  }

  /** The ApiError classify.ts makes of this answer. */
  #classified(x: Exchange, method: 'GET' | 'POST', path: string): never {
    const failure = classifyFailure(x.status, x.readable ? x.json : undefined, { method, path }, x.readable);
    throw new ApiError({
      classification: failure.classification,
      method,
      path,
      status: x.status,
      apiCode: failure.apiCode,
      apiError: failure.apiError,
      mayExist: failure.mayExist,
      retryAfterMs: x.retryAfterMs,
      body: x.readable ? x.json : undefined,
      answer: x.answer,
      ...(x.status >= 300 && x.status < 400 ? { detail: `redirected (${x.status}) to ${String((x.answer.body as { location?: string })?.location ?? 'elsewhere')}: set TOPUP_API_URL to the API's own address` } : {}),
    });
  }

  /** Admission, the request, the whole (capped) body, the hold-off a 429 asks for. */
  async #exchange(route: RouteName, method: 'GET' | 'POST', path: string, body: unknown, opts?: CallOptions): Promise<Exchange> {
    const priority = opts?.priority ?? (route === 'submit' ? 30 : 10);
    const answered = await this.#gate.acquire({ route, method, priority }, opts?.signal);
    const started = this.#clock.mono();
    try {
      await this.#gate.untilClear?.(opts?.signal);
      await opts?.beforeSend?.();
      if (this.#gate.untilClear) {
        // beforeSend may block or wait (a synchronous commit). A 429 that reached the socket meanwhile
        // is read in the next I/O phase: let it be handled, then look at the hold-off again.
        await this.#clock.yield();
        await this.#gate.untilClear(opts?.signal);
      }
    } catch (err) {
      answered?.();
      // A stop while the call waited for the hold: its request never left.
      if (opts?.signal?.aborted && !(err instanceof TopupError)) throw new NotDispatchedError(`${method} ${path}`, err);
      throw err;
    }
    // One controller per request, ended by the timeout or by the caller's signal. The listener
    // on a long-lived caller signal is removed when the request ends, so none accumulate.
    const request$ = new AbortController();
    const timer = new AbortController();
    this.#clock.sleep(this.timeoutMs, timer.signal).then(
      () => request$.abort(new DOMException('request timed out', 'TimeoutError')),
      () => {},
    );
    const onAbort = (): void => request$.abort(opts?.signal?.reason);
    if (opts?.signal?.aborted) onAbort();
    else opts?.signal?.addEventListener('abort', onAbort, { once: true });
    let status: number | undefined;
    let serverDate: string | undefined;
    try {
      const res = await this.#transport.send({
        url: `${this.baseUrl}${path}`,
        method,
        headers: {
          ...this.#headers,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: request$.signal,
      });
      status = res.status;
      answered?.();
      serverDate = typeof res.headers.date === 'string' ? res.headers.date : undefined;
      let text: string;
      try {
        text = await readCapped(res.body, BODY_CAP[route]);
      } catch (err) {
        throw this.#networkError(method, path, err, status);
      }
      const x = readAnswer(`${method} ${path.split('?')[0]}`, status, text, this.#redact, this.#clock.now());
      if (status >= 300 && status < 400) {
        const location = res.headers.location;
        x.answer.body = { location: typeof location === 'string' ? this.#redact(location) : undefined, body: x.answer.body };
      }
      x.retryAfterMs = parseRetryAfter(res.headers['retry-after'], this.#clock.now());
      if (status === 429 || status === 503) this.#holdFor(x, route, method, path, started);
      return x;
    } catch (err) {
      if (err instanceof ApiError || err instanceof ApiResponseShapeError) throw err;
      throw this.#networkError(method, path, err, status);
    } finally {
      // A constant reason: abort() without one builds a DOMException, per call.
      timer.abort(REQUEST_ENDED);
      opts?.signal?.removeEventListener('abort', onAbort);
      answered?.();
      this.#onResponse?.({ route, status, ms: this.#clock.mono() - started, serverDate });
    }
  }

  /**
   * Any 429 but DUPLICATE_IN_FLIGHT (which is about one trxid) means our view of the account's
   * budget is off: hold every call for Retry-After, or one second without it. A 503
   * RATE_LIMIT_UNAVAILABLE that names a Retry-After is honoured the same way. A Retry-After
   * longer than TOPUP_RETRY_AFTER_MAX_MS holds calls that long: then they look again (and a
   * new 429 holds them again), so one odd header cannot freeze the daemon for a day.
   */
  #holdFor(x: Exchange, route: RouteName, method: string, path: string, started: number): void {
    const retryAfterMs = x.retryAfterMs;
    const failure = classifyFailure(x.status, x.readable ? x.json : undefined, { method, path }, x.readable);
    if (failure.holdCalls === false || (failure.holdCalls === 'with-retry-after' && retryAfterMs === undefined)) return;
    const wanted = retryAfterMs ?? 1000;
    if (wanted > this.#retryAfterMaxMs) {
      this.#onProblem?.(route, `Retry-After of ${Math.round(wanted / 1000)} s is longer than TOPUP_RETRY_AFTER_MAX_MS; holding ${Math.round(this.#retryAfterMaxMs / 1000)} s, then trying again`);
    }
    this.#gate.holdOff(Math.min(wanted, this.#retryAfterMaxMs));
    // The budget, not a 503 of the limiter itself: the gate may learn the API's real limits from it.
    if (x.status === 429) this.#gate.onRateLimited?.({ route, startedMono: started, retryAfterMs });
  }

  /**
   * Network failures, timeouts and aborts are ambiguous. The undici error is reduced to its
   * code and message (no request options, so never a header) before it is kept as the cause.
   */
  #networkError(method: string, path: string, err: unknown, status: number | undefined): ApiError {
    const e = err as { name?: string; code?: string; message?: string };
    const timedOut =
      e?.name === 'TimeoutError' ||
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.BodyTimeoutError;
    const tooBig = e?.code === 'TOPUP_BODY_TOO_LARGE';
    const detail = timedOut
      ? `no answer within ${this.timeoutMs} ms`
      : tooBig
        ? (e.message ?? 'answer too large')
        : `${e?.code ?? e?.name ?? 'network error'}: ${e?.message ?? ''}`.trim();
    return new ApiError({
      classification: 'ambiguous',
      method,
      path,
      status,
      detail: this.#redact(detail),
      cause: { code: e?.code ?? e?.name, message: e?.message === undefined ? undefined : this.#redact(e.message) },
    });
  }
}
