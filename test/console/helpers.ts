/**
 * The console under test (started by test/e2e/daemon.ts: a real `topup daemon` with the console on
 * a free port of 127.0.0.1, against an in-process sandbox), and a small HTTP client that keeps the session cookie
 * and sends the page's form token the way a browser does.
 */
import { request as httpRequest } from 'node:http';

// The daemon with its console is started by the one harness (test/e2e/daemon.ts).
export { startConsoleDaemon, type ConsoleUnderTest } from '../e2e/daemon.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
}

/** A browser's worth of HTTP: a cookie jar, the page's form token, the Origin header. */
export class Client {
  readonly base: string;
  cookie = '';
  csrf = '';
  constructor(base: string) {
    this.base = base;
  }

  #keep(res: Response): void {
    const set = res.headers.getSetCookie();
    for (const c of set) {
      const m = /^topup_session=([^;]*)/.exec(c);
      if (m) this.cookie = `topup_session=${m[1]}`;
    }
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
    const res = await fetch(this.base + path, { headers: { ...(this.cookie ? { cookie: this.cookie } : {}), ...headers }, redirect: 'manual' });
    this.#keep(res);
    const text = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.csrf = token;
    return { status: res.status, headers: res.headers, text };
  }

  async post(path: string, form: Record<string, string> | FormData, opts: { csrf?: string | null; origin?: string | null; headers?: Record<string, string> } = {}): Promise<Reply> {
    const body = form instanceof FormData ? form : new URLSearchParams(form);
    const csrf = opts.csrf === undefined ? this.csrf : opts.csrf;
    if (csrf !== null) body.set('_csrf', csrf);
    const origin = opts.origin === undefined ? this.base : opts.origin;
    const res = await fetch(this.base + path, {
      method: 'POST',
      body,
      headers: { ...(this.cookie ? { cookie: this.cookie } : {}), ...(origin ? { origin } : {}), ...opts.headers },
      redirect: 'manual',
    });
    this.#keep(res);
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
}

/** A GET with a Host header of our choosing (fetch does not let a caller set Host). */
export function getWithHost(url: string, host: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A POST as a script or a proxy may send it, below what fetch allows: any headers (or none: no
 * Content-Type at all), and the body either with a Content-Length or chunked (no length).
 */
/** `localAddress`: send from another loopback address (127.0.0.x), e.g. one the login throttle has not locked out. */
export function rawPost(url: string, path: string, headers: Record<string, string>, body: string | Buffer | null, opts: { chunked?: boolean; localAddress?: string } = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const h: Record<string, string> = { ...headers };
    if (opts.chunked) h['transfer-encoding'] = 'chunked';
    else h['content-length'] = String(body === null ? 0 : Buffer.byteLength(body));
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: 'POST', headers: h, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    if (body !== null && body.length > 0) {
      // Two writes: a chunked body arrives in pieces, as from a pipe.
      const half = Math.floor(body.length / 2);
      req.write(body.slice(0, half));
      req.write(body.slice(half));
    }
    req.end();
  });
}

export const EXAMPLE_MIXED = new URL('../../examples/mixed.csv', import.meta.url);
