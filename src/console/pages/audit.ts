/** The audit log: every reveal and every action taken in the console, newest first. */
import type { Hono } from 'hono';
import type { ConsoleEnv } from '../auth.js';
import { html, query, timeTag } from '../html.js';
import { page, tableWrap } from '../layout.js';
import { pageCtx, type Services } from '../services.js';

const PAGE = 100;

export function registerAudit(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/audit', (c) => {
    const ctx = pageCtx(c, svc);
    const before = Number(c.req.query('before')) || undefined;
    const list = svc.audit.recent(PAGE, before);
    const rows = list.map((e) => html`<tr><td>${timeTag(e.at, ctx.now)}</td><td>${e.actor}<br><span class="muted">${e.address ?? ''}</span></td>
<td>${e.action}</td><td><span class="badge ${e.outcome === 'ok' ? 'good' : 'bad'}">${e.outcome}</span></td>
<td class="id">${e.batchId ? html`<a href="/batches/${encodeURIComponent(e.batchId)}">${e.batchId}</a>${e.line !== null ? `:${e.line}` : ''}` : ''}</td><td>${e.detail ?? ''}</td></tr>`);
    const last = list.at(-1);
    const body = html`<p>Every reveal of codes and every action taken in this console, with who and from where.</p>
${list.length === 0 ? html`<p class="muted">Nothing recorded yet.</p>` : tableWrap('Audit log', html`<table><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Outcome</th><th scope="col">Batch</th><th scope="col">Detail</th></tr></thead><tbody>${rows}</tbody></table>`)}
${list.length === PAGE && last ? html`<p><a href="/audit${query({ before: last.id })}">Older entries</a></p>` : ''}`;
    return c.html(page(ctx, 'Audit log', body));
  });
}
