/**
 * Turns a failed API exchange into ONE classification (see Classification in errors.ts).
 * This table is the only place that reads the API's codes; the rest of the program
 * decides on the classification.
 *
 * Choices where the spec is silent, kept here:
 *  - 401 `INVALID JSON` means our body was not JSON: nothing was created → rejected.
 *  - 501 NOT IMPLEMENTED: the base URL points at a build without the route. Nothing can be
 *    sent until the operator fixes TOPUP_API_URL → account (stop sending, keep all state).
 *  - 404 on GET /orders/:id → not-found. A 404 on any other route is a wrong base URL → account.
 *  - 503 with a code other than the three listed, and every other 5xx → ambiguous.
 *  - Any 4xx/5xx whose body cannot be read as JSON → ambiguous (a proxy may have answered
 *    after the service created the order).
 *  - A 403 with an unknown code → account: refusing to send is the safe side.
 */
import type { Classification } from '../errors.js';
import { FailureBodySchema, type FailureBody } from './schemas.js';

const ACCOUNT_CODES = new Set([
  'MISSING_API_KEY',
  'INVALID_API_KEY_FORMAT',
  'INVALID_API_KEY',
  'API_DISABLED',
  'API_DISABLED_BY_ADMIN',
  'API_NOT_ELIGIBLE',
  'ACCOUNT_BANNED',
  'ACCOUNT_RESTRICTED',
  'IP_ALLOWLIST_REQUIRED',
  'IP_NOT_ALLOWED',
]);

const RETRY_LATER_CODES = new Set(['DUPLICATE_IN_FLIGHT', 'RATE_LIMIT', 'MAINTENANCE', 'API_ORDER_DISABLED', 'RATE_LIMIT_UNAVAILABLE']);

/** Codes that mean "orders are paused for everyone": stop sending, keep polling. */
export const ORDER_PAUSE_CODES: ReadonlySet<string> = new Set(['MAINTENANCE', 'API_ORDER_DISABLED']);

export interface ClassifiedFailure {
  classification: Classification;
  apiCode: string | undefined;
  apiError: string | undefined;
  body: FailureBody | undefined;
}

/** The API's code, falling back to an error text that is itself a code (spec 7 lists both forms). */
function codeOf(body: FailureBody): string | undefined {
  if (body.code) return body.code;
  if (body.error && /^[A-Z_ ]+$/.test(body.error)) return body.error.replace(/ /g, '_');
  return undefined;
}

export function classifyFailure(status: number, rawBody: unknown, route: { method: string; path: string }): ClassifiedFailure {
  const parsed = FailureBodySchema.safeParse(rawBody);
  const body = parsed.success ? parsed.data : undefined;
  const result = (classification: Classification): ClassifiedFailure => ({
    classification,
    apiCode: body ? codeOf(body) : undefined,
    apiError: body?.error,
    body,
  });
  if (!body) return result('ambiguous');
  const code = codeOf(body);

  if (body.orderCreated === false && body.status === 'cancelled') return result('rejected');
  if (code && RETRY_LATER_CODES.has(code) && (status === 429 || status === 503)) return result('retry-later');
  if (status === 400) return result('rejected');
  if (status === 401) return result(code === 'INVALID_JSON' ? 'rejected' : 'account');
  if (status === 403) return result(code === 'FORBIDDEN' ? 'forbidden' : 'account');
  if (status === 404) return result(route.method === 'GET' && route.path.startsWith('/orders/') ? 'not-found' : 'account');
  if (status === 501) return result('account');
  if (status === 429) return result('retry-later');
  return result('ambiguous');
}

export function isAccountCode(code: string | undefined): boolean {
  return code !== undefined && ACCOUNT_CODES.has(code);
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
