/**
 * Turns a failed API exchange into ONE classification (see Classification in kernel/errors.ts) and one
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
 *  - 503 MAINTENANCE / API_ORDER_DISABLED, and any other 503 → paused (orders stop, polls go on).
 *    Only those documented codes say nothing was created: a 503 without one (no code, a code the
 *    spec does not document, maintenance said in words, an HTTP phrase such as "Service
 *    Unavailable") leaves the order of a POST in doubt. Every other 5xx is ambiguous (in doubt).
 *  - A refusal (400, 409, 422, or a 2xx saying success:false / orderCreated:false) whose text says
 *    the trxid was already used → duplicate-trxid: the order may exist, history decides.
 *  - A refusal for balance → insufficient-balance (the batch waits for a top-up).
 *  - A POST /orders failure body that itself says an order exists (orderCreated: true, a status
 *    of processing/completed, or an id under an order's own key, api/order-id.ts) but is not taken as
 *    an order (client.ts saysOrderExists) → ambiguous, mayExist: a refusal cannot say that, and
 *    only a resend of the same trxid can find the order.
 *  - A POST /orders refusal whose text says the order is still being processed (a supplier's own
 *    DUPLICATE_IN_FLIGHT) → ambiguous, mayExist: the same trxid is sent again later.
 *  - GET /orders/:id: a text saying the order was not found ("Order not found.") → not-found.
 *  - Every other 4xx/5xx → ambiguous.
 *
 * Codes are compared in one normal form (normaliseCode); texts are searched as words (wordsOf:
 * punctuation too becomes `_`), so "trxid: already used" and "Duplicate entry 'X' for key
 * 'orders.trxid'" are found. The text patterns only ever lean towards "the order may exist"
 * (duplicate-trxid) or "held for balance", never towards "nothing was charged".
 */
import type { Classification } from '../kernel/errors.js';
import { absent, isObject, pick, readBoolean, readStatus, readSuccess, readText, unwrap } from './read.js';
import { namesOrder as bodyNamesOrder } from './order-id.js';

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

/** Words that name our trxid in a refusal text; any word saying "used" may follow at any distance. */
const TRXID_WORD = '(TRX_?ID|ID_?TRX|TRANSACTION_ID|REFERENCE(_ID)?|REF_?ID|ORDER_?ID)';
const USED_WORD = '(ALREADY|EXISTS?|USED|TAKEN|DUPLICATED?|UNIQUE|SUDAH|TELAH|DIGUNAKAN|TERPAKAI)';
const TRXID_USED = new RegExp(
  `(^|_)${TRXID_WORD}_(.*_)?${USED_WORD}(_|$)` +
    // "Order already exists", "Transaksi sudah ada": the verb must follow at once, so "Daily order
    // limit already reached" or "Order already cancelled" stay plain refusals.
    '|(^|_)(ORDER|TRANSACTION|TRANSAKSI|PESANAN)_((IS|HAS|WAS|BEEN|ALREADY)_)*(EXISTS?|PLACED|CREATED|SUBMITTED|USED|TAKEN|DUPLICATED?|SUDAH_ADA|TELAH_ADA)(_|$)' +
    // "Duplicate trxid", "Reused trxid", a unique index on the column ("Duplicate entry 'X' for key 'orders.trxid'").
    `|(^|_)(DUPLICATE(_ENTRY)?|REUSED|EXISTING|ALREADY_USED)_(.*_)?(TRX_?ID|ID_?TRX|REF_?ID|REFERENCE|TRANSACTION|ORDER)(_|$)|^DUPLICATE(_REQUEST|_ORDER)?$`,
);
const BALANCE_SHORT = new RegExp(
  '(^|_)(INSUFFICIENT_((ACCOUNT|WALLET|DEPOSIT|API|USD)_)?(BALANCE|FUNDS|SALDO|CREDITS?|DEPOSIT)' +
    '|NOT_ENOUGH_((ACCOUNT|WALLET)_)?(BALANCE|FUNDS|CREDITS?|MONEY)' +
    '|BALANCE_((IS|TOO)_)?(NOT_ENOUGH|INSUFFICIENT|NOT_SUFFICIENT|TOO_LOW|LOW)' +
    '|LOW_BALANCE|SALDO_(ANDA_)?(TIDAK_(CUKUP|MENCUKUPI)|KURANG))(_|$)',
);
const PLAYER_ID_FAILURE = /INVALID_(PLAYER|USER|UID|USER_?ID|PLAYER_?ID|GAME_?ID|ACCOUNT_?ID)|(PLAYER|USER|UID|ACCOUNT)_(ID_)?NOT_FOUND|WRONG_(PLAYER|USER|UID)/;
/** A supplier's own DUPLICATE_IN_FLIGHT: "Order is being processed", "Transaksi sedang diproses". */
const IN_FLIGHT_TEXT = /(^|_)(IN_FLIGHT|(IS_|ARE_)?(BEING|STILL|CURRENTLY)_(BEING_)?(PROCESSED|PROCESSING|IN_PROGRESS)|ORDER_(IS_)?IN_PROGRESS|IN_PROCESS|(SEDANG|MASIH)_(DI)?PROSES)(_|$)/;
/** "Order not found." about the order itself; never "USER NOT FOUND" (a cancelled order's reason). */
const NOT_FOUND_TEXT = /(^|_)(ORDER|INVOICE|TRANSACTION|TRANSAKSI|PESANAN|DATA|RECORD)(_ID)?_(IS_)?(NOT_FOUND|NOT_EXISTS?|DOES_NOT_EXIST|TIDAK_DITEMUKAN)(_|$)|(^|_)(NO_SUCH_ORDER|UNKNOWN_ORDER(_?ID)?)(_|$)|^NOT_FOUND$/;

