/**
 * The review queue: rows whose outcome the program would not guess, with the last answer the API
 * gave (redacted: codes and the key never in it), each resolved as charged (with its order id,
 * checked against the API) or not charged, through the same store operation as
 * `topup review resolve` (ops/review.ts). The operator's name is recorded with it.
 *
 * A card's order id is filled in with the order its last answer named, when it named one and did
 * not say it failed (an id in a failure body is a request id, not an order): the row itself holds
 * no order in review, and copying the id out of the answer by hand was the slow part. It is only
 * a suggestion: resolving as charged still checks that order against the API and the row.
 *
 * Many rows at once: tick them, choose one decision, and each is resolved exactly as its own card
 * would be (the same operation and check, in turn, one audit entry each); the page then says
 * which were resolved and why the others were not. Eighty rows were eighty forms.
 */
import type { Hono } from 'hono';
import { describeAudit } from '../../api/audit.js';
import { readOrder } from '../../api/schemas.js';
import { resolveReview } from '../../ops/review.js';
import { coerceError } from '../../kernel/errors.js';
import type { Row } from '../../store/rows.js';
import { ownTrxid } from '../../store/row-record.js';
import type { ConsoleEnv } from '../auth.js';
import { html, timeTag, usd, type Html } from '../html.js';
import { csrfField, page, type PageCtx } from '../layout.js';
import { actorOf, pageCtx, record, type Ctx, type Services } from '../services.js';
import { REVIEW_INTRO, restoreFinding } from './review-finding.js';

const SHOWN = 100;

/**
 * The order id the row's last answer named: an order read from its body (as the client reads
 * one), unless the answer says nothing was made (success or orderCreated false, or an HTTP error
 * without orderCreated true). Null when it named none.
 */
export function orderNamedByAnswer(copy: string | null): string | null {
  if (!copy) return null;
  let a: { status?: number | null; body?: unknown };
  try {
    a = JSON.parse(copy) as { status?: number | null; body?: unknown };
  } catch {
    return null;
  }
  const order = readOrder(a.body);
  if (!order?.orderId || order.success === false || order.orderCreated === false) return null;
  if (typeof a.status === 'number' && (a.status < 200 || a.status >= 300) && order.orderCreated !== true) return null;
  return order.orderId;
}

/** What a card offers as the row's order: the row's own, or the one its last answer named. */
function suggestedOrder(r: Row): { id: string; from: 'row' | 'answer' } | null {
  if (r.orderId) return { id: r.orderId, from: 'row' };
  const named = orderNamedByAnswer(r.lastAnswer);
  return named ? { id: named, from: 'answer' } : null;
}

