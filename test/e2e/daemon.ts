/**
 * Adversarial review 8 (issue 23): a real daemon (dist/cli.js) with its console on a free port of
 * 127.0.0.1, the in-process sandbox as the supplier, real SQLite; and a shop speaking HTTP.
 */
import { cliEnv, inProcessSandbox, startDaemon, tempHome, waitFor, type DaemonProcess, type TempHome } from './harness.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

export const TOKEN = 'adv8-order-api-token-0123456789abcdef';
export const SECRET = 'adv8-webhook-secret-0123456789abcdef';

export interface Shop {
  home: TempHome;
  sb: RunningSandbox;
  env: NodeJS.ProcessEnv;
}

export async function shop(extra: NodeJS.ProcessEnv = {}): Promise<Shop> {
  const home = tempHome('topup-adv8-');
  const sb = await inProcessSandbox();
  const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', ...extra });
  return { home, sb, env };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface Running {
  daemon: DaemonProcess;
  url: string;
  call(method: string, path: string, o?: { token?: string | null; body?: unknown; type?: string }): Promise<Answer>;
}

export async function start(env: NodeJS.ProcessEnv): Promise<Running> {
  const daemon = startDaemon(env);
  const url = (await waitFor('the console address', () => /console: open (http:\/\/[^\s]+\/) in a browser/.exec(daemon.output())?.[1], 30_000, 20)).replace(/\/$/, '');
  const call: Running['call'] = async (method, path, o = {}) => {
    const token = o.token === undefined ? TOKEN : o.token;
    const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const res = await fetch(url + path, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': o.type ?? 'application/json' } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
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
