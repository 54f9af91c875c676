/**
 * Typed client of the Reseller API: one method per endpoint, on undici with keep-alive.
 *
 * Every request passes through a CallGate first (the process-wide rate scheduler), so no
 * caller can spend the account's call budget behind the scheduler's back. Every failure is
 * an ApiError with one classification; a 200 with the wrong shape is an ApiResponseShapeError.
 * The API key lives only in #headers and is never put in an error, a log line or a cause.
 */
import { Agent, request, errors as undiciErrors } from 'undici';
import type { z } from 'zod';
import { ApiError, ApiResponseShapeError } from '../errors.js';
import { classifyFailure, parseRetryAfter } from './classify.js';
import {
  BalanceResponseSchema,
  HistoryResponseSchema,
  MyIpResponseSchema,
  OrderSchema,
  ProductsResponseSchema,
  ServicesResponseSchema,
  type Balance,
  type History,
  type OrderRequest,
  type Order,
  type PlacedOrder,
  type Product,
  type ServiceLine,
} from './schemas.js';

export type RouteName = 'services' | 'products' | 'my-ip' | 'balance' | 'submit' | 'order' | 'history';

/** Lower runs later. Orders first; reports give way to everything. */
export const Priority = { submit: 30, poll: 20, lookup: 10, report: 0 } as const;

export interface CallInfo {
  route: RouteName;
  method: 'GET' | 'POST';
  priority: number;
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
}

export interface CallOptions {
  priority?: number;
  signal?: AbortSignal;
  /**
   * Runs after the gate admits the call and right before the request leaves. If it throws,
   * nothing is sent and the error is passed on. The sender commits its intent here.
   */
  beforeSend?: () => void;
}

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** `x-api-key` (default) or `bearer` (Authorization: Bearer). */
  auth?: 'x-api-key' | 'bearer';
  /** Upper bound for one request, from leaving to the last byte of the answer. */
  timeoutMs?: number;
  gate?: CallGate;
  /** Told about every response (status, route), for metrics. Never sees headers. */
  onResponse?: (info: { route: RouteName; status: number | undefined; ms: number; serverDate?: string | undefined }) => void;
  connections?: number;
}

export type HistoryQuery = { limit?: number } | { page: number; pageSize?: number };

const openGate: CallGate = { acquire: async () => {}, holdOff: () => {} };

