/**
 * Every error of /api/v1 as RFC 9457 problem details (`application/problem+json`): type, title,
 * status, detail, plus a stable `code` a shop's program acts on, and `errors: [{field, reason}]`
 * naming the JSON field at fault. One builder, so no route answers an error in another shape
 * (a shop that parses one problem parses them all; the tests hold every answer to the document).
 */
import type { Context } from 'hono';
import type { ZodError } from 'zod';
import type { FieldProblem } from '../orders/types.js';

export const PROBLEM_TYPE = 'application/problem+json';

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Content too large',
  415: 'Unsupported media type',
  422: 'Unprocessable content',
  429: 'Too many requests',
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
};

/**
 * Every stable code a problem of /api/v1 can carry, with its status and what a shop does about it
 * (the docs page lists them, each under the anchor its `type` points to). The desk's refusal codes
 * (src/orders/types.ts RefusalCode) are among them.
 */
export const PROBLEM_CODES: readonly { code: string; status: number; meaning: string }[] = [
  { code: 'MALFORMED_JSON', status: 400, meaning: 'The body is not JSON. Nothing was stored: fix the body and send it again.' },
  { code: 'EMPTY_BODY', status: 400, meaning: 'A batch without a body. Nothing was stored.' },
  { code: 'INVALID_NAME', status: 422, meaning: 'The batch\'s ?name= is not a usable file name: a path in it, nothing a file name can keep, or not .csv, .tsv, .txt or .xlsx matching the body (errors names the field).' },
  { code: 'INVALID_CURSOR', status: 400, meaning: 'since is not a cursor: pass the next of an earlier page, or leave it out.' },
  { code: 'INVALID_PARAMETER', status: 400, meaning: 'A path or query parameter is not valid (errors names it).' },
  { code: 'UNAUTHORIZED', status: 401, meaning: 'No bearer token, or a wrong or revoked one.' },
  { code: 'INSUFFICIENT_BALANCE', status: 402, meaning: 'The balance cannot cover the order now. Nothing was stored. Top up, or send queue: true to have it wait.' },
  { code: 'INSUFFICIENT_SCOPE', status: 403, meaning: 'The token lacks a scope (missingScopes names it).' },
  { code: 'ORDER_NOT_FOUND', status: 404, meaning: 'No API order has this trxid.' },
  { code: 'BATCH_NOT_FOUND', status: 404, meaning: 'No batch has this id.' },
  { code: 'RESULT_NOT_FOUND', status: 404, meaning: 'The batch is done but its result file is no longer in outbox/ (moved or deleted by someone).' },
  { code: 'NOT_FOUND', status: 404, meaning: 'No such path under /api/v1.' },
  { code: 'METHOD_NOT_ALLOWED', status: 405, meaning: 'The path takes other methods (Allow names them).' },
  { code: 'TRXID_CONFLICT', status: 409, meaning: 'This trxid was accepted with another body: it is another order. Never resend with a changed body; use a new trxid for a new order.' },
  { code: 'TRXID_USED', status: 409, meaning: 'This trxid was used before (by a file row or an earlier order): use a new one.' },
  { code: 'BATCH_NOT_DONE', status: 409, meaning: 'The batch has not finished: its result is not written yet (counts says how far it is).' },
  { code: 'BATCH_FAILED', status: 409, meaning: 'The batch\'s file could not be read (fileError says why): nothing of it was ordered, so there is no result.' },
  { code: 'BODY_TOO_LARGE', status: 413, meaning: 'The body is larger than the route takes.' },
  { code: 'UNSUPPORTED_MEDIA_TYPE', status: 415, meaning: 'The Content-Type is not one the route takes.' },
  { code: 'INVALID_ORDER', status: 422, meaning: 'The order is not valid: errors names each field and why (unknown fields are refused too). Nothing was stored.' },
  { code: 'CALLBACK_NOT_ALLOWED', status: 422, meaning: 'callbackUrl names an origin TOPUP_ORDER_WEBHOOK_ALLOW does not list.' },
  { code: 'INVALID_CHECK', status: 422, meaning: 'The player check is not valid: errors names each field (pid or slug, the player fields, account). No check was made.' },
  { code: 'NO_PLAYER_CHECK', status: 422, meaning: 'The game has no player check (the supplier has them for PUBG Mobile top-ups and Mobile Legends only): errors names pid, slug or an order\'s checkPlayer. Nothing was stored.' },
  { code: 'PLAYER_NOT_FOUND', status: 422, meaning: 'The supplier\'s player check says no player has this id (errors names userId, and zoneId for Mobile Legends). Ask the buyer to correct it; nothing was stored and nothing was charged. The only code that means a wrong id. An order can be sent anyway with "checkPlayer": false.' },
  { code: 'PLAYER_CHECK_RATE_LIMITED', status: 429, meaning: 'The player check could not be made now: the supplier account\'s call budget (Retry-After says when to ask again). Nothing is known about the player: never read it as "not found". An order refused with it was not stored.' },
  { code: 'PLAYER_CHECK_REFUSED', status: 502, meaning: 'The supplier refused the player check itself (the key, the account, a supplier without this check): the reseller must look. Nothing is known about the player: never read it as "not found". An order refused with it was not stored.' },
  { code: 'PLAYER_CHECK_IN_DOUBT', status: 503, meaning: 'The player check got no usable answer (a timeout, an error page). Nothing is known about the player: never read it as "not found"; ask again after Retry-After (a repeat within a minute is answered so without a new call). An order refused with it was not stored.' },
  { code: 'CATALOG_UNAVAILABLE', status: 503, meaning: 'The supplier\'s catalog cannot be read now, so the order cannot be checked. Nothing was stored: send the same order again later.' },
  { code: 'BALANCE_UNAVAILABLE', status: 503, meaning: 'The balance cannot be read now, so the order cannot be funded. Nothing was stored: send it again later, or with queue: true to let it wait.' },
  { code: 'NOT_ACCEPTING', status: 503, meaning: 'The daemon is stopping. Nothing was stored: send the same order again later.' },
  { code: 'INTERNAL', status: 500, meaning: 'The daemon failed (its log has the details). Whether the order was stored is not known: read it (GET /orders/{trxid}) or send the same body again (the same trxid and body answer the same order).' },
];

