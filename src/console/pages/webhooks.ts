/**
 * Webhooks: how the order API's webhooks stand (docs/webhooks.md): events by delivery state, the
 * oldest still pending and how old it is, the last error a receiver gave, the events waiting and
 * the ones given up, each failed one with a Replay button (and one for all of them). The same
 * summary as `topup webhooks` (webhooks/views.ts); a replay is the same store operation as
 * `topup webhooks replay`, recorded in the audit log with who did it. The daemon's deliverer posts
 * a replayed event within a second: this page never posts anything itself.
 */
import type { Hono } from 'hono';
import { coerceError } from '../../kernel/errors.js';
import { WebhookOutbox, eventNumber, type OutboxEvent } from '../../webhooks/outbox.js';
import { shownUrl, webhookSummary } from '../../webhooks/views.js';
import type { ConsoleEnv } from '../auth.js';
import { duration, html, timeTag, type Html } from '../html.js';
import { actionButton, page, tableWrap, type PageCtx } from '../layout.js';
import { pageCtx, record, type Ctx, type Services } from '../services.js';

const SHOWN = 50;

function table(ctx: PageCtx, label: string, list: OutboxEvent[], replay: boolean): Html {
  const rows = list.map((e) => html`<tr data-event="evt_${e.id}"><td class="id">evt_${e.id}</td><td class="mono">${e.trxid}</td><td>${e.type}</td><td>${timeTag(e.at, ctx.now)}</td>
<td class="num">${e.attempts}</td><td>${e.delivery === 'pending' ? timeTag(e.nextAttemptAt, ctx.now) : ''}</td><td>${e.lastStatus ?? ''}</td><td>${e.lastError ?? ''}</td><td class="mono">${shownUrl(e.url)}</td>
${replay ? html`<td>${actionButton(ctx, '/webhooks/replay', 'Replay', { fields: { event: `evt_${e.id}` } })}</td>` : ''}</tr>`);
  return tableWrap(label, html`<table><thead><tr><th scope="col">Event</th><th scope="col">trxid</th><th scope="col">Type</th><th scope="col">When</th><th scope="col">Attempts</th><th scope="col">Next attempt</th><th scope="col">Last status</th><th scope="col">Last error</th><th scope="col">URL</th>${replay ? html`<th scope="col">Replay</th>` : ''}</tr></thead><tbody>${rows}</tbody></table>`);
}

export function registerWebhooks(app: Hono<ConsoleEnv>, svc: Services): void {
  const render = (c: Ctx, notice?: { ok: boolean; text: string }): string => {
    const ctx = pageCtx(c, svc);
    const s = webhookSummary(svc.rt.db, ctx.now, SHOWN);
    const w = svc.rt.config.orderApi.webhook;
    const n = s.counts;
    const body = html`${notice ? html`<p class="${notice.ok ? 'notice' : 'message'}" role="${notice.ok ? 'status' : 'alert'}">${notice.text}</p>` : ''}
<p>Every change of an order placed through the order API is posted, signed, to ${w.url ? html`<span class="mono">${shownUrl(w.url)}</span>` : html`<strong>no URL</strong> (TOPUP_ORDER_WEBHOOK_URL is not set)`}${w.allow.length > 0 ? html`, or to the order's own callbackUrl (allowed: ${w.allow.join(', ')})` : ''}. A failed attempt is retried for at least 24 hours; in order for each order.</p>
<dl class="facts" data-webhook-counts>
  <div><dt>Pending</dt><dd data-count="pending">${n.pending}</dd></div>
  <div><dt>Delivered</dt><dd data-count="delivered">${n.delivered}</dd></div>
  <div><dt>Failed</dt><dd data-count="failed">${n.failed}</dd></div>
  <div><dt>No URL</dt><dd data-count="none">${n.none}</dd></div>
  <div><dt>Oldest pending</dt><dd>${s.oldestPending ? html`evt_${s.oldestPending.id} (${s.oldestPending.trxid}), ${duration(s.oldestPending.ageMs)} old` : 'none'}</dd></div>
  <div><dt>Last error</dt><dd>${s.lastError ? html`evt_${s.lastError.id}: ${s.lastError.lastError}` : 'none'}</dd></div>
</dl>
<h2>Failed (${n.failed})</h2>
${s.failed.length === 0 ? html`<p class="ok">No event was given up.</p>` : html`<p>Given up after their retries. Replay one, or all of them, once the receiver works: the daemon posts them again within a second.</p>
<p>${actionButton(ctx, '/webhooks/replay', `Replay all ${n.failed} failed`, { fields: { all: 'failed' } })}</p>
${table(ctx, 'Failed webhooks', s.failed, true)}${n.failed > SHOWN ? html`<p class="muted">The newest ${SHOWN} of ${n.failed} are shown.</p>` : ''}`}
<h2>Pending (${n.pending})</h2>
${s.pending.length === 0 ? html`<p class="ok">Nothing waiting.</p>` : html`${table(ctx, 'Pending webhooks', s.pending, false)}${n.pending > SHOWN ? html`<p class="muted">The newest ${SHOWN} of ${n.pending} are shown.</p>` : ''}`}`;
    return page(ctx, 'Webhooks', body);
  };

  app.get('/webhooks', (c) => {
    const done = c.req.query('replayed');
    return c.html(render(c, done !== undefined ? { ok: true, text: `Replayed ${done}: the daemon posts ${done === '1 event' ? 'it' : 'them'} within a second.` } : undefined));
  });

  app.post('/webhooks/replay', async (c) => {
    const form = await c.req.parseBody();
    const all = form.all === 'failed';
    const id = eventNumber(String(form.event ?? ''));
    if (!all && id === null) {
      record(c, svc, 'webhook replay', 'refused', { detail: 'no event named' });
      return c.html(render(c, { ok: false, text: 'Name an event to replay.' }), 400);
    }
    const what = all ? 'every failed webhook' : `webhook evt_${id}`;
    try {
      const r = new WebhookOutbox(svc.rt.db).replay(all ? { failed: true } : { ids: [id!] });
      record(c, svc, 'webhook replay', 'ok', { detail: `${what}: ${r.replayed} replayed${r.alreadyPending ? `, ${r.alreadyPending} already pending` : ''}` });
      return c.redirect(`/webhooks?replayed=${encodeURIComponent(`${r.replayed} event${r.replayed === 1 ? '' : 's'}`)}`, 303);
    } catch (err) {
      const e = coerceError(err);
      record(c, svc, 'webhook replay', 'failed', { detail: `${what}: ${e.message}` });
      return c.html(render(c, { ok: false, text: `Could not replay ${what}: ${e.message}` }), 500);
    }
  });
}
