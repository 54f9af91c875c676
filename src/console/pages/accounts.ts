/**
 * Accounts: every supplier account of the home with its state (sending, on trial, or paused, and
 * whose pause: the operator's, or the supplier's maintenance or account problem) and rows waiting,
 * and the operator's Pause sending / Resume sending for each. Each is a page that says exactly what
 * will happen, then a POST (the console's form token, auth.ts csrfGuard) through the same operation
 * the CLI runs (ops/account-pause.ts pauseAccount/resumeAccount: one definition of "pause an
 * account", audited alike, the actor being the console's operator).
 *
 * A supplier's pause is not the operator's to end: Resume ends only an operator pause (a
 * maintenance or account problem ends by itself when the supplier answers again: the read probe,
 * account/pauses.ts), as `topup account resume` does. Pausing over a supplier's pause is allowed:
 * the operator's pause takes its place and holds until resumed.
 */
import type { Hono } from 'hono';
import { pauseView, type PauseState, type PauseView } from '../../account/pauses.js';
import { accountNamed, pauseAccount, resumeAccount, waitingRowsFate } from '../../ops/account-pause.js';
import { accountQueues } from '../../ops/account-views.js';
import { coerceError } from '../../kernel/errors.js';
import type { ConsoleEnv } from '../auth.js';
import { duration, html, query, timeTag, type Html } from '../html.js';
import { csrfField, messagePage, page, tableWrap, type PageCtx } from '../layout.js';
import { actorOf, pageCtx, type Ctx, type Services } from '../services.js';

const accountPath = (account: string, what: 'pause' | 'resume'): string => `/accounts/${encodeURIComponent(account)}/${what}`;

/** Whose pause this is, in words, for the Accounts page and the confirm steps. */
export function pauseWhose(p: PauseState): string {
  return p.kind === 'operator' ? 'paused by the operator' : p.kind === 'account' ? `paused by the supplier: account problem ${p.code}` : `paused by the supplier: maintenance ${p.code}`;
}

/**
 * The control an account's row offers: Pause sending… (no pause, a trial, or a supplier's pause:
 * the operator may still hold it) or Resume sending… (the operator's pause). Each leads to its
 * confirm step; read-only consoles show none.
 */
export function pauseControl(ctx: PageCtx, account: string, pause: PauseState | null): Html {
  if (ctx.readOnly) return html`<span class="muted">read-only console</span>`;
  return pause?.kind === 'operator'
    ? html`<a class="button nowrap" href="${accountPath(account, 'resume')}" data-control="resume">Resume sending…</a>`
    : html`<a class="button danger nowrap" href="${accountPath(account, 'pause')}" data-control="pause">Pause sending…</a>`;
}

/** The state cell: sending, on trial, or paused and by whom, since when, why, and what ends it. */
function stateCell(v: PauseView, now: number): Html {
  const p = v.pause;
  if (p?.kind === 'operator') {
    return html`<span class="badge" data-kind="operator">Paused by the operator</span> since ${timeTag(p.since, now)}${p.detail ? html` <span data-note>(${p.detail})</span>` : ''}<br><span class="muted">No order is sent to it until you resume. Rows already sent are still followed to their end.</span>`;
  }
  if (p) {
    const what = p.kind === 'account' ? 'account problem' : 'maintenance';
    const next = v.nextProbeInMs === null ? '' : `; next read probe in ${duration(v.nextProbeInMs)}`;
    return html`<span class="badge" data-kind="${p.kind}">Paused by the supplier: ${what}</span> <strong>${p.code}</strong> since ${timeTag(p.since, now)}${p.detail && p.detail !== p.code ? html` <span class="muted">(${p.detail})</span>` : ''}<br><span class="muted">Ends by itself when the supplier answers again${next}. Resume sending does not end it; Pause sending holds the account even after that.</span>`;
  }
  if (v.trial) return html`<span class="badge" data-kind="trial">On trial</span> sending again since ${timeTag(v.trial.liftedAt, now)} after ${v.trial.code}: the next order tells`;
  return html`<span class="ok" data-kind="sending">sending</span>`;
}

/** What the page says after a pause or resume (the redirect's `did`), from the account's state now. */
function didNotice(did: string | undefined, account: string, svc: Services, waiting: number): Html {
  const several = svc.rt.accounts.length > 1;
  const p = pauseView(svc.rt.meta, account).pause;
  let text: string;
  switch (did) {
    case 'paused':
      text = `Account "${account}" is paused: no order is sent to it until you resume. Rows already sent there are still followed to their end. ${waitingRowsFate(waiting, several)}.`;
      break;
    case 'already-paused':
      text = `Account "${account}" was already paused by the operator: nothing changed. No order is sent to it until you resume.`;
      break;
    case 'resumed':
      text = `Account "${account}" is resumed: its waiting rows are sent within seconds, and routing places rows on it again.`;
      break;
    case 'supplier':
      text = `Account "${account}" was not paused by the operator; it is ${p ? pauseWhose(p) : 'no longer paused'}${p ? ', which ends by itself when the supplier answers again' : ''}. Nothing changed.`;
      break;
    case 'not-paused':
      text = `Account "${account}" was not paused; nothing changed.`;
      break;
    default:
      return html``;
  }
  return html`<p class="notice" role="status" data-did="${did}">${text}</p>`;
}

