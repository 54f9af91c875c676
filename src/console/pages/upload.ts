/**
 * Upload → check → Submit. The check is `topup validate`'s own quote (row problems, total,
 * balance after); Submit moves the very bytes that were checked into the inbox (uploads.ts) and
 * then follows the daemon claiming them to the new batch's page. Nothing here places an order:
 * the daemon does, from the inbox, as for any dropped file.
 */
import { systemClock } from '../../kernel/clock.js';
import type { Hono } from 'hono';
import { quoteFile, routingCostText, type Quote } from '../../ops/quote.js';
import { coerceError, InputFileError } from '../../kernel/errors.js';
import type { ConsoleEnv } from '../auth.js';
import { html, usd, type Html } from '../html.js';
import { csrfField, messagePage, page, tableWrap, type PageCtx } from '../layout.js';
import { pageCtx, record, type Services } from '../services.js';
import { UPLOAD_EXTENSIONS, type Upload } from '../uploads.js';

const SHOWN_PROBLEMS = 200;
/** How long the "waiting for the daemon" page waits before saying something is wrong. */
const CLAIM_PATIENCE_MS = 60_000;

function form(ctx: PageCtx, svc: Services, error?: string): Html {
  const mb = Math.round(svc.settings.uploadMaxBytes / 1024 / 1024);
  if (ctx.readOnly) return html`<p>Uploading is switched off in this read-only console.</p>`;
  return html`${error ? html`<p class="message" role="alert">${error}</p>` : ''}
<form method="post" action="/upload" enctype="multipart/form-data" class="upload">
  ${csrfField(ctx)}
  <label for="file" class="drop">
    <span class="drop-title">Drop an order file here, or choose one</span>
    <span class="muted">${UPLOAD_EXTENSIONS.join(', ')} · up to ${mb} MB · checked like <code>topup validate</code>; nothing is ordered until you press Submit</span>
    <input id="file" name="file" type="file" required accept="${UPLOAD_EXTENSIONS.join(',')}" data-max="${svc.settings.uploadMaxBytes}">
  </label>
  <p class="file-note" data-file-note aria-live="polite"></p>
  <button type="submit">Check file</button>
</form>`;
}

const CARRIED = 'yours: carried through to the result';
/** Columns listed one by one; beyond that the plain carried-through ones are only counted. */
const SHOWN_COLUMNS = 60;