export interface ProblemInit {
  status: number;
  code: string;
  detail: string;
  errors?: FieldProblem[] | undefined;
  /** More members (RFC 9457 extensions), e.g. balanceUsd; never overriding the standard ones. */
  extra?: Record<string, unknown> | undefined;
  headers?: Record<string, string>;
}

export function problemBody(p: ProblemInit): Record<string, unknown> {
  return {
    ...(p.extra ?? {}),
    // The type names the docs' section on this code: a reader can follow it (relative: it resolves against this daemon).
    type: `/api/v1/docs#problem-${p.code.toLowerCase()}`,
    title: TITLES[p.status] ?? 'Error',
    status: p.status,
    detail: p.detail,
    code: p.code,
    ...(p.errors && p.errors.length > 0 ? { errors: p.errors } : {}),
  };
}

/** A problem answer, built without a context (middleware that runs before the route's). */
export function problemResponse(p: ProblemInit): Response {
  return new Response(JSON.stringify(problemBody(p)), {
    status: p.status,
    headers: { 'content-type': PROBLEM_TYPE, 'cache-control': 'no-store', ...(p.headers ?? {}) },
  });
}

export function problem(_c: Context, p: ProblemInit): Response {
  return problemResponse(p);
}

/**
 * A zod path as a JSON field path: `quantity`, `meta.note`, `[3].trxid` (an element of a batch's
 * array), `` for the body itself.
 */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** zod's issues as field problems; an unknown field is named itself ("unknown field"), one problem per field. */
export function fieldProblems(err: ZodError): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const issue of err.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ field: fieldPath([...issue.path, key]), reason: 'unknown field (see the OpenAPI document for the fields an order takes)' });
    } else {
      out.push({ field: fieldPath(issue.path), reason: issue.message });
    }
  }
  return out;
}