/** A text as words for searching: `Trxid: already used.` → `TRXID_ALREADY_USED`. */
export function wordsOf(text: string | undefined): string {
  return (text ?? '').toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');
}

export interface ClassifiedFailure {
  classification: Classification;
  /** May an order exist after this answer (POST /orders)? True leaves the row in doubt. */
  mayExist: boolean;
  /** The API's code as sent (code field, or an error text that is itself a code). */
  apiCode: string | undefined;
  apiError: string | undefined;
  body: FailureBody | undefined;
  /**
   * Does this answer say the account's call budget is spent, so every call must wait
   * (Retry-After, or 1 s without one)? Any 429 but DUPLICATE_IN_FLIGHT (which is about one trxid),
   * and a 503 with a rate code (RATE_LIMIT, TOO_MANY_REQUESTS, RATE_LIMIT_UNAVAILABLE: only when it
   * names a Retry-After; the client decides).
   */
  holdCalls: 'always' | 'with-retry-after' | false;
}

/**
 * The API's code as sent, falling back to an error text that reads as a code (spec 7 lists both).
 * Such a text is reported as the code, but it decides nothing unless it is one of the codes named
 * above (ACCOUNT_CODES, PAUSE_CODES …): a short phrase may only name the HTTP status (`{"status":503,
 * "error":"Service Unavailable"}`, the default error body of most Java stacks), which says nothing
 * about whether an order was made (issue 29).
 */
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
  const text = wordsOf(`${body?.code ?? ''} ${body?.error ?? ''} ${body?.details ?? ''}`);
  // The body itself says an order exists (or names one under an order's own key): whatever else it
  // says, it may have been charged. Only a resend of the same trxid can tell, safely.
  const claimsOrder = submit && body !== undefined && (body.orderCreated === true || saysOrderLives(body.status) || (body.namesOrder === true && body.orderCreated !== false));
  const result = (classification: Classification, mayExist = false): ClassifiedFailure => ({
    classification,
    // Without a body we can read, nothing proves the request was turned away before an order was made.
    mayExist: submit && (mayExist || !body || claimsOrder),
    apiCode,
    apiError: body?.details ? `${body.error ?? ''} (${body.details})`.trim() : body?.error,
    body,
    holdCalls: status === 429 && code !== DUPLICATE_IN_FLIGHT ? 'always' : status === 503 && code !== undefined && RATE_CODES.has(code) ? 'with-retry-after' : false,
  });

  if (status >= 300 && status < 400) return result('account', true);
  if (code === DUPLICATE_IN_FLIGHT) return result('retry-later', true);
  if (status === 401) return result(code === 'INVALID_JSON' ? 'rejected' : 'account');
  if (status === 403) return result(code === 'FORBIDDEN' && submit ? 'forbidden' : 'account');
  if (code && ACCOUNT_CODES.has(code)) return result('account');
  if (code && RATE_CODES.has(code) && (status === 429 || status === 503)) return result('retry-later');
  if (status === 429) return result('retry-later', !body);
  // Only a documented pause code says the request was turned away before an order was made. A 503
  // that says maintenance in words, names a code nobody documents, or only the HTTP status (a Java
  // framework's default body) pauses orders all the same, but a POST it answers is in doubt: the
  // order may have been made before the service failed (issue 29).
  if (code && PAUSE_CODES.has(code)) return result('paused');
  if (status === 503) return result('paused', true);
  if (status === 404 || status === 501) {
    if (route.method === 'GET' && (route.path.startsWith('/orders/') || route.path.startsWith('/history'))) return result('not-found');
    return result('account', true);
  }
  if (route.method === 'GET' && (code === 'ORDER_NOT_FOUND' || (route.path.startsWith('/orders/') && NOT_FOUND_TEXT.test(text)))) return result('not-found');

  // A refusal: the API judged the request.
  const refusal = status === 400 || status === 409 || status === 422 || (status >= 200 && status < 300 && body !== undefined);
  if (refusal && body) {
    if (claimsOrder) return result('ambiguous', true);
    // Ambiguous, not retry-later: a text is a guess, and ambiguous resends run on the row's doubt
    // clock (then the history check), while retry-later would resend a misread refusal forever.
    if (submit && IN_FLIGHT_TEXT.test(text)) return result('ambiguous', true);
    if (TRXID_USED.test(text)) return result('duplicate-trxid', true);
    if (BALANCE_SHORT.test(text)) return result('insufficient-balance');
    if (status === 409) return result('ambiguous', true);
    return result(submit || status === 400 ? 'rejected' : 'ambiguous');
  }
  return result('ambiguous', true);
}

