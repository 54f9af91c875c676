/**
 * The console's HTTP application (Hono): the order of the guards, then the pages. Every request
 * passes, in this order: the host check (DNS rebinding), security headers (a strict
 * Content-Security-Policy: our own scripts, styles and images only), the upload size limit
 * (body.ts), the session (login when a token is set), read-only mode (every request that is not
 * GET or HEAD is refused, except logging in and out), the form read once (a body that cannot be
 * read is a 400), and the CSRF check on every POST. A refused request is always a 4xx: a 500 means
 * the console itself failed.
 *
 * The order API (/api/v1, src/orderapi/) is mounted first, before all of these: a shop sends a
 * bearer token, not a session cookie, so the session gate, read-only mode (a console switch, not
 * the API's), the form parser and the CSRF check (which guards cookies) are not its guards; its
 * own are (token and scopes, body limits, security headers, problem+json errors). The host check
 * does not apply to it either: DNS rebinding lets a page elsewhere use what the victim's browser
 * is already trusted with (a loopback console that needs no login), and the API trusts nothing
 * a browser sends by itself, only an Authorization header the attacker's page cannot know; while
 * a shop's own reverse proxy (TLS in front of a loopback daemon, passing its public Host name)
 * must reach the API without opening the console's pages, which keep answering 421 to that Host.
 */
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import { streamSSE } from 'hono/streaming';
import { ErrorCode, TopupError, coerceError } from '../kernel/errors.js';
import { csrfGuard, hostCheck, sessionGate, type ConsoleEnv } from './auth.js';
import { bodyCap, formBody } from './body.js';
import { ASSETS } from './assets.js';
import { messagePage } from './layout.js';
import { pageCtx, record, type Services } from './services.js';
import type { Metrics } from '../metrics/metrics.js';
import { registerOverview } from './pages/overview.js';
import { registerUpload } from './pages/upload.js';
import { registerBatches } from './pages/batches.js';
import { registerBatch } from './pages/batch.js';
import { registerReview } from './pages/review.js';
import { registerReports } from './pages/reports.js';
import { registerAudit } from './pages/audit.js';
import { registerLogin } from './pages/login.js';
import { registerWebhooks } from './pages/webhooks.js';
import { registerAccounts } from './pages/accounts.js';
import { registerPictures } from './pictures.js';

const CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  manifestSrc: ["'self'"],
};

const STATUS: Partial<Record<string, 400 | 404>> = {
  [ErrorCode.NotFound]: 404,
  [ErrorCode.Usage]: 400,
  [ErrorCode.InputFile]: 400,
};

export function createConsoleApp(svc: Services, metrics: Metrics, orderApi?: Hono<any>): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const { settings, sessions } = svc;
  // Before every console guard (see the top): everything under /api/v1 is answered by the API.
  if (orderApi) app.route('/api/v1', orderApi);

  app.onError((err, c) => {
    if (err instanceof HTTPException) return err.getResponse();
    const e = coerceError(err);
    const status = STATUS[e.code] ?? 500;
    if (status === 500) svc.rt.log.warn({ err: e.message, path: c.req.path }, 'console: request failed');
    const text = status === 500 && !(err instanceof TopupError) ? 'Something went wrong; the daemon log has the details.' : e.message;
    try {
      return c.html(messagePage(pageCtx(c, svc), status === 404 ? 'Not found' : 'Could not do that', text), status);
    } catch {
      return c.text(`${text}\n`, status);
    }
  });
  app.notFound((c) => c.html(messagePage(pageCtx(c, svc), 'Not found', `There is no page ${c.req.path}.`), 404));

  app.use('*', hostCheck(settings));
  app.use('*', secureHeaders({
    contentSecurityPolicy: CSP,
    referrerPolicy: 'no-referrer',
    xFrameOptions: 'DENY',
    strictTransportSecurity: false,
    crossOriginResourcePolicy: 'same-origin',
    crossOriginOpenerPolicy: 'same-origin',
    permissionsPolicy: { camera: [], microphone: [], geolocation: [], payment: [], usb: [] },
  }));

  for (const [path, a] of Object.entries(ASSETS)) {
    app.get(path, (c) => {
      if (c.req.header('if-none-match') === a.etag) return c.body(null, 304);
      return c.body(a.body, 200, { 'content-type': a.type, etag: a.etag, 'cache-control': 'no-cache' });
    });
  }

  // Pages hold balances, player ids and forms: never kept by a browser or a proxy.
  app.use('*', async (c, next) => {
    await next();
    if (!c.res.headers.has('cache-control')) c.res.headers.set('cache-control', 'no-store');
  });
  app.use('*', bodyCap(settings.uploadMaxBytes + 64 * 1024, (c) =>
    c.text(`The file is larger than the ${Math.round(settings.uploadMaxBytes / 1024 / 1024)} MB the console accepts (TOPUP_CONSOLE_UPLOAD_MB): split it, or drop it into the inbox folder.\n`, 413)));
  app.use('*', sessionGate(sessions));
  app.use('*', async (c, next) => {
    const m = c.req.method;
    if (!settings.readOnly || m === 'GET' || m === 'HEAD' || c.req.path === '/login' || c.req.path === '/logout') return next();
    record(c, svc, `${m} ${c.req.path}`.slice(0, 200), 'refused', { detail: 'read-only console (TOPUP_CONSOLE_READ_ONLY=1)' });
    return c.text('This console is read-only (TOPUP_CONSOLE_READ_ONLY=1): nothing can be changed here.\n', 403);
  });
  // After the session and read-only checks: nobody's form is parsed before they may send one.
  app.use('*', formBody());
  app.use('*', csrfGuard(sessions));

  app.get('/metrics', async (c) => c.body(await metrics.render(), 200, { 'content-type': metrics.contentType }));

  app.get('/events', (c) => {
    let stop: (() => void) | null = null;
    let done: () => void = () => {};
    const ended = new Promise<void>((resolve) => (done = resolve));
    return streamSSE(c, async (stream) => {
      stop = svc.live.subscribe((p) => stream.writeSSE({ event: 'progress', data: JSON.stringify(p) }));
      if (!stop) {
        await stream.writeSSE({ event: 'busy', data: 'too many live pages open; figures are not updated' });
        return;
      }
      stream.onAbort(() => done());
      // A comment every 15 s keeps proxies from closing an idle stream.
      const ping = setInterval(() => void stream.write(': ping\n\n').catch(() => done()), 15_000);
      await ended;
      clearInterval(ping);
      stop();
    });
  });

  registerLogin(app, svc);
  registerOverview(app, svc);
  registerPictures(app, svc);
  registerUpload(app, svc);
  registerBatches(app, svc);
  registerBatch(app, svc);
  registerReview(app, svc);
  registerReports(app, svc);
  registerAudit(app, svc);
  registerWebhooks(app, svc);
  registerAccounts(app, svc);
  return app;
}
