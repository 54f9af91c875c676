/**
 * Turns a failed API exchange into ONE classification (see Classification in errors.ts) and one
 * answer to "may the order exist?". This is the only place that reads the API's codes and error
 * texts; the rest of the program decides on the classification.
 *
 * Codes and texts are compared without regard to case, spaces, hyphens or underscores
 * ("Maintenance", "insufficient balance", "IP_NOT_ALLOWED" all match). Choices where the spec is
 * silent, kept here:
 *  - A body that cannot be read (an HTML page from a proxy, empty, truncated) may have followed
 *    the creation of an order: for POST /orders it always leaves the order in doubt.
 *  - 401 `INVALID JSON` means our body was not JSON: nothing was created → rejected.
 *  - Any other 401/403 on any route → account (stop sending, keep all state), except 403
 *    FORBIDDEN on POST /orders: that trxid belongs to another account.
 *  - A 3xx (a redirect; never followed) and 501 NOT IMPLEMENTED: TOPUP_API_URL points at the wrong
 *    place. Nothing can be sent until the operator fixes it → account.
 *  - 404 on GET /orders/:id → not-found. 404 or 501 on GET /history → not-found (a deployment
 *    without history: polling falls back to GET /orders/:id). A 404 on another route → account.
 *  - 503 MAINTENANCE / API_ORDER_DISABLED, and a 503 with no code at all → paused (orders stop,
 *    polls go on). A 503 without a readable code leaves the order in doubt.
 *  - A refusal (400, 409, 422, or a 2xx saying success:false / orderCreated:false) whose text says
 *    the trxid was already used → duplicate-trxid: the order may exist, history decides.
 *  - A refusal for balance → insufficient-balance (the batch waits for a top-up).
 *  - Every other 4xx/5xx → ambiguous.
 */
import type { Classification } from '../errors.js';
import { readFailureBody, type FailureBody } from './schemas.js';

/** `Too many requests` → TOO_MANY_REQUESTS: the one form codes and texts are compared in. */
export function normaliseCode(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const c = text.trim().toUpperCase().replace(/[\s_-]+/g, '_');
  return c === '' ? undefined : c;
}

const ACCOUNT_CODES = new Set([
  'MISSING_API_KEY', 'INVALID_API_KEY_FORMAT', 'INVALID_API_KEY', 'API_DISABLED', 'API_DISABLED_BY_ADMIN',
  'API_NOT_ELIGIBLE', 'ACCOUNT_BANNED', 'ACCOUNT_RESTRICTED', 'IP_ALLOWLIST_REQUIRED', 'IP_NOT_ALLOWED',
]);
const PAUSE_CODES = new Set(['MAINTENANCE', 'API_ORDER_DISABLED']);
const DUPLICATE_IN_FLIGHT = 'DUPLICATE_IN_FLIGHT';
const RATE_CODES = new Set(['RATE_LIMIT', 'TOO_MANY_REQUESTS', 'RATE_LIMIT_UNAVAILABLE']);

const TRXID_USED = /(^|_)(TRX_?ID|ID_?TRX|TRANSACTION(_ID)?|REFERENCE(_ID)?|REF_?ID|ORDER_?ID)(_|$).*(ALREADY|EXISTS?|USED|TAKEN|DUPLICATED?|SUDAH)|(^|_)DUPLICATE_(TRX|TRANSACTION|REFERENCE|ORDER)/;
const BALANCE_SHORT = /INSUFFICIENT_(BALANCE|FUNDS|SALDO)|NOT_ENOUGH_(BALANCE|FUNDS)|BALANCE_(IS_)?(NOT_ENOUGH|INSUFFICIENT|TOO_LOW)|SALDO_TIDAK_CUKUP/;
const PLAYER_ID_FAILURE = /INVALID_(PLAYER|USER|UID|USER_?ID|PLAYER_?ID|GAME_?ID|ACCOUNT_?ID)|(PLAYER|USER|UID|ACCOUNT)_(ID_)?NOT_FOUND|WRONG_(PLAYER|USER|UID)/;
const MAINTENANCE_TEXT = /MAINTENANCE|UNDER_MAINTENANCE/;