/** How the file's columns were read: every column read (or worth a word) on its own line, the plain carried-through ones together. */
function columnsView(q: Quote): Html {
  if (q.columns.length === 0) return html``;
  const worth = q.columns.filter((c) => c.note !== CARRIED);
  const carried = q.columns.filter((c) => c.note === CARRIED);
  const rows = worth.slice(0, SHOWN_COLUMNS).map((c) => html`<tr data-column="${c.column}"><td class="num">${c.position}</td><td>${c.column}</td><td>${c.read.length > 0 ? c.read.map((r) => r.field).join(', ') : '—'}</td><td>${c.note}</td></tr>`);
  const shownCarried = carried.slice(0, 30).map((c) => c.column);
  return html`<h3 id="columns">How the columns were read</h3>
${tableWrap('Columns', html`<table data-columns><thead><tr><th scope="col">#</th><th scope="col">Column</th><th scope="col">Read as</th><th scope="col">How</th></tr></thead><tbody>${rows}</tbody></table>`)}
${worth.length > SHOWN_COLUMNS ? html`<p class="muted">The first ${SHOWN_COLUMNS} of ${worth.length} are shown (all of them: <code>topup validate --json</code>).</p>` : ''}
${carried.length > 0 ? html`<p class="muted" data-carried>Carried through to the result as your own (${carried.length}): ${shownCarried.join(', ')}${carried.length > shownCarried.length ? `, and ${carried.length - shownCarried.length} more` : ''}.</p>` : ''}`;
}

/** What the total is made of, by game and pack. */
function packsView(q: Quote): Html {
  if (q.byPack.length === 0) return html``;
  const named = q.namedAccounts;
  const rows = q.byPack.map((p) => html`<tr data-pack="${p.pid}">${named ? html`<td>${p.account}</td>` : ''}<td>${p.game}</td><td>${p.pack}</td><td><code>${p.pid}</code></td><td class="num">${p.rows}</td><td class="num">${p.quantity}</td><td class="num">${usd(p.usd)}</td></tr>`);
  return html`<h3 id="by-pack">By game and pack</h3>
${tableWrap('By game and pack', html`<table data-by-pack><thead><tr>${named ? html`<th scope="col">Account</th>` : ''}<th scope="col">Game</th><th scope="col">Pack</th><th scope="col">pid</th><th scope="col">Rows</th><th scope="col">Quantity</th><th scope="col">USD</th></tr></thead><tbody>${rows}</tbody>
<tfoot><tr><th scope="row" colspan="${named ? 4 : 3}">Total</th><td class="num">${q.validRows}</td><td class="num">${q.byPack.reduce((n, p) => n + p.quantity, 0)}</td><td class="num">${usd(q.totalUsd)}</td></tr></tfoot></table>`)}`;
}

/** The plan per account (a home with accounts.toml): where the load would place the rows, and each account's balance after. */
function planView(q: Quote): Html {
  if (!q.namedAccounts) return html``;
  const cost = routingCostText(q.routingCost);
  const rows = q.byAccount.map((a) => html`<tr data-plan="${a.account}"><th scope="row">${a.account}</th><td class="num">${a.rows}</td><td class="num">${usd(a.usd)}</td><td class="num">${a.balanceUsd === null ? '?' : usd(a.balanceUsd)}</td><td class="num">${usd(a.reservedUsd)}</td><td class="num"><strong>${a.balanceAfterUsd === null ? '?' : usd(a.balanceAfterUsd)}</strong></td><td>${a.problem ?? (a.affordable ? '' : html`<span class="badge">not affordable</span>`)}</td></tr>`);
  return html`<h3 id="by-account">By account</h3>
${tableWrap('By account', html`<table data-by-account><thead><tr><th scope="col">Account</th><th scope="col">Rows</th><th scope="col">USD</th><th scope="col">Balance</th><th scope="col">Reserved</th><th scope="col">Balance after</th><th scope="col">Note</th></tr></thead><tbody>${rows}</tbody></table>`)}
${cost === undefined ? '' : html`<p data-routing-cost>${cost}</p>`}`;
}

function quoteView(ctx: PageCtx, svc: Services, u: Upload, q: Quote): Html {
  const blocked =
    q.fileProblems.length > 0 ? 'The file would be refused whole: nothing in it would be ordered. Fix it and upload it again.'
      : q.duplicateOf ? `This file is identical to batch ${q.duplicateOf}: submitting it would order nothing. To order the same rows again, change the file (or use topup submit --again).`
        : q.rows === 0 ? 'The file has no order rows, only its header: there is nothing to order.'
          : q.validRows === 0 ? 'No row of this file can be sent.' : null;
  // Repeats are summed up per earlier batch; the table lists the other problems row by row.
  const rowProblems = q.problems.filter((p) => p.repeatOf === undefined);
  const problems = rowProblems.slice(0, SHOWN_PROBLEMS).map((p) => html`<tr><td class="num">${p.line}</td><td>${p.column}</td><td>${p.problem}</td></tr>`);
  return html`<section aria-labelledby="quote"><h2 id="quote">Quote for ${u.name}</h2>
<dl class="facts">
  <div><dt>Rows</dt><dd>${q.rows} (${q.validRows} to send, ${q.invalidRows} with problems${q.repeatRows > 0 ? `, of which ${q.repeatRows} repeat earlier purchases` : ''})</dd></div>
  <div><dt>Total</dt><dd><strong data-quote-total>${usd(q.totalUsd)}</strong></dd></div>
  <div><dt>Balance${svc.rt.config.sandbox ? ' (sandbox)' : ''}</dt><dd>${usd(q.balanceUsd)}</dd></div>
  ${q.reservedUsd > 0 ? html`<div><dt>Reserved by unfinished batches</dt><dd>${usd(q.reservedUsd)}</dd></div>` : ''}
  <div><dt>Balance after</dt><dd><strong data-quote-after>${usd(q.balanceAfterUsd)}</strong></dd></div>
</dl>
${planView(q)}
${q.affordable ? '' : html`<p class="message" role="alert">Not affordable: top up ${q.namedAccounts ? q.byAccount.filter((a) => !a.affordable).map((a) => (a.balanceAfterUsd === null ? `${a.account} (balance unknown)` : `${a.account} by at least ${usd(-a.balanceAfterUsd)}`)).join(', ') || `at least ${usd(-q.balanceAfterUsd)}` : `at least ${usd(-q.balanceAfterUsd)}`}. Submitted anyway, the batch waits for the top-up and then starts by itself.</p>`}
${q.fileProblems.length > 0 ? html`<h3>File problems</h3><ul class="errors">${q.fileProblems.map((p) => html`<li>${p}</li>`)}</ul>` : ''}
${q.warnings.length > 0 ? html`<h3>Warnings</h3><ul class="alerts" data-warnings>${q.warnings.map((w) => html`<li class="message">${w}</li>`)}</ul>` : ''}
${q.hints.length > 0 ? html`<ul class="alerts" data-hints>${q.hints.map((h) => html`<li>Hint: ${h}</li>`)}</ul>` : ''}
${packsView(q)}
${playersView(q)}
${q.repeats.length > 0 ? html`<h3>Repeats of earlier purchases (${q.repeatRows})</h3><ul class="alerts" data-repeats>${q.repeats.map((g) => html`<li>${g.message}</li>`)}</ul>` : ''}
${rowProblems.length > 0 ? html`<h3>Row problems (${rowProblems.length})</h3>
<p class="muted">Rows with problems are not sent; every other row is. Each row gets one line in the result file.${rowProblems.length > SHOWN_PROBLEMS ? ` The first ${SHOWN_PROBLEMS} are shown.` : ''}</p>
${tableWrap('Row problems', html`<table><thead><tr><th scope="col">Line</th><th scope="col">Column</th><th scope="col">Problem</th></tr></thead><tbody>${problems}</tbody></table>`)}` : q.problems.length === 0 && q.rows > 0 ? html`<p class="ok">Every row is valid.</p>` : ''}
${columnsView(q)}
${blocked ? html`<p class="message" role="alert">${blocked}</p>`
  : ctx.readOnly ? ''
    : html`<form method="post" action="/upload/${u.id}/submit" class="submit-form">${csrfField(ctx)}
<p>Submit moves the file into the inbox; the daemon orders its ${q.validRows} valid rows (${usd(q.totalUsd)}).</p>
<button type="submit" class="primary">Submit ${q.validRows} rows for ${usd(q.totalUsd)}</button></form>`}
<p><a href="/upload">Upload another file</a></p>
</section>`;
}

export function registerUpload(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/upload', (c) => {
    const ctx = pageCtx(c, svc);
    return c.html(page(ctx, 'Upload', form(ctx, svc)));
  });

  app.post('/upload', async (c) => {
    const ctx = pageCtx(c, svc);
    const body = await c.req.parseBody();
    const file = body.file;
    if (!(file instanceof File) || file.size === 0) return c.html(page(ctx, 'Upload', form(ctx, svc, 'Choose a file first (it was missing or empty).')), 400);
    let u: Upload;
    try {
      u = await svc.uploads.keep(file.name, new Uint8Array(await file.arrayBuffer()));
    } catch (err) {
      record(c, svc, 'upload', 'refused', { detail: `${file.name.slice(0, 200)}: ${coerceError(err).message}` });
      return c.html(page(ctx, 'Upload', form(ctx, svc, coerceError(err).message)), 400);
    }
    try {
      u.quote = await quoteFile(svc.rt, u.path, false);
    } catch (err) {
      const e = coerceError(err);
      u.error = e instanceof InputFileError ? `The file cannot be read: ${e.message}` : `The file could not be checked: ${e.message}`;
    }
    record(c, svc, 'upload', u.error ? 'failed' : 'ok', { detail: `${u.name} (${u.size} bytes)${u.quote ? `: ${u.quote.validRows}/${u.quote.rows} rows valid, ${u.quote.totalUsd} USD` : `: ${u.error}`}` });
    return c.redirect(`/upload/${u.id}`, 303);
  });

  app.get('/upload/:id', (c) => {
    const ctx = pageCtx(c, svc);
    const u = svc.uploads.get(c.req.param('id'));
    if (!u) return c.html(messagePage(ctx, 'Upload', 'This upload is no longer kept (uploads are kept for an hour, or the daemon restarted): upload the file again.', '/upload'), 404);
    if (u.submitted) {
      const batch = svc.listing.batchFromFile(u.hash, u.submitted.at - 1_000);
      if (batch) return c.redirect(`/batches/${encodeURIComponent(batch.id)}`, 303);
      const late = systemClock.now() - u.submitted.at > CLAIM_PATIENCE_MS;
      c.header('refresh', late ? '5' : '1');
      return c.html(page(ctx, 'Submitted', html`<p role="status">${u.submitted.name} is in the inbox; waiting for the daemon to take it…</p>
${late ? html`<p class="message">It has not been taken for a minute. Is the daemon stopping, or paused? See the <a href="/">overview</a>.</p>` : ''}`));
    }
    if (!u.quote) return c.html(page(ctx, 'Upload', html`<p class="message" role="alert">${u.error ?? 'The file could not be checked.'}</p>${form(ctx, svc)}`));
    return c.html(page(ctx, 'Check', quoteView(ctx, svc, u, u.quote)));
  });

  app.post('/upload/:id/submit', (c) => {
    const u = svc.uploads.get(c.req.param('id'));
    if (!u || !u.quote) {
      record(c, svc, 'submit', 'refused', { detail: 'upload no longer kept' });
      return c.html(messagePage(pageCtx(c, svc), 'Submit', 'This upload is no longer kept: upload the file again.', '/upload'), 404);
    }
    const q = u.quote;
    if (q.fileProblems.length > 0 || q.duplicateOf || q.rows === 0 || q.validRows === 0) {
      record(c, svc, 'submit', 'refused', { detail: `${u.name}: nothing in it can be ordered` });
      return c.html(messagePage(pageCtx(c, svc), 'Submit', 'Nothing in this file can be ordered (see its check).', `/upload/${u.id}`), 400);
    }
    const already = u.submitted !== null;
    svc.uploads.submit(u.id);
    if (!already) {
      svc.runner.offerFile(u.submitted!.path);
      record(c, svc, 'submit', 'ok', { detail: `${u.submitted!.name} into the inbox: ${q.validRows} rows, ${q.totalUsd} USD` });
    }
    return c.redirect(`/upload/${u.id}`, 303);
  });
}

/**
 * The player checks (docs/player-checks.md): how many the file needs and what they may cost
 * before any is made (the console does not make them: the daemon does, before it sends anything
 * of the file, or `topup validate --check-players`), each row's name where an answer is kept, and
 * the lines whose player the supplier says does not exist.
 */
function playersView(q: Quote): ReturnType<typeof html> | string {
  const c = q.playerChecks;
  if (!c) return '';
  const shown = c.rows.filter((r) => r.playerName !== undefined).slice(0, SHOWN_PROBLEMS);
  return html`<h3>Player checks</h3>
<p data-player-checks>${c.needed} player${c.needed === 1 ? '' : 's'} to check before sending (${c.cached} answered before${c.spared > 0 ? `, ${c.spared} rows spared: completed recently` : ''}${c.overridden > 0 ? `, ${c.overridden} rows marked sendWithoutCheck` : ''}): may cost up to ${usd(c.maxCostUsd)}. The daemon makes them before it sends anything of this file.</p>
${c.notFoundLines.length > 0 ? html`<p class="message" role="alert" data-player-not-found>Player not found on line${c.notFoundLines.length === 1 ? '' : 's'} ${c.notFoundLines.join(', ')}: ${c.notFoundLines.length === 1 ? 'that row is' : 'those rows are'} not sent. Fix the ids, or put yes in a column sendWithoutCheck to buy anyway.</p>` : ''}
${shown.length > 0 ? tableWrap('Player names', html`<table><thead><tr><th scope="col">Line</th><th scope="col">Player</th></tr></thead><tbody>${shown.map((r) => html`<tr><td class="num">${r.line}</td><td>${r.playerName === null ? 'NOT FOUND' : r.playerName || '(found, no name given)'}</td></tr>`)}</tbody></table>`) : ''}`;
}
