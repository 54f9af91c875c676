/**
 * The review queue: rows whose outcome the program would not guess, with the last answer the API
 * gave (redacted: codes and the key never in it), each resolved as charged (with its order id,
 * checked against the API) or not charged, through the same store operation as
 * `topup review resolve` (poll/review-resolve.ts). The operator's name is recorded with it.
 */
import type { Hono } from 'hono';
import { describeAudit } from '../../api/audit.js';
import { resolveReview } from '../../poll/review-resolve.js';
import { coerceError } from '../../errors.js';
import type { Row } from '../../store/rows.js';
import type { ConsoleEnv } from '../auth.js';
import { html, timeTag, usd, type Html } from '../html.js';
import { csrfField, page, type PageCtx } from '../layout.js';
import { actorOf, pageCtx, record, type Ctx, type Services } from '../services.js';

const SHOWN = 100;

function item(ctx: PageCtx, r: Row): Html {
  const key = `${r.batchId}:${r.line}`;
  const idBase = `r-${r.batchId}-${r.line}`.replace(/[^\w-]/g, '_');
  return html`<li class="review-row" data-row="${key}">
<h2 class="h3"><a href="/batches/${encodeURIComponent(r.batchId)}?q=${encodeURIComponent(r.trxid ?? '')}">${key}</a> · ${r.packName ?? ''} · ${usd(r.expectedUsd)}</h2>
<dl class="facts">
  <div><dt>trxid</dt><dd class="mono">${r.trxid ?? ''}</dd></div>
  <div><dt>Player</dt><dd>${r.request?.userId ?? ''}</dd></div>
  ${r.orderId ? html`<div><dt>Order named</dt><dd class="mono">${r.orderId}</dd></div>` : ''}
  <div><dt>In review since</dt><dd>${timeTag(r.reviewSince ?? r.updatedAt, ctx.now)}</dd></div>
  <div><dt>Why</dt><dd>${r.error ?? ''}</dd></div>
  <div><dt>Last answer seen</dt><dd class="answer">${describeAudit(r.lastAnswer, 600) || '—'}</dd></div>
</dl>
${ctx.readOnly ? '' : html`<div class="resolve">
<form method="post" action="/review/resolve">${csrfField(ctx)}
  <input type="hidden" name="batch" value="${r.batchId}"><input type="hidden" name="line" value="${r.line}"><input type="hidden" name="kind" value="charged">
  <label for="${idBase}-order">Charged: its order id</label>
  <input id="${idBase}-order" name="orderId" required autocomplete="off" value="${r.orderId ?? ''}">
  <label class="check"><input type="checkbox" name="force" value="1"> record it even if the API cannot confirm the order</label>
  <button type="submit">Resolve as charged</button>
</form>
<form method="post" action="/review/resolve">${csrfField(ctx)}
  <input type="hidden" name="batch" value="${r.batchId}"><input type="hidden" name="line" value="${r.line}"><input type="hidden" name="kind" value="not-charged">
  <button type="submit" class="danger">Resolve as NOT charged</button>
  <span class="muted">nothing was bought: the row ends rejected, and a retry may buy it again</span>
</form></div>`}
</li>`;
}

export function registerReview(app: Hono<ConsoleEnv>, svc: Services): void {
  const render = (c: Ctx, notice?: { ok: boolean; text: string }): string => {
    const ctx = pageCtx(c, svc);
    const rows = svc.rt.rows.reviewRows({ limit: SHOWN });
    const body = html`${notice ? html`<p class="${notice.ok ? 'notice' : 'message'}" role="${notice.ok ? 'status' : 'alert'}">${notice.text}</p>` : ''}
<p>These rows were sent, but whether they were charged is not known. Check each with the supplier, then record what happened. A row resolved as charged is checked against the API; its batch's results are written again as a new version.</p>
${rows.length === 0 ? html`<p class="ok">No rows waiting for review.</p>` : html`<ol class="review">${rows.map((r) => item(ctx, r))}</ol>`}
${ctx.reviewRows > SHOWN ? html`<p class="muted">The newest ${SHOWN} of ${ctx.reviewRows} are shown.</p>` : ''}`;
    return page(ctx, `Review (${ctx.reviewRows})`, body);
  };

  app.get('/review', (c) => {
    const done = c.req.query('resolved');
    return c.html(render(c, done ? { ok: true, text: `Resolved ${done}.` } : undefined));
  });

  app.post('/review/resolve', async (c) => {
    const form = await c.req.parseBody();
    const batchId = String(form.batch ?? '');
    const line = Number(form.line);
    const kind = form.kind === 'not-charged' ? 'not-charged' : 'charged';
    const orderId = String(form.orderId ?? '').trim();
    try {
      const r = await resolveReview(svc.actionRt, {
        batchId,
        line,
        ...(kind === 'charged' ? { chargedOrderId: orderId } : { notCharged: true }),
        by: actorOf(c, svc),
        force: form.force === '1',
      });
      record(c, svc, 'resolve', 'ok', { batchId, line, detail: `${kind}${kind === 'charged' ? ` order ${orderId}` : ''}: now ${r.row.state}` });
      svc.runner.wake();
      return c.redirect(`/review?resolved=${encodeURIComponent(`${batchId}:${line} as ${kind} (now ${r.row.state})`)}`, 303);
    } catch (err) {
      const e = coerceError(err);
      record(c, svc, 'resolve', 'failed', { batchId, line: Number.isInteger(line) ? line : null, detail: `${kind}: ${e.message}` });
      // The shared operation speaks the CLI's words; here the option is the checkbox.
      const why = e.message.replace('with --force', 'with "record it even if the API cannot confirm the order"');
      return c.html(render(c, { ok: false, text: `${batchId}:${line} was not resolved: ${why}` }), 400);
    }
  });
}
