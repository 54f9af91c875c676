/**
 * Cancel and Retry, each a page that says exactly what will happen, then a POST through the same
 * operator actions the CLI uses (ops/cancel.ts requestCancel, ops/retry.ts createRetryBatch).
 * The daemon's runner is woken so the change is acted on at once rather than at its next look.
 */
import type { Hono } from 'hono';
import { cancelPreview, requestCancel } from '../../ops/cancel.js';
import { createRetryBatch, retryPlan, type RetryPlan } from '../../ops/retry.js';
import { isPlayerIdFailure } from '../../api/classify.js';
import { lineRanges, requestRunCovered, runCoveredPreview } from '../../ops/run-covered.js';
import { coerceError } from '../../kernel/errors.js';
import { counted, linesLabel } from '../../kernel/counts.js';
import type { ConsoleEnv } from '../auth.js';
import { html, usd, type Html } from '../html.js';
import { csrfField, messagePage, page, tableWrap, type PageCtx } from '../layout.js';
import { pageCtx, record, type Services } from '../services.js';

export function registerBatchActions(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/batches/:id/cancel', (c) => {
    const ctx = pageCtx(c, svc);
    const p = cancelPreview(svc.rt, c.req.param('id'));
    const id = encodeURIComponent(p.batch.id);
    if (p.finished) return c.html(messagePage(ctx, 'Cancel', `Batch ${p.batch.id} has already finished (${p.batch.state}): there is nothing to cancel.`, `/batches/${id}`));
    if (p.batch.state === 'duplicate') {
      return c.html(messagePage(ctx, 'Cancel', `Batch ${p.batch.id} is a copy of batch ${p.batch.duplicateOf ?? '(unknown)'} (the same file): it orders nothing itself. To stop those orders, cancel ${p.batch.duplicateOf ?? 'that batch'}.`, `/batches/${id}`));
    }
    const body = html`<p>Cancel batch <strong>${p.batch.id}</strong> (${p.batch.sourceName})?</p>
<ul class="consequences">
  <li><strong>${p.skip.rows}</strong> rows not sent yet (${usd(p.skip.usd)}) will be <strong>skipped</strong>: nothing is bought for them.</li>
  <li><strong>${p.mayCharge.rows}</strong> rows already sent (up to ${usd(p.mayCharge.usd)}) <strong>may still be charged</strong>: they are followed to their end, and the result file shows what happened to each.</li>
  <li>Rows already finished stay as they are. The result files are written once the sent rows have ended.</li>
</ul>
${ctx.readOnly ? html`<p>Read-only console: cancelling is switched off.</p>` : html`<form method="post" action="/batches/${id}/cancel">${csrfField(ctx)}
<button type="submit" class="danger">Cancel the batch: skip ${p.skip.rows} unsent rows</button> <a href="/batches/${id}">Keep it running</a></form>`}`;
    return c.html(page(ctx, 'Cancel a batch', body));
  });

  app.post('/batches/:id/cancel', (c) => {
    const id = c.req.param('id');
    const before = cancelPreview(svc.rt, id);
    const out = requestCancel(svc.rt, id);
    if (out.kind === 'already-finished') {
      record(c, svc, 'cancel', 'refused', { batchId: id, detail: 'already finished' });
    } else {
      record(c, svc, 'cancel', 'ok', { batchId: id, detail: `${before.skip.rows} unsent rows (${before.skip.usd} USD) to skip; ${before.mayCharge.rows} sent rows followed to their end` });
      svc.runner.wake();
    }
    return c.redirect(`/batches/${encodeURIComponent(id)}`, 303);
  });

  app.get('/batches/:id/run-covered', async (c) => {
    const ctx = pageCtx(c, svc);
    const id = c.req.param('id');
    let p;
    try {
      p = await runCoveredPreview(svc.rt, id);
    } catch (err) {
      return c.html(messagePage(ctx, 'Run the covered part', coerceError(err).message, `/batches/${encodeURIComponent(id)}`), 400);
    }
    const s = p.split;
    const eid = encodeURIComponent(p.batch.id);
    const body = html`<p>Batch <strong>${p.batch.id}</strong> (${p.batch.sourceName}) waits for balance: ${p.batch.waitDetail ?? ''}.</p>
<p>At the balance now (${usd(s.balanceUsd)}; ${usd(s.availableUsd)} not promised to other batches):</p>
<ul class="consequences">
  <li><strong>${s.keep.length}</strong> ${s.keep.length === 1 ? 'row' : 'rows'} (${usd(s.keepUsd)}) <strong>run now</strong>${s.keep.length > 0 ? html`: ${linesLabel(s.keep.map((r) => r.line), lineRanges(s.keep.map((r) => r.line)))}` : ''}.</li>
  <li><strong>${s.skip.length}</strong> ${s.skip.length === 1 ? 'row' : 'rows'} (${usd(s.skipUsd)}) ${s.skip.length === 1 ? 'is' : 'are'} <strong>skipped</strong>: nothing is bought for them${s.skip.length > 0 ? html` (${linesLabel(s.skip.map((r) => r.line), lineRanges(s.skip.map((r) => r.line)))})` : ''}. After a top-up, Retry buys them.</li>
  <li>The daemon decides with the balance it reads when it acts: never more than the money there is then.</li>
</ul>
${s.keep.length === 0 ? html`<p class="message" role="alert">The balance covers not even one row: the batch keeps waiting whole.</p>` : ''}
${ctx.readOnly ? html`<p>Read-only console: this is switched off.</p>` : html`<form method="post" action="/batches/${eid}/run-covered">${csrfField(ctx)}
<button type="submit" class="primary">Run ${s.keep.length} rows, skip ${s.skip.length}</button> <a href="/batches/${eid}">Keep waiting whole</a></form>`}`;
    return c.html(page(ctx, 'Run the part the balance covers', body));
  });

  app.post('/batches/:id/run-covered', (c) => {
    const id = c.req.param('id');
    try {
      requestRunCovered(svc.rt, id);
      record(c, svc, 'run-covered', 'ok', { batchId: id, detail: 'run the rows the balance covers; skip the rest' });
      svc.runner.wake();
      return c.redirect(`/batches/${encodeURIComponent(id)}`, 303);
    } catch (err) {
      const e = coerceError(err);
      record(c, svc, 'run-covered', 'refused', { batchId: id, detail: e.message });
      return c.html(messagePage(pageCtx(c, svc), 'Run the covered part', e.message, `/batches/${encodeURIComponent(id)}`), 400);
    }
  });

  app.get('/batches/:id/retry', (c) => {
    const ctx = pageCtx(c, svc);
    const include = c.req.query('players') === '1';
    const id = c.req.param('id');
    // A batch is retried once (ops/retry.ts refuses a second retry, from here and from the CLI):
    // say where its rows went and how to retry what failed again, rather than only an error.
    const earlier = svc.rt.batches.get(id) ? svc.rt.batches.retriedAs(id) : undefined;
    if (earlier) {
      const ee = encodeURIComponent(earlier);
      const body = html`<p>Batch <strong>${id}</strong> was already retried as batch <a href="/batches/${ee}">${earlier}</a>: its failed rows were bought again there. A batch is retried once (<code>topup retry ${id}</code> refuses a second retry too), so nothing is bought twice by two retries.</p>
<p>To retry what failed again, retry that batch: <a class="button" href="/batches/${ee}/retry">Retry ${earlier}…</a> (<code>topup retry ${earlier}</code>).</p>
<p><a href="/batches/${encodeURIComponent(id)}">Back to batch ${id}</a></p>`;
      return c.html(page(ctx, 'Retry failed rows', body), 409);
    }
    let plan;
    try {
      plan = retryPlan(svc.rt, id, { includePlayerIdFailures: include });
    } catch (err) {
      // Every row that could be bought again failed for its player id: the plain retry has nothing
      // to buy. Say so and lead on (a new user met a bare refusal here and was stuck), rather than
      // only the refusal: the same plan with those rows included is what ?players=1 would buy.
      const withIds = include ? undefined : planOrUndefined(svc, id, true);
      if (withIds) return c.html(page(ctx, 'Retry failed rows', playerIdsOnly(ctx, withIds)));
      return c.html(messagePage(ctx, 'Retry', coerceError(err).message, `/batches/${encodeURIComponent(id)}`), 400);
    }
    const eid = encodeURIComponent(plan.old.id);
    const body = html`<p>Retry batch <strong>${plan.old.id}</strong> (${plan.old.sourceName}): a new batch of <strong>${plan.rows.length}</strong> ${plan.rows.length === 1 ? 'row' : 'rows'}, ${linesLabel(plan.rows.map((r) => r.line), plan.rows.slice(0, 30).map((r) => r.line).join(', '))}${plan.rows.length > 30 ? ' …' : ''}.</p>
<p class="message" role="alert">These are <strong>new purchases</strong>: every row gets a new trxid and is charged again if it completes, about <strong>${usd(plan.usd)}</strong> at the prices of the first attempt.${include && plan.rows.some((r) => isPlayerIdFailure(r.error)) ? html` The rows that failed for their player id are sent with the <strong>same player ids</strong>: where an id is still wrong, the supplier cancels the order again (the first time they refunded it).` : ''}</p>
${plan.left.length > 0 ? html`<h2>Left out (${plan.left.length})</h2><ul>${plan.left.slice(0, 50).map((l) => html`<li>line ${l.line}: ${l.why}</li>`)}</ul>` : ''}
<p>${include ? html`Rows that failed for the player id are included. <a href="/batches/${eid}/retry">Leave them out</a>` : html`Rows that failed for the player id are left out (the same id fails again). <a href="/batches/${eid}/retry?players=1">Include them (after fixing the ids)</a>`}</p>
${ctx.readOnly ? html`<p>Read-only console: retrying is switched off.</p>` : html`<form method="post" action="/batches/${eid}/retry">${csrfField(ctx)}
${include ? html`<input type="hidden" name="players" value="1">` : ''}
<button type="submit" class="primary">${plan.rows.length === 1 ? 'Buy this row again' : `Buy these ${plan.rows.length} rows again`} for about ${usd(plan.usd)}</button> <a href="/batches/${eid}">Do not retry</a></form>`}`;
    return c.html(page(ctx, 'Retry failed rows', body));
  });

  app.post('/batches/:id/retry', async (c) => {
    const id = c.req.param('id');
    const form = await c.req.parseBody();
    try {
      const r = await createRetryBatch(svc.rt, id, { includePlayerIdFailures: form.players === '1' });
      record(c, svc, 'retry', 'ok', { batchId: id, detail: `new batch ${r.batch.id}: ${counted(r.rows, 'row')} (${linesLabel(r.lines, r.lines.slice(0, 50).join(', '))})` });
      svc.runner.wake();
      return c.redirect(`/batches/${encodeURIComponent(r.batch.id)}`, 303);
    } catch (err) {
      const e = coerceError(err);
      record(c, svc, 'retry', 'failed', { batchId: id, detail: e.message });
      return c.html(messagePage(pageCtx(c, svc), 'Retry', e.message, `/batches/${encodeURIComponent(id)}`), 400);
    }
  });
}

