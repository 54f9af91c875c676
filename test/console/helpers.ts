/**
 * The console under test: a real `topup daemon` (dist/cli.js) with the console on a free port of
 * 127.0.0.1, against an in-process sandbox, and a small HTTP client that keeps the session cookie
 * and sends the page's form token the way a browser does.
 */
import { request as httpRequest } from 'node:http';
import { cliEnv, inProcessSandbox, startDaemon, tempHome, waitFor, type DaemonProcess, type TempHome } from '../e2e/harness.js';
import type { RunningSandbox, SandboxOptions } from '../../src/sandbox/index.js';

export interface ConsoleUnderTest {
  url: string;
  home: TempHome;
  sb: RunningSandbox;
  daemon: DaemonProcess;
  env: NodeJS.ProcessEnv;
}

export async function startConsoleDaemon(extra: NodeJS.ProcessEnv = {}, sandbox: Partial<SandboxOptions> = {}): Promise<ConsoleUnderTest> {
  const home = tempHome('topup-console-');
  const sb = await inProcessSandbox(sandbox);
  const env = cliEnv(home, sb, { TOPUP_CONSOLE: '127.0.0.1:0', ...extra });
  const daemon = startDaemon(env);
  const url = await waitFor('the console address in the log', () => /console: open (http:\/\/[^\s]+\/) in a browser/.exec(daemon.output())?.[1], 30_000, 50);
  // The console starts just before the daemon says it started: the runner is running from then on.
  await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 30_000, 20);
  return { url: url.replace(/\/$/, ''), home, sb, daemon, env };
}

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