function item(ctx: PageCtx, r: Row, bulk: boolean): Html {
  const key = `${r.batchId}:${r.line}`;
  const idBase = `r-${r.batchId}-${r.line}`.replace(/[^\w-]/g, '_');
  const order = suggestedOrder(r);
  const finding = restoreFinding(r.error);
  return html`<li class="review-row" data-row="${key}">
${!bulk ? '' : html`<label class="check pick"><input type="checkbox" name="row" value="${key}" form="bulk" data-pick> Select for resolving at once</label>
${order ? html`<input type="hidden" name="order:${key}" value="${order.id}" form="bulk">` : ''}`}
<h2 class="h3"><a class="nowrap" href="/batches/${encodeURIComponent(r.batchId)}?q=${encodeURIComponent(r.trxid ?? '')}">${key}</a> · ${r.packName ?? ''} · ${usd(r.expectedUsd)}</h2>
<dl class="facts">
  <div><dt>trxid</dt><dd class="mono">${ownTrxid(r) ?? ''}${r.trxid !== null && r.trxid !== ownTrxid(r) ? html` <span class="muted">(sent to ${r.account} as ${r.trxid})</span>` : ''}</dd></div>
  <div><dt>Player</dt><dd>${r.request?.userId ?? ''}</dd></div>
  ${order ? html`<div><dt>Order named</dt><dd class="mono">${order.id}${order.from === 'answer' ? html` <span class="muted">(by the last answer: check it is this row's purchase)</span>` : ''}</dd></div>` : ''}
  <div><dt>In review since</dt><dd>${timeTag(r.reviewSince ?? r.updatedAt, ctx.now)}</dd></div>
  <div><dt>Why</dt><dd>${r.error ?? ''}</dd></div>
  ${finding ? html`<div><dt>The lookup found</dt><dd data-finding>${finding}</dd></div>` : ''}
  <div><dt>Last answer seen</dt><dd class="answer">${describeAudit(r.lastAnswer, 600) || '—'}</dd></div>
</dl>
${ctx.readOnly ? '' : html`<div class="resolve">
<form method="post" action="/review/resolve">${csrfField(ctx)}
  <input type="hidden" name="batch" value="${r.batchId}"><input type="hidden" name="line" value="${r.line}"><input type="hidden" name="kind" value="charged">
  <label for="${idBase}-order">Charged: its order id</label>
  <input id="${idBase}-order" name="orderId" required autocomplete="off" value="${order?.id ?? ''}">
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

/** The form that resolves the ticked rows: one decision, each row checked as on its own card. */
function bulkForm(ctx: PageCtx): Html {
  return html`<form id="bulk" method="post" action="/review/resolve-many" class="bulk">${csrfField(ctx)}
<fieldset><legend>Resolve the selected rows at once</legend>
  <label class="check" data-select-all-wrap hidden><input type="checkbox" data-select-all> Select every row shown</label>
  <label class="check"><input type="radio" name="kind" value="not-charged" required> NOT charged: nothing was bought for any of them (each ends rejected; a retry may buy it again)</label>
  <label class="check"><input type="radio" name="kind" value="charged"> Charged: each with the order id its card names (checked against the API one by one; a row without one is left as it is)</label>
  <label class="check"><input type="checkbox" name="force" value="1"> record a charged row even if the API cannot confirm its order</label>
  <p><button type="submit">Resolve the selected rows</button> <span class="muted" data-picked aria-live="polite"></span></p>
</fieldset></form>`;
}

interface Outcome {
  key: string;
  ok: boolean;
  text: string;
}

export function registerReview(app: Hono<ConsoleEnv>, svc: Services): void {
  const render = (c: Ctx, notice?: { ok: boolean; text: string; list?: Outcome[] }): string => {
    const ctx = pageCtx(c, svc);
    const rows = svc.rt.rows.reviewRows({ limit: SHOWN });
    const bulk = !ctx.readOnly && rows.length >= 2;
    const body = html`${notice ? html`<div class="${notice.ok ? 'notice' : 'message'}" role="${notice.ok ? 'status' : 'alert'}"><p>${notice.text}</p>${notice.list && notice.list.length > 0 ? html`<ul>${notice.list.map((o) => html`<li>${o.key}: ${o.text}</li>`)}</ul>` : ''}</div>` : ''}
<p>${REVIEW_INTRO}</p>
${rows.length === 0 ? html`<p class="ok">No rows waiting for review.</p>` : html`${bulk ? bulkForm(ctx) : ''}<ol class="review">${rows.map((r) => item(ctx, r, bulk))}</ol>`}
${ctx.reviewRows > SHOWN ? html`<p class="muted">The newest ${SHOWN} of ${ctx.reviewRows} are shown.</p>` : ''}`;
    return page(ctx, `Review (${ctx.reviewRows})`, body);
  };

  /** One row resolved as its card would: the shared operation, an audit entry, the runner woken. */
  const resolveOne = async (c: Ctx, req: { batchId: string; line: number; kind: 'charged' | 'not-charged'; orderId: string; force: boolean }): Promise<Outcome> => {
    const { batchId, line, kind, orderId } = req;
    const key = `${batchId}:${line}`;
    try {
      const r = await resolveReview(svc.rt, {
        batchId,
        line,
        ...(kind === 'charged' ? { chargedOrderId: orderId } : { notCharged: true }),
        by: actorOf(c, svc),
        force: req.force,
      });
      record(c, svc, 'resolve', 'ok', { batchId, line, detail: `${kind}${kind === 'charged' ? ` order ${orderId}` : ''}: now ${r.row.state}` });
      svc.runner.wake();
      return { key, ok: true, text: `as ${kind} (now ${r.row.state})` };
    } catch (err) {
      const e = coerceError(err);
      record(c, svc, 'resolve', 'failed', { batchId, line: Number.isInteger(line) ? line : null, detail: `${kind}: ${e.message}` });
      // The shared operation speaks the CLI's words; here the option is the checkbox.
      return { key, ok: false, text: e.message.replace('with --force', 'with "record it even if the API cannot confirm the order"') };
    }
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
    const o = await resolveOne(c, { batchId, line, kind, orderId: String(form.orderId ?? '').trim(), force: form.force === '1' });
    if (o.ok) return c.redirect(`/review?resolved=${encodeURIComponent(`${o.key} ${o.text}`)}`, 303);
    return c.html(render(c, { ok: false, text: `${o.key} was not resolved: ${o.text}` }), 400);
  });

  app.post('/review/resolve-many', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const picked = [form.row ?? []].flat().filter((v): v is string => typeof v === 'string');
    const kind = form.kind === 'not-charged' ? 'not-charged' : form.kind === 'charged' ? 'charged' : null;
    if (kind === null || picked.length === 0) {
      return c.html(render(c, { ok: false, text: kind === null ? 'Choose what happened to the selected rows: charged or NOT charged.' : 'Select the rows to resolve first.' }), 400);
    }
    const outcomes: Outcome[] = [];
    // In turn, not at once: each charged row is one API call, within the same rate budget as orders.
    for (const key of [...new Set(picked)].slice(0, SHOWN)) {
      const at = key.lastIndexOf(':');
      const batchId = key.slice(0, at);
      const line = Number(key.slice(at + 1));
      const named = form[`order:${key}`];
      const orderId = typeof named === 'string' ? named.trim() : '';
      if (kind === 'charged' && orderId === '') {
        record(c, svc, 'resolve', 'refused', { batchId, line: Number.isInteger(line) ? line : null, detail: 'charged: no order id named (resolve it on its own card)' });
        outcomes.push({ key, ok: false, text: 'no order id is named for it: resolve it on its own card, with its order id' });
        continue;
      }
      outcomes.push(await resolveOne(c, { batchId, line, kind, orderId, force: form.force === '1' }));
    }
    const done = outcomes.filter((o) => o.ok).length;
    const text = `Resolved ${done} of ${outcomes.length} selected rows as ${kind}${done < outcomes.length ? `; ${outcomes.length - done} not resolved (each says why)` : ''}.`;
    return c.html(render(c, { ok: done === outcomes.length, text, list: outcomes }), done > 0 ? 200 : 400);
  });
}
