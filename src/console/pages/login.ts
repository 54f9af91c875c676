/**
 * Log in (with TOPUP_CONSOLE_TOKEN, when one is set) and say who you are: the name goes into the
 * audit table and into review resolutions. Without a token this page only sets the name.
 */
import type { Hono } from 'hono';
import { systemClock } from '../../kernel/clock.js';
import { lockoutMessage, retryAfter, safeNext, type ConsoleEnv } from '../auth.js';
import { html } from '../html.js';
import { csrfField, page, type PageCtx } from '../layout.js';
import { pageCtx, record, type Services } from '../services.js';

function form(ctx: PageCtx, svc: Services, next: string, name: string, error?: string): string {
  const needToken = svc.sessions.tokenRequired;
  return page(ctx, needToken ? 'Log in' : 'Your name', html`${error ? html`<p class="message" role="alert">${error}</p>` : ''}
<form method="post" action="/login" class="login">${csrfField(ctx)}
  <input type="hidden" name="next" value="${next}">
  ${needToken ? html`<label for="token">Console token <span class="muted">(TOPUP_CONSOLE_TOKEN)</span></label>
  <input id="token" name="token" type="password" required autocomplete="current-password">` : ''}
  <label for="name">Your name <span class="muted">(recorded with what you do here)</span></label>
  <input id="name" name="name" maxlength="60" autocomplete="name" value="${name}">
  <button type="submit" class="primary">${needToken ? 'Log in' : 'Save'}</button>
</form>`);
}

export function registerLogin(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/login', (c) => {
    const ctx = pageCtx(c, svc);
    return c.html(form(ctx, svc, safeNext(c.req.query('next')), c.get('session').name));
  });

  app.post('/login', async (c) => {
    const body = await c.req.parseBody();
    const next = safeNext(typeof body.next === 'string' ? body.next : undefined);
    const name = String(body.name ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 60);
    if (svc.sessions.tokenRequired) {
      // One line for every token check, per-caller and total lockouts (auth.ts LoginThrottle).
      const checked = await svc.sessions.throttle.check(c.get('address'), 'login', () => svc.sessions.tokenMatches(String(body.token ?? '')));
      if (!checked.ok && checked.lockout) {
        const now = systemClock.now();
        c.header('retry-after', retryAfter(checked.lockout, now));
        return c.html(form(pageCtx(c, svc), svc, next, name, lockoutMessage(checked.lockout, now)), 429);
      }
      if (!checked.ok) {
        record(c, svc, 'login', 'refused', { detail: `wrong token${name ? ` (name given: ${name})` : ''}` });
        return c.html(form(pageCtx(c, svc), svc, next, name, 'Wrong token.'), 401);
      }
    }
    // A login with the token starts a new session (one planted before cannot be taken over);
    // only naming yourself keeps it, so the forms of other open pages stay valid.
    const keep = svc.sessions.tokenRequired ? undefined : c.get('session').sid;
    c.set('session', svc.sessions.issue(c, { authed: true, name, ...(keep ? { sid: keep } : {}) }));
    record(c, svc, 'login', 'ok', { detail: svc.sessions.tokenRequired ? 'with the token' : 'name set' });
    return c.redirect(next, 303);
  });

  app.post('/logout', (c) => {
    record(c, svc, 'logout', 'ok');
    svc.sessions.issue(c, { authed: !svc.sessions.tokenRequired, name: '' });
    return c.redirect('/login', 303);
  });
}