function accountsPage(c: Ctx, svc: Services): string {
  const ctx = pageCtx(c, svc);
  const now = ctx.now;
  const names = svc.rt.accounts.map((a) => a.id);
  const queues = new Map(accountQueues(svc.rt, names).map((q) => [q.account, q.rowsWaiting]));
  const urls = new Map(svc.rt.config.accounts.accounts.map((a) => [a.name, a.url ?? 'built-in sandbox']));
  const rows = names.map((name) => {
    const v = pauseView(svc.rt.meta, name);
    return html`<tr data-account="${name}" id="account-${name}"><th scope="row">${name}<br><span class="muted mono">${urls.get(name) ?? ''}</span></th><td data-pause>${stateCell(v, now)}</td><td class="num" data-f="waiting">${queues.get(name) ?? 0}</td><td>${pauseControl(ctx, name, v.pause)}</td></tr>`;
  });
  const did = c.req.query('did');
  const which = c.req.query('account');
  const named = which ? names.find((n) => n === which) : undefined;
  const body = html`${named ? didNotice(did, named, svc, queues.get(named) ?? 0) : ''}
<p>Pause sending on an account to stop every order to it (a supplier's problem you know of, a key about to change, a balance to move): its waiting rows go to another account that sells their pack, or wait; rows already sent are still followed to their end. The pause is stored, so every process on this home obeys it and a restart keeps it, and only Resume sending (or <code>topup account resume NAME</code>) ends it. A supplier's own pause (maintenance, an account problem) ends by itself when the supplier answers again; Resume sending does not end it.</p>
${tableWrap('Accounts', html`<table><caption>Supplier accounts and their state</caption><thead><tr><th scope="col">Account</th><th scope="col">Sending</th><th scope="col">Rows waiting</th><th scope="col">Action</th></tr></thead><tbody>${rows}</tbody></table>`)}
<p class="muted">From the command line: <code>topup account pause NAME --note "why"</code>, <code>topup account resume NAME</code>, <code>topup accounts</code>.</p>`;
  return page(ctx, 'Accounts', body);
}

/** The account a path names, or a 404 page. */
function named(c: Ctx, svc: Services): { account: string } | { page: Response } {
  try {
    return { account: accountNamed(svc.rt.accounts.map((a) => a.id), c.req.param('name') ?? '') };
  } catch (err) {
    return { page: c.html(messagePage(pageCtx(c, svc), 'Not found', coerceError(err).message, '/accounts'), 404) };
  }
}

const back = (account: string, did: string): string => `/accounts${query({ did, account })}#account-${encodeURIComponent(account)}`;

