/**
 * 10. A network that swallows everything for a while: a proxy between the daemon and the
 * sandbox accepts every request and answers none. No request may hold a slot longer than the
 * client timeout + 1 s, and the batch must finish once the network returns.
 */
import { createServer, request as httpRequest, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { atMost, dataRows, eq0, info, judge, ledgerFigures, ledgerOf, makeBatch, sleep, startDaemon, type Scenario, waitUntil, world } from '../lib.js';

export interface Proxy {
  url: string;
  swallow: boolean;
  /** Longest time any request was held open (arrival → answered or abandoned by the client). */
  longestMs: number;
  swallowed: number;
  /** Told of every request as it arrives from the client. */
  onRequest?: (method: string, url: string, t: number) => void;
  /** Told of every answer once it has been handed to the client. */
  onAnswer?: (status: number, headers: Record<string, string | string[] | undefined>, t: number) => void;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const agent = new Agent({ keepAlive: true });
  const up = new URL(target);
  const state: { swallow: boolean; longestMs: number; swallowed: number; onRequest?: Proxy['onRequest']; onAnswer?: Proxy['onAnswer'] } = { swallow: false, longestMs: 0, swallowed: 0 };
  const server = createServer((req, res) => {
    const t0 = Date.now();
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      state.longestMs = Math.max(state.longestMs, Date.now() - t0);
    };
    // 'close' on the response: answered, or the client gave up and closed the connection.
    res.on('close', end);
    const arrived = Date.now();
    state.onRequest?.(req.method ?? '', req.url ?? '', arrived);
    if (state.swallow) {
      state.swallowed++;
      req.resume();
      return; // never answered: only the client giving up ends it
    }
    const fwd = httpRequest({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers, agent }, (ures) => {
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.pipe(res);
      res.on('finish', () => state.onAnswer?.(ures.statusCode ?? 0, ures.headers, Date.now()));
    });
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get swallow() { return state.swallow; },
    set swallow(v: boolean) { state.swallow = v; },
    get longestMs() { return state.longestMs; },
    get swallowed() { return state.swallowed; },
    set onRequest(fn: Proxy["onRequest"]) { state.onRequest = fn; },
    set onAnswer(fn: Proxy["onAnswer"]) { state.onAnswer = fn; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); agent.destroy(); }),
  };
}

export const swallow: Scenario = {
  name: 'swallow',
  title: 'A network that swallows everything for a while',
  async run(ctx) {
    const rows = ctx.quick ? 100 : 300;
    const outageMs = ctx.quick ? 5000 : 15000;
    const timeoutMs = 1500;
    // The proxy needs the sandbox URL, the world needs the proxy URL: start the world, then
    // point the daemon at a proxy in front of its sandbox.
    const base = await world(ctx, { limits: '40/1s,2000/1m', sandboxArgs: ['--processing-share', '0.4', '--processing-ms', '300-1500', '--fail-share', '0.05'] });
    const proxy = await startProxy(base.sb.url);
    ctx.defer(() => proxy.close());
    const w = { ...base, env: (extra: NodeJS.ProcessEnv = {}) => base.env({ TOPUP_API_URL: proxy.url, TOPUP_REQUEST_TIMEOUT_MS: String(timeoutMs), ...extra }) };
    const text = makeBatch(ctx.rand, { rows, keys: 0.1, failing: 0.05 });
    w.home.drop('net.csv', text);
    const d = startDaemon(w, ctx, { once: true });
    await waitUntil('a third of the orders', async () => (await ledgerOf(w.sb)).orders.length >= rows / 3, 60_000, 50);
    proxy.swallow = true;
    await sleep(outageMs);
    proxy.swallow = false;
    const back = Date.now();
    const r = await Promise.race([d.exited, sleep(120_000).then(() => null)]);
    const finishedAfter = Date.now() - back;
    if (r === null) await d.kill();
    const v = judge(join(w.home.outbox, 'net.result.csv'), dataRows(text), await ledgerOf(w.sb));
    return [
      info('outage', `${outageMs / 1000} s, ${proxy.swallowed} requests swallowed`),
      atMost('longest time a request held a slot (ms)', proxy.longestMs, timeoutMs + 1000),
      eq0('batch not finished after the network returned', r?.code === 0 ? 0 : 1),
      info('batch finished, seconds after the network returned', Math.round(finishedAfter / 100) / 10),
      ...ledgerFigures(v),
    ];
  },
};