/** A status word in a failure body that only an existing order can have (processing, completed). */
function saysOrderLives(status: string | undefined): boolean {
  const st = readStatus(status);
  return st.known && st.status !== 'cancelled';
}

/** A cancelled order's reason that blames the player id: retrying the same row cannot fix it. */
export function isPlayerIdFailure(error: string | null | undefined): boolean {
  return PLAYER_ID_FAILURE.test(normaliseCode(error ?? '') ?? '');
}

/** A stored refusal (reject code or text) that was about balance. */
export function isBalanceRefusal(codeOrText: string | null | undefined): boolean {
  return BALANCE_SHORT.test(wordsOf(codeOrText ?? ''));
}

/**
 * Retry-After as seconds or as an HTTP date (RFC 9110 §10.2.3). Returns milliseconds from
 * `now`, or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
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

/** Failure bodies (spec section 7): `{ success:false, code?, error }` or the submit-rejection shape. */
export interface FailureBody {
  success?: boolean;
  code?: string;
  error?: string;
  /** Texts from a validation bag (`errors: {trxid: ["The trxid has already been taken."]}`), joined. */
  details?: string;
  /** An id under an order's own key (api/order-id.ts ORDER_ID_KEYS): not a gateway's request id (`id`). */
  namesOrder?: boolean;
  orderCreated?: boolean;
  status?: string;
}

/**
 * Reads a failure body in the shapes seen: the spec's; `error` as an object `{code, message}`
 * (JSON:API/Stripe style); a validation bag `errors` as `{field: [texts]}` (Laravel), a list of
 * texts or a list of `{code, message}`. The bag matters: Laravel's `message` is only "The given
 * data was invalid." while `errors.trxid` says the trxid was already taken.
 */
export function readFailureBody(v: unknown): FailureBody | undefined {
  const b = unwrap(v, ['code', 'error', 'message', 'success', 'errors']);
  if (!isObject(b)) return undefined;
  // What the unwrapped body lacks, the envelope around it may say (`{status:false, message, data}`).
  const outer = isObject(v) && v !== b ? v : {};
  const f: FailureBody = {};
  const nested = isObject(b.error) ? b.error : undefined;
  const success = readSuccess(b);
  const ownCode = (o: Record<string, unknown>): string | undefined => {
    const c = readText(pick(o, 'code', 'errorCode', 'error_code'));
    // An HTTP-ish number in `code` (200, 400) is the envelope's, not an API code.
    return c !== undefined && /^\d{3}$/.test(c.trim()) ? undefined : c;
  };
  const ownText = (o: Record<string, unknown>): string | undefined => readText(pick(o, 'error', 'message', 'msg', 'errorMessage'));
  const apiCode = ownCode(b) ?? (nested && readText(pick(nested, 'code', 'type'))) ?? ownCode(outer);
  const error = ownText(b) ?? (nested && readText(pick(nested, 'message', 'msg', 'detail'))) ?? ownText(outer);
  const details = bagTexts(b.errors).join('; ');
  // An order inside the envelope (`{success: false, message, data: {orderCreated: true, status}}`)
  // is as much a sign of a charge as one beside the error: the refusal may not be the last word.
  const inner = isObject(b.data) ? b.data : isObject(outer.data) ? outer.data : {};
  const orderCreated = readBoolean(b.orderCreated) ?? readBoolean(inner.orderCreated);
  const status = readText(b.status) ?? readText(inner.status);
  // The one definition of "names an order" (api/order-id.ts), on the body as sent and as unwrapped.
  const namesOrder = bodyNamesOrder(v) || bodyNamesOrder(b);
  if (success !== undefined) f.success = success;
  if (apiCode !== undefined) f.code = apiCode;
  if (error !== undefined) f.error = error;
  if (details !== '') f.details = details;
  if (orderCreated !== undefined) f.orderCreated = orderCreated;
  if (status !== undefined) f.status = status;
  if (namesOrder) f.namesOrder = true;
  return f;
}

/** Every text in a validation bag, at most a few levels deep. */
function bagTexts(v: unknown, depth = 0): string[] {
  if (depth > 3 || absent(v)) return [];
  const text = readText(v);
  if (text !== undefined) return [text];
  if (Array.isArray(v)) return v.flatMap((x) => bagTexts(x, depth + 1));
  if (isObject(v)) {
    if ('code' in v || 'message' in v) return [readText(v.code), readText(v.message)].filter((x): x is string => x !== undefined);
    return Object.values(v).flatMap((x) => bagTexts(x, depth + 1));
  }
  return [];
}