function planOrUndefined(svc: Services, id: string, includePlayerIdFailures: boolean): RetryPlan | undefined {
  try {
    return retryPlan(svc.rt, id, { includePlayerIdFailures });
  } catch {
    return undefined;
  }
}

/**
 * The Retry page of a batch whose every retryable failure was a player id (the plain retry leaves
 * those out: the same id fails again). It says so, shows the ids, says where the money is (the
 * supplier cancelled those orders and refunded them: nothing was spent, nothing is bought until
 * the operator chooses), and offers both ways on: a corrected file, or ?players=1 when the ids are
 * right after all (the retry sends the ids as the file had them).
 */
function playerIdsOnly(ctx: PageCtx, plan: RetryPlan): Html {
  const eid = encodeURIComponent(plan.old.id);
  const n = plan.rows.length;
  const rows = n === 1 ? 'row' : 'rows';
  const lines = linesLabel(plan.rows.map((r) => r.line), plan.rows.slice(0, 30).map((r) => r.line).join(', '));
  return html`<p data-player-ids-only>Every failed row of batch <strong>${plan.old.id}</strong> (${plan.old.sourceName}) that could be bought again failed for its <strong>player id</strong>: <strong>${n}</strong> ${rows}, ${lines}${n > 30 ? ' …' : ''}. A plain retry leaves such rows out, because the same id fails again, so it has nothing to buy.</p>
<p class="notice" role="status" data-money>Money: the supplier cancelled ${n === 1 ? 'this order' : 'these orders'} and refunded ${n === 1 ? 'it' : 'them'}: nothing was spent on ${n === 1 ? 'it' : 'them'}, and nothing is bought until you choose below. Buying ${n === 1 ? 'it' : 'them'} again would cost about <strong>${usd(plan.usd)}</strong> at the prices of the first attempt.</p>
${tableWrap('Rows that failed for the player id', html`<table><thead><tr><th scope="col">Line</th><th scope="col">Player</th><th scope="col">Pack</th><th scope="col">USD</th><th scope="col">Supplier's answer</th></tr></thead>
<tbody>${plan.rows.slice(0, 50).map((r) => html`<tr><td class="num">${r.line}</td><td class="id">${[r.request?.userId, r.request?.zoneId].filter((x) => x !== undefined && x !== null && String(x) !== '').join(' / ')}</td><td>${r.packName ?? ''}</td><td class="num">${usd(r.expectedUsd)}</td><td>${r.error ?? ''}</td></tr>`)}</tbody></table>`)}
${n > 50 ? html`<p class="muted">and ${n - 50} more.</p>` : ''}
<h2>What you can do</h2>
<ul class="consequences">
  <li><strong>An id in your file is wrong:</strong> correct it in the file and <a href="/upload">upload the file</a> again (or drop it into the inbox). The corrected rows are new purchases; the rows already bought are recognised as repeats and not bought twice.</li>
  <li><strong>The ids are right after all</strong> (the player fixed their account, or the game refused them for a while): <a class="button" href="/batches/${eid}/retry?players=1">${n === 1 ? 'Retry this row' : `Retry these ${n} rows`} with the same ids…</a> The next page shows exactly what is bought before anything is. Where an id is still wrong, the supplier cancels the order again.</li>
</ul>
${plan.left.length > 0 ? html`<h2>Left out in any case (${plan.left.length})</h2><ul>${plan.left.slice(0, 50).map((l) => html`<li>line ${l.line}: ${l.why}</li>`)}</ul>` : ''}
<p><a href="/batches/${eid}">Back to batch ${plan.old.id}</a>${ctx.readOnly ? ' (read-only console: retrying is switched off)' : ''}</p>`;
}
