/**
 * Who may use the console, and proof that a form was sent by the console's own page.
 *
 * - Host: bound to loopback, only requests addressed to a loopback name (127.0.0.1, localhost,
 *   [::1], any port: an SSH tunnel may use another) are answered. A web page elsewhere that
 *   points its own host name at 127.0.0.1 (DNS rebinding) would otherwise be "same origin" with
 *   the console and could read its pages and forms.
 * - Token (TOPUP_CONSOLE_TOKEN[_FILE]): when set, every page needs a session from /login, and
 *   `Authorization: Bearer <token>` works instead (curl, Prometheus). Without a token (loopback
 *   only, config/config.ts refuses otherwise) anyone on this machine who can reach the port may use it,
 *   as anyone who can read the home folder may run the CLI.
 * - Sessions are signed cookies (HttpOnly, SameSite=Strict, 12 h) under a key kept in the store,
 *   so a restart of the daemon does not log everyone out, and changing the token does.
 * - CSRF: every POST must come from the console's origin (hono/csrf: Origin or Sec-Fetch-Site)
 *   AND carry the session's form token (`_csrf` field or `x-csrf-token` header). Requests with
 *   the Bearer token need no form token: a browser never adds that header by itself.
 */
import { systemClock } from '../kernel/clock.js';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { csrf } from 'hono/csrf';
import type { MetaStore } from '../store/meta.js';
import type { ConsoleSettings } from '../config/console-settings.js';
import { isLoopbackHost } from '../config/console-settings.js';

export interface Session {
  sid: string;
  /** Logged in (or no token is needed). */
  authed: boolean;
  /** Who acts, as the operator gave it at login; '' when not given. */
  name: string;
  exp: number;
  via: 'cookie' | 'bearer';
}

export interface ConsoleEnv {
  Variables: { session: Session; csrfToken: string; address: string };
}

const COOKIE = 'topup_session';
const SESSION_MS = 12 * 3_600_000;
const SECRET_KEY = 'console.sessionSecret';

export class Sessions {
  readonly #key: Buffer;
  readonly #tokenHash: Buffer | null;

  constructor(meta: MetaStore, settings: ConsoleSettings) {
    let secret = meta.get(SECRET_KEY);
    if (!secret) {
      secret = randomBytes(32).toString('hex');
      meta.set(SECRET_KEY, secret);
    }
    this.#tokenHash = settings.token ? sha256(settings.token) : null;
    this.#key = createHmac('sha256', secret).update(`token:${settings.token ?? ''}`).digest();
  }

  get tokenRequired(): boolean {
    return this.#tokenHash !== null;
  }

  /** Constant-time comparison of a presented token with the configured one. */
  tokenMatches(presented: string): boolean {
    return this.#tokenHash !== null && timingSafeEqual(sha256(presented), this.#tokenHash);
  }

  #sign(data: string): string {
    return createHmac('sha256', this.#key).update(data).digest('base64url');
  }

  csrfFor(s: Session): string {
    return this.#sign(`csrf:${s.sid}`);
  }

  csrfMatches(s: Session, presented: string | undefined): boolean {
    if (!presented) return false;
    const want = Buffer.from(this.csrfFor(s));
    const got = Buffer.from(presented);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  read(c: Context): Session | null {
    const cookie = getCookie(c, COOKIE);
    if (!cookie) return null;
    const [body, mac] = cookie.split('.');
    if (!body || !mac) return null;
    const want = Buffer.from(this.#sign(body));
    const got = Buffer.from(mac);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return null;
    try {
      const s = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Session;
      if (typeof s.sid !== 'string' || typeof s.exp !== 'number' || s.exp < systemClock.now()) return null;
      return { sid: s.sid, authed: s.authed === true || !this.tokenRequired, name: typeof s.name === 'string' ? s.name : '', exp: s.exp, via: 'cookie' };
    } catch {
      return null;
    }
  }

  /** A new session; `sid` keeps the current one (and with it the form token of pages already open). */
  issue(c: Context, s: { authed: boolean; name: string; sid?: string }): Session {
    const session: Session = { sid: s.sid ?? randomBytes(16).toString('base64url'), authed: s.authed, name: s.name, exp: systemClock.now() + SESSION_MS, via: 'cookie' };
    const body = Buffer.from(JSON.stringify({ sid: session.sid, authed: session.authed, name: session.name, exp: session.exp })).toString('base64url');
    // Secure only where the browser reached us over https (a TLS proxy in front): a Secure
    // cookie over plain http on 127.0.0.1 would never be sent back.
    const secure = c.req.header('x-forwarded-proto') === 'https' || c.req.url.startsWith('https:');
    setCookie(c, COOKIE, `${body}.${this.#sign(body)}`, { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: SESSION_MS / 1000, secure });
    return session;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function remoteAddress(c: Context): string {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? 'unknown';
}

/** Refuses requests addressed to a host name that is not loopback while bound to loopback. */
export function hostCheck(settings: ConsoleSettings): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    c.set('address', remoteAddress(c));
    if (!settings.loopback) return next();
    const host = c.req.header('host') ?? '';
    const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
    if (!isLoopbackHost(name)) {
      return c.text(`This console answers only at 127.0.0.1 or localhost (it was asked for "${host}").\n`, 421);
    }
    return next();
  };
}

/** Reads (or starts) the session; sends to /login when a token is needed and not given. */
export function sessionGate(sessions: Sessions): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    let session: Session | null = null;
    if (bearer !== undefined) {
      if (!sessions.tokenMatches(bearer)) return c.text('wrong token\n', 401, { 'www-authenticate': 'Bearer' });
      session = { sid: 'bearer', authed: true, name: 'bearer', exp: Number.MAX_SAFE_INTEGER, via: 'bearer' };
    }
    session ??= sessions.read(c) ?? sessions.issue(c, { authed: !sessions.tokenRequired, name: '' });
    c.set('session', session);
    c.set('csrfToken', sessions.csrfFor(session));
    const open = c.req.path === '/login' || c.req.path.startsWith('/assets/') || c.req.path === '/favicon.svg';
    if (!session.authed && !open) {
      if (c.req.path === '/metrics' || c.req.path === '/events' || c.req.path.startsWith('/api/')) {
        return c.text('log in first, or send Authorization: Bearer <TOPUP_CONSOLE_TOKEN>\n', 401, { 'www-authenticate': 'Bearer' });
      }
      const next = c.req.method === 'GET' ? c.req.path + (new URL(c.req.url).search || '') : '/';
      return c.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
    }
    return next();
  };
}

/** Origin check (hono/csrf) and the session's form token on every request that is not GET/HEAD. */
export function csrfGuard(sessions: Sessions): MiddlewareHandler<ConsoleEnv> {
  const origin = csrf();
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const session = c.get('session');
    if (session.via === 'bearer') return next();
    return origin(c, async () => {
      let presented = c.req.header('x-csrf-token');
      if (presented === undefined) {
        const type = c.req.header('content-type') ?? '';
        if (/^(multipart\/form-data|application\/x-www-form-urlencoded)/i.test(type)) {
          const body = await c.req.parseBody();
          presented = typeof body._csrf === 'string' ? body._csrf : undefined;
        }
      }
      if (!sessions.csrfMatches(session, presented)) {
        c.res = c.text('This form has expired or did not come from the console: go back, reload the page and try again.\n', 403);
        return;
      }
      await next();
    });
  };
}

/** A local path to return to after login; anything else (another site, //host) becomes '/'. */
export function safeNext(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}
