/**
 * The bearer token check in front of every data route of /api/v1. Always required, even on
 * loopback: the API places orders, and anything on this machine (a browser tab included) can
 * reach a loopback port. A browser never adds an Authorization header by itself, so a page
 * elsewhere cannot use the API through a visitor's browser (no cookies, no CSRF to guard).
 *
 * 401 UNAUTHORIZED (with WWW-Authenticate: Bearer) without a token or with a wrong one;
 * 403 INSUFFICIENT_SCOPE naming the scope(s) missing. The token is checked before the body is
 * read: a caller without a token learns nothing about what it sent.
 */
import type { MiddlewareHandler } from 'hono';
import type { Scope } from '../orders/types.js';
import { problemResponse } from './problem.js';
import type { TokenIdentity, TokenStore } from './tokens.js';

export interface ApiEnv {
  Variables: { token: TokenIdentity };
}

const BEARER = /^Bearer[ \t]+([A-Za-z0-9._~+/=-]+)[ \t]*$/i;

export function requireScopes(tokens: TokenStore, ...needed: Scope[]): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    const presented = header === undefined ? undefined : BEARER.exec(header)?.[1];
    const who = presented === undefined ? undefined : tokens.verify(presented);
    if (!who) {
      return problemResponse({
        status: 401,
        code: 'UNAUTHORIZED',
        detail: header === undefined
          ? 'Send Authorization: Bearer <token> (TOPUP_ORDER_API_TOKEN, or one made with topup token create).'
          : 'The bearer token is not valid (wrong, revoked, or malformed).',
        headers: { 'www-authenticate': `Bearer realm="topup", scope="${needed.join(' ')}"` },
      });
    }
    const missing = needed.filter((s) => !who.scopes.includes(s));
    if (missing.length > 0) {
      return problemResponse({
        status: 403,
        code: 'INSUFFICIENT_SCOPE',
        detail: `This token (${who.name}) lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: make one with topup token create --scope ${[...new Set([...who.scopes, ...missing])].join(',')}.`,
        extra: { missingScopes: missing },
        headers: { 'www-authenticate': `Bearer realm="topup", error="insufficient_scope", scope="${needed.join(' ')}"` },
      });
    }
    c.set('token', who);
    return next();
  };
}