export interface ClassifiedFailure {
  classification: Classification;
  /** May an order exist after this answer (POST /orders)? True leaves the row in doubt. */
  mayExist: boolean;
  /** The API's code as sent (code field, or an error text that is itself a code). */
  apiCode: string | undefined;
  apiError: string | undefined;
  body: FailureBody | undefined;
}

/** The API's code as sent, falling back to an error text that reads as a code (spec 7 lists both). */
function codeOf(body: FailureBody): string | undefined {
  if (body.code) return body.code;
  if (body.error && /^[A-Za-z_ ]{3,40}$/.test(body.error.trim())) return normaliseCode(body.error);
  return undefined;
}

export interface RouteInfo {
  method: string;
  path: string;
}

/**
 * `status` is the HTTP status; a 2xx here is one whose body said success:false or
 * orderCreated:false. `readable` is false for a body that is not JSON at all.
 */
export function classifyFailure(status: number, rawBody: unknown, route: RouteInfo, readable = rawBody !== undefined): ClassifiedFailure {
  const body = readable ? readFailureBody(rawBody) : undefined;
  const submit = route.method === 'POST';
  const apiCode = body ? codeOf(body) : undefined;
  const code = normaliseCode(apiCode);
  const text = normaliseCode(`${body?.code ?? ''} ${body?.error ?? ''}`) ?? '';
  const result = (classification: Classification, mayExist = false): ClassifiedFailure => ({
    classification,
    // Without a body we can read, nothing proves the request was turned away before an order was made.
    mayExist: submit && (mayExist || !body),
    apiCode,
    apiError: body?.error,
    body,
  });

  if (status >= 300 && status < 400) return result('account', true);
  if (code === DUPLICATE_IN_FLIGHT) return result('retry-later', true);
  if (status === 401) return result(code === 'INVALID_JSON' ? 'rejected' : 'account');
  if (status === 403) return result(code === 'FORBIDDEN' && submit ? 'forbidden' : 'account');
  if (code && ACCOUNT_CODES.has(code)) return result('account');
  if (code && RATE_CODES.has(code) && (status === 429 || status === 503)) return result('retry-later');
  if (status === 429) return result('retry-later', !body);
  if ((code && PAUSE_CODES.has(code)) || (status === 503 && MAINTENANCE_TEXT.test(text))) return result('paused');
  if (status === 503) return result('paused', code === undefined);
  if (status === 404 || status === 501) {
    if (route.method === 'GET' && (route.path.startsWith('/orders/') || route.path.startsWith('/history'))) return result('not-found');
    return result('account', true);
  }
  if (code === 'ORDER_NOT_FOUND' && route.method === 'GET') return result('not-found');

  // A refusal: the API judged the request.
  const refusal = status === 400 || status === 409 || status === 422 || (status >= 200 && status < 300 && body !== undefined);
  if (refusal && body) {
    if (TRXID_USED.test(text)) return result('duplicate-trxid', true);
    if (BALANCE_SHORT.test(text)) return result('insufficient-balance');
    if (status === 409) return result('ambiguous', true);
    return result(submit || status === 400 ? 'rejected' : 'ambiguous');
  }
  return result('ambiguous', true);
}

/** An account-wide code (401/403 family), for status displays. */
export function isAccountCode(code: string | undefined): boolean {
  const c = normaliseCode(code);
  return c !== undefined && ACCOUNT_CODES.has(c);
}

/** A cancelled order's reason that blames the player id: retrying the same row cannot fix it. */
export function isPlayerIdFailure(error: string | null | undefined): boolean {
  return PLAYER_ID_FAILURE.test(normaliseCode(error ?? '') ?? '');
}

/** A stored refusal (reject code or text) that was about balance. */
export function isBalanceRefusal(codeOrText: string | null | undefined): boolean {
  return BALANCE_SHORT.test(normaliseCode(codeOrText ?? '') ?? '');
}

/**
 * Retry-After as seconds or as an HTTP date (RFC 9110 §10.2.3). Returns milliseconds from
 * `now`, or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.ceil(Number(v.trim()) * 1000);
  // All three HTTP-date forms start with a day name. Without this check V8's lenient
  // Date.parse reads garbage such as "-5" or "1,5" as a date in 2001 → 0 ms ("retry now").
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(v.trim())) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
