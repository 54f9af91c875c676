/**
 * The page around every page: head (our own stylesheet and script only, no inline code, so the
 * Content-Security-Policy can forbid everything else), the navigation, the banners that matter
 * everywhere (SANDBOX, orders paused, read-only), and who is acting.
 */
import type { PauseState } from '../account/pauses.js';

export interface AccountPause {
  account: string;
  pause: PauseState;
}
import { storeDownAdvice, storeDownSentence, type StoreDown } from '../dispatch/store-health.js';
import { html, usd, type Html } from './html.js';

export interface PageCtx {
  path: string;
  sandbox: boolean;
  /** The built-in sandbox's balance (null: not the built-in sandbox, or not readable). */
  sandboxBalanceUsd: number | null;
  readOnly: boolean;
  tokenRequired: boolean;
  actor: string;
  csrf: string;
  reviewRows: number;
  /** Every account's pause in force, in the order of the accounts (one banner line each). */
  pauses: readonly AccountPause[];
  /** This daemon cannot write its store (dispatch/store-health.ts): sending is stopped. */
  storeDown?: StoreDown | null;
  now: number;
}

const NAV: { href: string; label: string }[] = [
  { href: '/', label: 'Overview' },
  { href: '/upload', label: 'Upload' },
  { href: '/batches', label: 'Batches' },
  { href: '/accounts', label: 'Accounts' },
  { href: '/review', label: 'Review' },
  { href: '/reports', label: 'Reports' },
  { href: '/webhooks', label: 'Webhooks' },
  { href: '/audit', label: 'Audit' },
];

function current(path: string, href: string): boolean {
  return href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`);
}

/** The hidden form token every POST form carries. */
export function csrfField(ctx: PageCtx): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf}">`;
}

/** A POST form that is only a button, disabled (with the reason) in read-only mode. */
export function actionButton(ctx: PageCtx, action: string, label: string, opts: { danger?: boolean; fields?: Record<string, string> } = {}): Html {
  if (ctx.readOnly) return html`<button type="button" disabled title="read-only console (TOPUP_CONSOLE_READ_ONLY=1)">${label}</button>`;
  const fields = Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="post" action="${action}" class="inline">${csrfField(ctx)}${fields}<button type="submit" class="${opts.danger ? 'danger' : ''}">${label}</button></form>`;
}

/** Every page follows the live feed (the Review count in the menu, and the figures a page shows). */
export function page(ctx: PageCtx, title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · topup console</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/console.css">
<script src="/assets/console.js" defer></script>
</head>
<body data-live="1">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <div class="bar">
    <a class="brand" href="/">topup console</a>
    ${ctx.sandbox
      ? html`<span class="mode sandbox"${ctx.sandboxBalanceUsd === null ? '' : html` title="Top it up: npx topup sandbox balance --add 500 (or --set 5000), while the daemon runs"`}>SANDBOX: no real money${ctx.sandboxBalanceUsd === null ? '' : html` · <span data-sandbox-balance>${usd(ctx.sandboxBalanceUsd)}</span>`}</span>`
      : html`<span class="mode live">LIVE</span>`}
  </div>
  <nav aria-label="Main">
    <ul>
      ${NAV.map((n) => html`<li><a href="${n.href}"${current(ctx.path, n.href) ? html` aria-current="page"` : ''}>${n.label}${n.href === '/review' ? html` <span class="count" data-review-count>${ctx.reviewRows}</span>` : ''}</a></li>`)}
    </ul>
  </nav>
</header>
${pauseBanner(ctx)}
${ctx.storeDown ? html`<p class="banner warn" role="alert">Sending stopped: ${storeDownSentence(ctx.storeDown.code)} (${ctx.storeDown.code}, since ${new Date(ctx.storeDown.since).toISOString().replace('T', ' ').slice(0, 19)} UTC). ${storeDownAdvice(ctx.storeDown.code)}</p>` : ''}
${ctx.readOnly ? html`<p class="banner info">Read-only console: nothing can be changed here (TOPUP_CONSOLE_READ_ONLY=1).</p>` : ''}
<main id="main">
<h1>${title}</h1>
${body}
</main>
<footer>
  <span>Acting as <strong>${ctx.actor}</strong></span>
  <a href="/login">${ctx.tokenRequired ? 'Session' : 'Set your name'}</a>
  ${ctx.tokenRequired && !ctx.readOnly ? html`<form method="post" action="/logout" class="inline">${csrfField(ctx)}<button type="submit" class="link">Log out</button></form>` : ''}
  <a href="/metrics">Metrics</a>
</footer>
</body>
</html>`.text;
}

/**
 * The pause banner names the account each pause is on: with several supplier accounts a banner
 * that said only "Orders paused by the API (MAINTENANCE)" left the operator unable to tell which
 * supplier had stopped (a new-user trial). One line per paused account, in the accounts' order.
 */
function pauseSentence(a: AccountPause): Html {
  const p = a.pause;
  const since = new Date(p.since).toISOString().replace('T', ' ').slice(0, 19);
  const detail = p.detail && p.detail !== p.code ? ` (${p.detail})` : '';
  if (p.kind === 'operator') return html`Sending paused by the operator on account <strong data-paused-account>${a.account}</strong> since ${since} UTC${detail}. Rows already sent are still followed; <a href="/accounts/${a.account}/resume">Resume sending</a> (or <code>topup account resume ${a.account}</code>) sends again.`;
  return p.kind === 'account'
    ? html`Sending stopped on account <strong data-paused-account>${a.account}</strong>: account problem ${p.code}${detail}, since ${since} UTC. Retried by itself; check that account's key.`
    : html`Orders paused by the API on account <strong data-paused-account>${a.account}</strong>: ${p.code}${detail}, since ${since} UTC. Retried by itself.`;
}

function pauseBanner(ctx: PageCtx): Html {
  const list = ctx.pauses;
  if (list.length === 0) return html``;
  const more = html` <a href="/accounts">Accounts</a>`;
  if (list.length === 1) return html`<p class="banner warn" role="status" data-pause-banner>${pauseSentence(list[0]!)}${more}</p>`;
  return html`<div class="banner warn" role="status" data-pause-banner><p>${list.length} accounts paused:${more}</p><ul>${list.map((a) => html`<li>${pauseSentence(a)}</li>`)}</ul></div>`;
}

/** A short page for an error or a refusal, with the way back. */
export function messagePage(ctx: PageCtx, title: string, message: string, back = '/'): string {
  return page(ctx, title, html`<p class="message" role="alert">${message}</p><p><a href="${back}">Back</a></p>`);
}

/** A page of a table too wide for a phone scrolls sideways inside this, not the whole page. */
export function tableWrap(label: string, table: Html): Html {
  return html`<div class="table" role="region" aria-label="${label} (table)" tabindex="0">${table}</div>`;
}
