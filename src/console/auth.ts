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
 * - Wrong tokens (the login form and `Authorization: Bearer` alike) go through one LoginThrottle:
 *   checked one at a time, each wrong one holding the line for WRONG_TOKEN_DELAY_MS, so guesses
 *   sent in parallel are no faster than one after another (40 at once took 0.7 s before); an
 *   address with CALLER_LIMIT wrong tokens within the window is locked out for LOCKOUT_MS, and
 *   TOTAL_LIMIT wrong tokens from all addresses together lock every token check out for LOCKOUT_MS
 *   (a guesser with many addresses). While locked out, a token is compared at once, outside the
 *   line: the right one is admitted (on loopback or behind a proxy every caller has one address,
 *   so a lockout that refused the right token let any local process lock the operator out with 5
 *   guesses: trial s36 D8), a wrong one is refused 429 with Retry-After after WRONG_TOKEN_DELAY_MS,
 *   uncounted and without holding the line. The guesser's reward is thus only a rate bounded by
 *   the daemon's own speed (thousands a second at most): against a token of `openssl rand -hex 24`
 *   (192 bits; 32 bytes, 256 bits, the same) that is over 10^50 years, so the lockout never was
 *   what kept such a token safe; it slows guessing of a short, chosen token and makes it visible.
 *   Each lockout, and the right token admitted during one (once per lockout and address), is
 *   logged and put in the audit table (console: Audit log).
 * - CSRF: every POST must come from the console's origin (hono/csrf: Origin or Sec-Fetch-Site)
 *   AND carry the session's form token (`_csrf` field or `x-csrf-token` header). Requests with
 *   the Bearer token need no form token: a browser never adds that header by itself.
 */
import { systemClock } from '../kernel/clock.js';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
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

/** A wrong token costs this long, and nothing else is checked meanwhile: guessing is slow even in parallel. */
export const WRONG_TOKEN_DELAY_MS = 500;
/** Wrong tokens from one address within the window before it is locked out. */
export const CALLER_LIMIT = 5;
/** Wrong tokens from all addresses together within the window before every token check is locked out. */
export const TOTAL_LIMIT = 20;
export const WINDOW_MS = 15 * 60_000;
export const LOCKOUT_MS = 15 * 60_000;
/** Addresses remembered at most (oldest forgotten first): a flood of addresses cannot grow memory without end. */
const MAX_CALLERS = 10_000;

export interface Lockout {
  /** `caller`: this address only; `total`: every address. */
  scope: 'caller' | 'total';
  until: number;
}

export interface ThrottleEvent {
  /** `admitted`: the right token from an address during a lockout (once per lockout and address). */
  kind: 'wrong' | 'lockout' | 'admitted';
  via: 'login' | 'bearer';
  address: string;
  /** Set for a lockout that this wrong token started, or the one in force for `admitted`. */
  lockout?: Lockout;
}

export type TokenCheck = { ok: true } | { ok: false; lockout: Lockout | null };

/**
 * Wrong-token limits per caller (client address) and in total, with a lockout window (see the
 * top). In memory: a restart forgets them (and costs the guesser the restart's time).
 */
export class LoginThrottle {
  readonly #now: () => number;
  readonly #onEvent: (e: ThrottleEvent) => void;
  readonly #callers = new Map<string, { fails: number[]; lockedUntil: number }>();
  #total: number[] = [];
  #totalLockedUntil = 0;
  /** The line every token check waits in: a wrong one holds it for WRONG_TOKEN_DELAY_MS. */
  #line: Promise<unknown> = Promise.resolve();
  /** `scope:until:address` of admissions during a lockout already reported (one audit entry each, not one per scrape). */
  readonly #admittedNoted = new Set<string>();

  constructor(opts: { now?: () => number; onEvent?: (e: ThrottleEvent) => void } = {}) {
    this.#now = opts.now ?? (() => systemClock.now());
    this.#onEvent = opts.onEvent ?? (() => undefined);
  }

