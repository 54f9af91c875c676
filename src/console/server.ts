/**
 * Starts the console (and /metrics) beside the daemon's runner, on TOPUP_CONSOLE.
 *
 * An address that cannot be taken (another daemon, or another program, on the port) does not
 * stop the daemon: orders matter more than the page that shows them. It is logged as an error
 * naming the setting, and the daemon runs on without a console.
 */
import { CONSOLE_STATE_KEY, type ConsoleState } from '../store/console-state.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { createAdaptorServer } from '@hono/node-server';
import { scrub } from '../kernel/log.js';
import { coerceError } from '../kernel/errors.js';
import { secretsOf } from '../config/config.js';
import { Listing } from '../store/listing.js';
import { AuditStore } from '../store/audit.js';
import { Metrics } from '../metrics/metrics.js';
import { BalanceWatch } from './balance-watch.js';
import { RecentErrors } from './recent.js';
import { LiveFeed } from './live.js';
import { FiguresCache } from './figures.js';
import { Uploads } from './uploads.js';
import { CALLER_LIMIT, LoginThrottle, Sessions, TOTAL_LIMIT } from './auth.js';
import { systemClock } from '../kernel/clock.js';
import { createConsoleApp } from './app.js';
import type { ConsoleDeps, Services } from './services.js';
import { Hono } from 'hono';
import { createOrderDesk } from '../orders/desk.js';
import type { OrderApiDeps } from '../orderapi/api.js';
import { problemResponse } from '../orderapi/problem.js';
import { TokenStore } from '../orderapi/tokens.js';

/**
 * The order API, mounted on /api/v1 like the application itself, but loaded at its first request:
 * its routes are zod schemas (zod, @hono/zod-openapi: about 100 modules and 2–4 MB of heap) that a
 * daemon whose shop never calls the API would hold for nothing (issue 34, idle memory: docs/bench.md).
 * A home with a usable token (TOPUP_ORDER_API_TOKEN, or one made by `topup token create`) has a
 * shop: there `ready()` loads it as soon as the console listens, so no order waits for the import
 * (the import alone: 1.0–2.4 s at a load of 22 on 2 cores). Otherwise the first request waits for it (once; every request
 * meanwhile waits for the same one);
 * each request then goes to the API's own Hono application with the request and the server's
 * bindings (the caller's address) as they came, under the same /api/v1 prefix, so the API answers
 * exactly as when it was mounted directly: its guards, problems, 404s and 405s.
 */
function orderApiOnFirstUse(deps: OrderApiDeps): { app: Hono; ready(): void } {
  let loading: Promise<Hono> | null = null;
  const load = (): Promise<Hono> =>
    (loading ??= import('../orderapi/api.js').then(
      ({ createOrderApi }) => new Hono().route('/api/v1', createOrderApi(deps)),
      (err: unknown) => {
        // Not kept: the next request tries again (a module that could not be read, dist/ being replaced).
        loading = null;
        throw err;
      },
    ));
  const lazy = new Hono();
  lazy.all('*', async (c) => {
    let api: Hono;
    try {
      api = await load();
    } catch (err) {
      // Still the API's kind of answer (a problem, never a console page): nothing was stored.
      deps.rt.log.error({ component: 'order-api', err: coerceError(err).message }, 'order API: cannot be loaded');
      return problemResponse({ status: 500, code: 'INTERNAL', detail: 'The order API could not be loaded (the daemon log has the details). Nothing was stored: send the same request again.' });
    }
    return api.fetch(c.req.raw, c.env);
  });
  const ready = (): void => {
    load().catch((err: unknown) => deps.rt.log.error({ component: 'order-api', err: coerceError(err).message }, 'order API: cannot be loaded'));
  };
  return { app: lazy, ready };
}

/** meta key: the URL the daemon's console last listened on (its TOPUP_CONSOLE, resolved). */
export const CONSOLE_URL_KEY = 'console.url';

export interface RunningConsole {
  url: string;
  close(): Promise<void>;
}