export function registerAccounts(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/accounts', (c) => c.html(accountsPage(c, svc)));

  app.get('/accounts/:name/pause', (c) => {
    const n = named(c, svc);
    if ('page' in n) return n.page;
    const { account } = n;
    const ctx = pageCtx(c, svc);
    const p = pauseView(svc.rt.meta, account).pause;
    if (p?.kind === 'operator') {
      const body = html`<p class="notice" role="status" data-already>Account <strong>${account}</strong> is already paused by the operator, since ${timeTag(p.since, ctx.now)}${p.detail ? ` (${p.detail})` : ''}: nothing to do. No order is sent to it until you resume.</p>
<p>${ctx.readOnly ? '' : html`<a class="button" href="${accountPath(account, 'resume')}">Resume sending…</a> `}<a href="/accounts">Back to the accounts</a></p>`;
      return c.html(page(ctx, `Pause sending on ${account}`, body));
    }
    const waiting = accountQueues(svc.rt, [account])[0]?.rowsWaiting ?? 0;
    const several = svc.rt.accounts.length > 1;
    const body = html`<p>Pause sending on account <strong>${account}</strong>?</p>
<ul class="consequences" data-consequences>
  <li><strong>No order is sent to account ${account} until you resume</strong> (here, or <code>topup account resume ${account}</code>).</li>
  <li>${waitingRowsFate(waiting, several)}.</li>
  <li>Rows already sent there are still followed to their end: nothing in flight is abandoned.</li>
  <li>Stored: every process on this home obeys it at once, and a restart keeps it. Recorded in the audit log as ${ctx.actor}.</li>
  ${p ? html`<li data-supplier-pause>It is ${pauseWhose(p)} now (since ${timeTag(p.since, ctx.now)}): your pause takes its place, and holds even once the supplier answers again, until you resume.</li>` : ''}
</ul>
${ctx.readOnly ? html`<p>Read-only console: pausing is switched off.</p>` : html`<form method="post" action="${accountPath(account, 'pause')}" class="pause">${csrfField(ctx)}
<label for="note">Note <span class="muted">(optional: why; shown beside the pause and in the audit log)</span></label>
<input id="note" name="note" maxlength="200" autocomplete="off">
<div class="actions"><button type="submit" class="danger">Pause sending on ${account}</button> <a href="/accounts">Keep sending</a></div>
</form>`}`;
    return c.html(page(ctx, `Pause sending on ${account}`, body));
  });

  app.post('/accounts/:name/pause', async (c) => {
    const n = named(c, svc);
    if ('page' in n) return n.page;
    const form = await c.req.parseBody();
    const out = pauseAccount(svc.rt, n.account, typeof form.note === 'string' ? form.note : undefined, { actor: actorOf(c, svc), address: c.get('address'), probeMs: svc.rt.config.pollIntervalMs });
    // Routing moves the account's waiting rows to another account at its next step: now.
    svc.runner.wake();
    return c.redirect(back(n.account, out.changed ? 'paused' : 'already-paused'), 303);
  });

  app.get('/accounts/:name/resume', (c) => {
    const n = named(c, svc);
    if ('page' in n) return n.page;
    const { account } = n;
    const ctx = pageCtx(c, svc);
    const v = pauseView(svc.rt.meta, account);
    const p = v.pause;
    if (p?.kind !== 'operator') {
      const why = p
        ? html`Account <strong>${account}</strong> is not paused by the operator: it is <strong>${pauseWhose(p)}</strong>, since ${timeTag(p.since, ctx.now)}. That pause is not yours to end: it ends by itself when the supplier answers again${v.nextProbeInMs === null ? '' : ` (next read probe in ${duration(v.nextProbeInMs)})`}.`
        : html`Account <strong>${account}</strong> is not paused: nothing to resume.`;
      return c.html(page(ctx, `Resume sending on ${account}`, html`<p class="notice" role="status" data-not-operator>${why}</p><p><a href="/accounts">Back to the accounts</a></p>`));
    }
    const waiting = accountQueues(svc.rt, [account])[0]?.rowsWaiting ?? 0;
    const body = html`<p>Resume sending on account <strong>${account}</strong>? It is paused by the operator since ${timeTag(p.since, ctx.now)}${p.detail ? ` (${p.detail})` : ''}.</p>
<ul class="consequences" data-consequences>
  <li><strong>${waiting}</strong> ${waiting === 1 ? 'row waiting on it is' : 'rows waiting on it are'} sent within seconds, and routing places rows on it again.</li>
  <li>If the supplier is in maintenance or refuses the account meanwhile, the next order meets it and the account pauses by itself again (the supplier's pause, which ends by itself).</li>
  <li>Recorded in the audit log as ${ctx.actor}.</li>
</ul>
${ctx.readOnly ? html`<p>Read-only console: resuming is switched off.</p>` : html`<form method="post" action="${accountPath(account, 'resume')}" class="inline">${csrfField(ctx)}<input type="hidden" name="since" value="${String(p.since)}">
<button type="submit" class="primary">Resume sending on ${account}</button> <a href="/accounts">Keep it paused</a></form>`}`;
    return c.html(page(ctx, `Resume sending on ${account}`, body));
  });

  app.post('/accounts/:name/resume', async (c) => {
    const n = named(c, svc);
    if ('page' in n) return n.page;
    // The pause the confirm page showed (its start): a page left open in one tab must not end a
    // newer pause made in another. A form without it (not this console's) ends nothing either.
    const form = await c.req.parseBody();
    const shown = typeof form.since === 'string' && /^\d+$/.test(form.since) ? Number(form.since) : null;
    const out = resumeAccount(svc.rt, n.account, { actor: actorOf(c, svc), address: c.get('address'), probeMs: svc.rt.config.pollIntervalMs }, shown);
    if (out.changed) {
      const ctx = pageCtx(c, svc);
      const p = out.changed;
      const body = html`<p class="message" role="alert" data-pause-changed>Nothing was resumed: the pause changed since this page was opened. Account <strong>${n.account}</strong> is paused by the operator since ${timeTag(p.since, ctx.now)}${p.detail ? ` (${p.detail})` : ''}, a pause this page did not show.</p>
<p><a class="button" href="${accountPath(n.account, 'resume')}">Resume sending…</a> <a href="/accounts">Back to the accounts</a></p>`;
      return c.html(page(ctx, `Resume sending on ${n.account}`, body), 409);
    }
    // The waiting rows go at once, not at the runner's next look.
    if (out.ended) svc.runner.wake();
    return c.redirect(back(n.account, out.ended ? 'resumed' : out.supplier ? 'supplier' : 'not-paused'), 303);
  });
}