export class ResellerClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly #headers: Record<string, string>;
  readonly #agent: Agent;
  readonly #gate: CallGate;
  readonly #onResponse: ClientOptions['onResponse'];

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.#headers =
      (opts.auth ?? 'x-api-key') === 'bearer'
        ? { authorization: `Bearer ${opts.apiKey}` }
        : { 'x-api-key': opts.apiKey };
    this.#agent = new Agent({ keepAliveTimeout: 30_000, connections: opts.connections ?? 64, pipelining: 1 });
    this.#gate = opts.gate ?? openGate;
    this.#onResponse = opts.onResponse;
  }

  async services(opts?: CallOptions): Promise<ServiceLine[]> {
    return (await this.#get('services', '/services', ServicesResponseSchema, opts)).services;
  }

  async products(opts?: CallOptions): Promise<Product[]> {
    return (await this.#get('products', '/products', ProductsResponseSchema, opts)).products;
  }

  /** The `/catalog` alias of `/products` (spec 4.2). */
  async catalog(opts?: CallOptions): Promise<Product[]> {
    return (await this.#get('products', '/catalog', ProductsResponseSchema, opts)).products;
  }

  async myIp(opts?: CallOptions): Promise<string> {
    return (await this.#get('my-ip', '/my-ip', MyIpResponseSchema, opts)).ip;
  }

  async balance(opts?: CallOptions): Promise<Balance> {
    return this.#get('balance', '/balance', BalanceResponseSchema, opts);
  }

  async getOrder(orderId: string, opts?: CallOptions): Promise<Order> {
    return this.#get('order', `/orders/${encodeURIComponent(orderId)}`, OrderSchema, opts);
  }

  async history(query: HistoryQuery = {}, opts?: CallOptions): Promise<History> {
    const params = new URLSearchParams();
    if ('page' in query) {
      params.set('page', String(query.page));
      if (query.pageSize !== undefined) params.set('pageSize', String(query.pageSize));
    } else if (query.limit !== undefined) {
      params.set('limit', String(query.limit));
    }
    const qs = params.size > 0 ? `?${params}` : '';
    return this.#get('history', `/history${qs}`, HistoryResponseSchema, opts);
  }

  /**
   * POST /orders. Resolves with the order on 200 (created, finished, or an idempotent replay).
   * A 200 that cannot be read, or has no orderId, is ambiguous: only a resend of the same
   * trxid can tell whether the order exists.
   */
  async submitOrder(body: OrderRequest, opts?: CallOptions): Promise<PlacedOrder> {
    const path = '/orders';
    const raw = await this.#send('submit', 'POST', path, body, opts);
    const parsed = OrderSchema.safeParse(raw);
    if (!parsed.success || parsed.data.orderId === undefined) {
      throw new ApiError({
        classification: 'ambiguous',
        method: 'POST',
        path,
        status: 200,
        detail: 'a 200 answer without a readable order',
        body: raw,
      });
    }
    if (parsed.data.orderCreated === false) {
      throw new ApiError({
        classification: 'rejected',
        method: 'POST',
        path,
        status: 200,
        apiError: parsed.data.error,
        body: raw,
      });
    }
    return parsed.data as PlacedOrder;
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  async #get<S extends z.ZodType>(route: RouteName, path: string, schema: S, opts?: CallOptions): Promise<z.output<S>> {
    const raw = await this.#send(route, 'GET', path, undefined, opts);
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new ApiResponseShapeError(path.split('?')[0] ?? path, issues);
    }
    return parsed.data;
  }

  async #send(route: RouteName, method: 'GET' | 'POST', path: string, body: unknown, opts?: CallOptions): Promise<unknown> {
    const priority = opts?.priority ?? (route === 'submit' ? 30 : 10);
    const answered = await this.#gate.acquire({ route, method, priority }, opts?.signal);
    const started = Date.now();
    try {
      await this.#gate.untilClear?.(opts?.signal);
      opts?.beforeSend?.();
      if (this.#gate.untilClear) {
        // beforeSend may block (a synchronous commit). A 429 that reached the socket meanwhile
        // is read in the next I/O phase: let it be handled, then look at the hold-off again.
        await new Promise<void>((resolve) => setImmediate(resolve));
        await this.#gate.untilClear(opts?.signal);
      }
    } catch (err) {
      answered?.();
      throw err;
    }
    // One controller per request, ended by the timeout or by the caller's signal. The listener
    // on a long-lived caller signal is removed when the request ends, so none accumulate.
    const request$ = new AbortController();
    const timer = setTimeout(() => request$.abort(new DOMException('request timed out', 'TimeoutError')), this.timeoutMs);
    const onAbort = (): void => request$.abort(opts?.signal?.reason);
    if (opts?.signal?.aborted) onAbort();
    else opts?.signal?.addEventListener('abort', onAbort, { once: true });
    const signal = request$.signal;
    let status: number | undefined;
    let serverDate: string | undefined;
    try {
      const res = await request(`${this.baseUrl}${path}`, {
        dispatcher: this.#agent,
        method,
        headers: {
          ...this.#headers,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      status = res.statusCode;
      answered?.();
      serverDate = typeof res.headers.date === 'string' ? res.headers.date : undefined;
      let text: string;
      try {
        text = await res.body.text();
      } catch (err) {
        throw this.#networkError(method, path, err, status);
      }
      let json: unknown;
      let readable = true;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        readable = false;
      }
      if (status >= 200 && status < 300) {
        if (!readable || json === undefined) {
          if (route === 'submit') {
            throw new ApiError({ classification: 'ambiguous', method, path, status, detail: 'unreadable 200 body' });
          }
          throw new ApiResponseShapeError(path, 'body is not JSON');
        }
        return json;
      }
      const failure = classifyFailure(status, readable ? json : undefined, { method, path });
      const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      // Any 429 but DUPLICATE_IN_FLIGHT (which is about one trxid) means our view of the account's
      // budget is off: hold every call for Retry-After, or one second without it. A 503
      // RATE_LIMIT_UNAVAILABLE that names a Retry-After is honoured the same way.
      if ((status === 429 && failure.apiCode !== 'DUPLICATE_IN_FLIGHT') || (failure.apiCode === 'RATE_LIMIT_UNAVAILABLE' && retryAfterMs !== undefined)) {
        this.#gate.holdOff(retryAfterMs ?? 1000);
      }
      throw new ApiError({
        classification: failure.classification,
        method,
        path,
        status,
        apiCode: failure.apiCode,
        apiError: failure.apiError,
        retryAfterMs,
        body: failure.body ?? (readable ? json : undefined),
      });
    } catch (err) {
      if (err instanceof ApiError || err instanceof ApiResponseShapeError) throw err;
      throw this.#networkError(method, path, err, status);
    } finally {
      clearTimeout(timer);
      opts?.signal?.removeEventListener('abort', onAbort);
      answered?.();
      this.#onResponse?.({ route, status, ms: Date.now() - started, serverDate });
    }
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
    const detail = timedOut ? `no answer within ${this.timeoutMs} ms` : `${e?.code ?? e?.name ?? 'network error'}: ${e?.message ?? ''}`.trim();
    return new ApiError({
      classification: 'ambiguous',
      method,
      path,
      status,
      detail,
      cause: { code: e?.code ?? e?.name, message: e?.message },
    });
  }
}