function urlOf(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? hostname() : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/`;
}

export async function startConsole(deps: ConsoleDeps): Promise<RunningConsole | null> {
  const { rt, runner, notifier, settings } = deps;
  const log = rt.log.child({ component: 'console' });
  const listing = new Listing(rt.db, rt.batches);
  const balance = new BalanceWatch(rt);
  const secrets = secretsOf(rt.config);
  const recent = new RecentErrors((text) => scrub(text, secrets));
  const figures = new FiguresCache(rt);
  const live = new LiveFeed(rt, listing, figures, balance);
  const audit = new AuditStore(rt.db);
  // Lockouts of the console's token (auth.ts LoginThrottle): in the log and the audit table. Wrong
  // Bearer tokens too (the login form records its own, with the name given).
  const throttle = new LoginThrottle({
    onEvent: (e) => {
      const at = systemClock.now();
      if (e.kind === 'lockout' && e.lockout) {
        const until = new Date(e.lockout.until).toISOString();
        const detail = e.lockout.scope === 'caller' ? `${CALLER_LIMIT} wrong tokens from ${e.address}: this address is locked out until ${until}` : `${TOTAL_LIMIT} wrong tokens from all addresses: token checks are locked out for everyone until ${until}`;
        log.warn({ address: e.address, scope: e.lockout.scope, until }, `console: ${detail}`);
        audit.record({ at, actor: '(anonymous)', address: e.address, action: 'login-lockout', outcome: 'refused', detail });
      } else if (e.kind === 'admitted' && e.lockout) {
        // The right token still gets in during a lockout (trial s36 D8); said once per lockout and address.
        const until = new Date(e.lockout.until).toISOString();
        const detail = `the right token was admitted from ${e.address} during its lockout (wrong tokens stay refused until ${until}${e.lockout.scope === 'total' ? ', from every address' : ''})`;
        log.warn({ address: e.address, scope: e.lockout.scope, until, via: e.via }, `console: ${detail}`);
        audit.record({ at, actor: '(anonymous)', address: e.address, action: 'login-lockout', outcome: 'ok', detail });
      } else if (e.kind === 'wrong' && e.via === 'bearer') {
        audit.record({ at, actor: '(anonymous)', address: e.address, action: 'bearer', outcome: 'refused', detail: 'wrong token' });
      }
    },
  });
  const svc: Services = {
    ...deps,
    listing,
    audit,
    balance,
    recent,
    live,
    figures,
    uploads: new Uploads(rt.config.jobsDir, rt.config.inboxDir),
    sessions: new Sessions(rt.meta, settings, throttle),
  };
  const metrics = new Metrics({ rt, runner, notifier, listing, balances: () => balance.all() });
  // The order API on the console's listener: accepted orders wake the runner at once (no inbox wait).
  const desk = deps.desk ?? createOrderDesk(rt, () => runner.wake());
  const tokens = new TokenStore(rt.db, rt.clock, rt.config.orderApi.token);
  const orderApi = orderApiOnFirstUse({
    rt,
    desk,
    players: desk,
    tokens,
    wake: () => runner.wake(),
    stopping: () => runner.snapshot({ batches: false }).stopping,
    batchBodyMax: settings.uploadMaxBytes,
    onAnswer: (answer) => metrics.apiOrders.inc({ answer }),
  });
  const app = createConsoleApp(svc, metrics, orderApi.app);
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  const listening = await new Promise<AddressInfo | Error>((resolve) => {
    server.once('error', resolve);
    server.listen(settings.port, settings.host, () => resolve(server.address() as AddressInfo));
  });
  if (listening instanceof Error) {
    const code = (listening as NodeJS.ErrnoException).code;
    const address = `${settings.host}:${settings.port}`;
    const why = code === 'EADDRINUSE' ? `${address} is already in use (another program, or another topup daemon)` : `cannot listen on ${address} (${code ?? listening.message})`;
    // Said on stderr in one sentence, whatever the log's format: a log line among the start's others
    // (JSON under a service manager) went unseen in a new-user trial. The daemon goes on: files in
    // the inbox are still ordered, and a shop's order a closed port refuses was never taken.
    process.stderr.write(`topup: the console is not running: ${why}. The daemon goes on without it: files in the inbox are still ordered; the console, /metrics and the order API are off until you set TOPUP_CONSOLE to a free address (or off) and restart it.\n`);
    // For `topup doctor` in another process (ops/doctor.ts).
    rt.meta.setJson(CONSOLE_STATE_KEY, { ok: false, address, detail: why.replace(`${address} is `, ''), owner: rt.owner } satisfies ConsoleState);
    log.error(
      { setting: 'TOPUP_CONSOLE', address: `${settings.host}:${settings.port}`, err: listening.message },
      code === 'EADDRINUSE'
        ? `console: ${settings.host}:${settings.port} is already in use (another topup daemon?); running without the console. Set TOPUP_CONSOLE to another address, or off`
        : `console: cannot listen on ${settings.host}:${settings.port} (${code ?? listening.message}); running without the console`,
    );
    await metrics.close();
    return null;
  }
  server.on('error', (err) => log.warn({ err: err.message }, 'console: server error'));
  // Bounded: a slow client cannot hold a connection for ever (SSE streams ping every 15 s).
  server.headersTimeout = 20_000;
  server.requestTimeout = 120_000;
  const stopRecent = recent.follow(runner, notifier);
  figures.follow(runner);
  live.follow(runner);
  metrics.follow();
  // Every balance read through an account's client (a batch's balance after among them) is that
  // account's reading (Account.lastBalance): nothing to record here.
  balance.start();
  // A shop can call the API: have it ready before its first order (see orderApiOnFirstUse).
  if (rt.config.orderApi.token !== null || tokens.list().some((t) => t.revokedAt === null)) orderApi.ready();
  const url = urlOf(settings.host, listening.port);
  // Where it listens, for commands run without the daemon's environment (topup token create's hint).
  rt.meta.set(CONSOLE_URL_KEY, url);
  rt.meta.setJson(CONSOLE_STATE_KEY, { ok: true, address: `${settings.host}:${listening.port}`, detail: `listening: ${url}`, owner: rt.owner } satisfies ConsoleState);
  log.info(
    { console: url, readOnly: settings.readOnly, token: settings.token !== null },
    `console: open ${url} in a browser${settings.token ? ' (log in with TOPUP_CONSOLE_TOKEN)' : ''}; metrics at ${url}metrics; order API at ${url}api/v1/ (docs: ${url}api/v1/docs)`,
  );
  return {
    url,
    async close() {
      stopRecent();
      live.close();
      figures.close();
      svc.uploads.close();
      balance.stop();
      await metrics.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Live pages (server-sent events) keep their connections open: end them, or close waits for ever.
        server.closeAllConnections();
      });
    },
  };
}
