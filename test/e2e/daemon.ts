/**
 * The one harness for tests that run a real daemon (dist/cli.js) with its console and order API on
 * a free port of 127.0.0.1: the in-process sandbox as the supplier, real SQLite in a temp home, and
 * a shop (or a browser) speaking HTTP to it. Every folder whose tests start such a daemon uses this
 * (test/console, test/orderapi, test/webhooks, test/orders, test/restore, test/backup …): the
 * address is read from the daemon's log line in one place, so a change to that line or to how the
 * daemon starts is one change here.
 */
import { cliEnv, inProcessSandbox, startDaemon, tempHome, waitFor, type DaemonProcess, type TempHome } from './harness.js';
import type { RunningSandbox, SandboxOptions } from '../../src/sandbox/index.js';

export const TOKEN = 'adv8-order-api-token-0123456789abcdef';
export const SECRET = 'adv8-webhook-secret-0123456789abcdef';

const CONSOLE_LINE = /console: open (http:\/\/[^\s]+\/) in a browser/;

/**
 * The console's address (no trailing slash), once the daemon has logged it. Generous by default:
 * a daemon on a busy two-core machine takes seconds to start.
 */
export async function consoleUrl(daemon: DaemonProcess, timeoutMs = 60_000): Promise<string> {
  const url = await waitFor('the console address', () => CONSOLE_LINE.exec(daemon.output())?.[1], timeoutMs, 20);
  return url.replace(/\/$/, '');
}

export interface Shop {
  home: TempHome;
  sb: RunningSandbox;
  env: NodeJS.ProcessEnv;
}

/** A temp home with the in-process sandbox, the order API's token and the console on a free port. */
export async function shop(extra: NodeJS.ProcessEnv = {}, sandbox: Partial<SandboxOptions> = {}, prefix = 'topup-shop-'): Promise<Shop> {
  const home = tempHome(prefix);
  const sb = await inProcessSandbox(sandbox);
  const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', ...extra });
  return { home, sb, env };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface CallOptions {
  /** The Bearer token; the env's TOPUP_ORDER_API_TOKEN unless given; null sends none. */
  token?: string | null;
  /** A string or bytes are sent as they are; anything else as JSON. */
  body?: unknown;
  type?: string;
  headers?: Record<string, string>;
}

export interface Running {
  daemon: DaemonProcess;
  url: string;
  call(method: string, path: string, o?: CallOptions): Promise<Answer>;
}

export interface StartOptions {
  /** Also wait for "topup daemon started" (the runner running), not only the console's address. */
  started?: boolean;
  timeoutMs?: number;
  /** Held against every answer (test/orderapi/conformance.ts: the answer matches the OpenAPI document). */
  check?: (method: string, url: string, res: Response, text: string) => Promise<void>;
  args?: string[];
}

/** Starts `topup daemon` with `env` (which must set TOPUP_CONSOLE) and waits for its console. */
export async function start(env: NodeJS.ProcessEnv, opts: StartOptions = {}): Promise<Running> {
  const daemon = startDaemon(env, opts.args);
  const url = await consoleUrl(daemon, opts.timeoutMs);
  if (opts.started) await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), opts.timeoutMs ?? 60_000, 20);
  const call: Running['call'] = async (method, path, o = {}) => {
    const token = o.token === undefined ? env.TOPUP_ORDER_API_TOKEN : o.token;
    const raw = typeof o.body === 'string' || o.body instanceof Uint8Array;
    const body = o.body === undefined ? undefined : raw ? (o.body as string | Uint8Array) : JSON.stringify(o.body);
    const res = await fetch(url + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': o.type ?? 'application/json' } : {}),
        ...o.headers,
      },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    if (opts.check) await opts.check(method, url + path, res, text);
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  return { daemon, url, call };
}

export interface ConsoleUnderTest {
  url: string;
  home: TempHome;
  sb: RunningSandbox;
  daemon: DaemonProcess;
  env: NodeJS.ProcessEnv;
}

/** A home, a sandbox and a started daemon with its console (no order API token unless `extra` sets one). */
export async function startConsoleDaemon(extra: NodeJS.ProcessEnv = {}, sandbox: Partial<SandboxOptions> = {}): Promise<ConsoleUnderTest> {
  const home = tempHome('topup-console-');
  const sb = await inProcessSandbox(sandbox);
  const env = cliEnv(home, sb, { TOPUP_CONSOLE: '127.0.0.1:0', ...extra });
  // The console starts just before the daemon says it started: the runner is running from then on.
  const { daemon, url } = await start(env, { started: true });
  return { url, home, sb, daemon, env };
}