  /** The lockout in force for this address, if any. */
  lockedOut(address: string): Lockout | null {
    const now = this.#now();
    if (this.#totalLockedUntil > now) return { scope: 'total', until: this.#totalLockedUntil };
    const c = this.#callers.get(address);
    return c && c.lockedUntil > now ? { scope: 'caller', until: c.lockedUntil } : null;
  }

  /** Compares a presented token (`matches`) in its turn; during a lockout at once, outside the line (see the top). */
  async check(address: string, via: ThrottleEvent['via'], matches: () => boolean): Promise<TokenCheck> {
    // A flood from a locked-out address does not wait in (or hold) the line.
    const early = this.lockedOut(address);
    if (early) return this.#duringLockout(address, via, early, matches);
    const turn = this.#line.then(async (): Promise<TokenCheck> => {
      const locked = this.lockedOut(address);
      if (locked) return this.#duringLockout(address, via, locked, matches);
      if (matches()) return { ok: true };
      const started = this.#fail(address);
      this.#onEvent({ kind: 'wrong', via, address, ...(started ? { lockout: started } : {}) });
      if (started) this.#onEvent({ kind: 'lockout', via, address, lockout: started });
      await sleep(WRONG_TOKEN_DELAY_MS);
      return { ok: false, lockout: null };
    });
    this.#line = turn.catch(() => undefined);
    return turn;
  }

  /** The right token is admitted; a wrong one is refused after the delay (per request: the line is not held). */
  async #duringLockout(address: string, via: ThrottleEvent['via'], lockout: Lockout, matches: () => boolean): Promise<TokenCheck> {
    if (matches()) {
      const key = `${lockout.scope}:${lockout.until}:${address}`;
      if (!this.#admittedNoted.has(key)) {
        this.#admittedNoted.add(key);
        while (this.#admittedNoted.size > MAX_CALLERS) this.#admittedNoted.delete(this.#admittedNoted.values().next().value!);
        this.#onEvent({ kind: 'admitted', via, address, lockout });
      }
      return { ok: true };
    }
    await sleep(WRONG_TOKEN_DELAY_MS);
    return { ok: false, lockout };
  }

  /** Counts a wrong token; the lockout it starts, if it starts one. */
  #fail(address: string): Lockout | null {
    const now = this.#now();
    const since = now - WINDOW_MS;
    let c = this.#callers.get(address);
    if (c) this.#callers.delete(address); // re-inserted below: the map stays oldest-first
    c ??= { fails: [], lockedUntil: 0 };
    c.fails = [...c.fails.filter((t) => t > since), now];
    this.#callers.set(address, c);
    while (this.#callers.size > MAX_CALLERS) this.#callers.delete(this.#callers.keys().next().value!);
    this.#total = [...this.#total.filter((t) => t > since), now];
    if (this.#total.length >= TOTAL_LIMIT) {
      this.#total = [];
      this.#totalLockedUntil = now + LOCKOUT_MS;
      return { scope: 'total', until: this.#totalLockedUntil };
    }
    if (c.fails.length >= CALLER_LIMIT) {
      c.fails = [];
      c.lockedUntil = now + LOCKOUT_MS;
      return { scope: 'caller', until: c.lockedUntil };
    }
    return null;
  }
}

/** What a locked-out caller with a wrong token is told. */
export function lockoutMessage(l: Lockout, now: number): string {
  const minutes = Math.max(1, Math.ceil((l.until - now) / 60_000));
  return l.scope === 'caller'
    ? `Too many wrong tokens from your address: wrong tokens are refused for ${minutes} min (the right token still works).`
    : `Too many wrong tokens from several addresses: wrong tokens are refused from every address for ${minutes} min (the right token still works).`;
}

export function retryAfter(l: Lockout, now: number): string {
  return String(Math.max(1, Math.ceil((l.until - now) / 1000)));
}

export class Sessions {
  readonly #key: Buffer;
  readonly #tokenHash: Buffer | null;
  readonly throttle: LoginThrottle;

  constructor(meta: MetaStore, settings: ConsoleSettings, throttle: LoginThrottle = new LoginThrottle()) {
    this.throttle = throttle;
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
      const checked = await sessions.throttle.check(c.get('address'), 'bearer', () => sessions.tokenMatches(bearer));
      if (!checked.ok && checked.lockout) {
        const now = systemClock.now();
        return c.text(`${lockoutMessage(checked.lockout, now)}\n`, 429, { 'retry-after': retryAfter(checked.lockout, now) });
      }
      if (!checked.ok) return c.text('wrong token\n', 401, { 'www-authenticate': 'Bearer' });
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
