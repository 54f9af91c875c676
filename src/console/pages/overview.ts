/**
 * Overview: money per supplier account (balance and when it was read, reserved, runway), each
 * account's pause and probe, what holds sending back (pauses, Retry-After), the rate budget in use, active and waiting batches and why they wait,
 * the scheduled jobs, recent errors, and the rows waiting for review. Store reads only, plus the
 * runner's snapshot (in-process figures: calls in flight, files queued).
 */
import { accountPauses } from '../figures.js';
import type { Hono } from 'hono';
import { JOB_NAMES, lastRunKey, scheduleKey, type JobName } from '../../reports/schedule.js';
import { roundCents } from '../../kernel/money.js';
import { PlayerCheckStore } from '../../store/player-checks.js';
import { systemClock } from '../../kernel/clock.js';
import { pauseView, type PauseKind } from '../../account/pauses.js';
import { accountQueues, callsWithinByAccount, namedAccounts } from '../../ops/account-views.js';
import { lastBackup, lastBackupAttempt } from '../../ops/backup-job.js';
import type { ConsoleEnv } from '../auth.js';
import { ago, duration, html, timeTag, usd, when, type Html } from '../html.js';
import { page, tableWrap, type PageCtx } from '../layout.js';
import { pauseControl } from './accounts.js';
import { pageCtx, type Services } from '../services.js';
import { DAYS, picturesHtmlFor, spendByOf } from '../pictures.js';
import { RUNWAY_DAYS, runwayShort, runwayText, usdPerDay } from '../../reports/runway.js';

export interface JobView {
  name: JobName;
  cron: string | null;
  lastRun: { at: number; ok: boolean; error?: string } | null;
  nextDue: number | null;
}

export function jobViews(svc: Services): JobView[] {
  const s = svc.rt.config.schedules;
  const cron: Record<JobName, string | null> = {
    'balance-report': s.balanceReport.cron,
    'history-export': s.historyExport.cron,
    reconcile: s.reconcile.cron,
    'low-balance': svc.rt.config.lowBalanceUsd === null ? null : s.lowBalance.cron,
  };
  return JOB_NAMES.map((name) => {
    const sched = svc.rt.meta.getJson<{ pattern: string; nextDue: number }>(scheduleKey(name));
    return {
      name,
      cron: cron[name],
      lastRun: svc.rt.meta.getJson<{ at: number; ok: boolean; error?: string }>(lastRunKey(name)) ?? null,
      nextDue: cron[name] && sched && sched.pattern === cron[name] ? sched.nextDue : null,
    };
  });
}

/** What one account's money looks like: its balance (and when it was read), reserved, available, runway. */
interface AccountMoney {
  account: string;
  reading: { usd: number; at: number } | null;
  error: string | null;
  reserved: number;
  /** USD of its rows in batches waiting for balance: not reserved (nothing is set aside for them). */
  waitingForBalance: number;
  available: number | null;
  runway: string;
  /** The runway alone, for the table (its caption states the pace). */
  runwayShort: string;
}

function moneyOf(svc: Services, now: number): AccountMoney[] {
  const plain = !namedAccounts(svc.rt.config);
  // A home without accounts.toml: every row is on `default` (the home's figure); else each account's own.
  const queues = plain ? null : new Map(accountQueues(svc.rt, svc.rt.accounts.map((a) => a.id)).map((q) => [q.account, q]));
  return svc.balance.all().map((b) => {
    // Unsent rows of unfinished batches that hold money: already promised. Those waiting for
    // balance hold none (account/funds.ts): their own figure, not taken from what is available.
    const reserved = queues ? (queues.get(b.account)?.reservedUsd ?? 0) : svc.rt.rows.reservedUsd();
    const waitingForBalance = queues ? (queues.get(b.account)?.waitingForBalanceUsd ?? 0) : svc.rt.rows.waitingForBalanceUsd();
    const available = b.reading ? roundCents(b.reading.usd - reserved) : null;
    // The one runway (reports/runway.ts), of the balance left for new files.
    const perDay = usdPerDay(svc.rt.db, now, plain ? undefined : b.account);
    const runway = available === null ? 'unknown until the balance is read' : runwayText(available, perDay);
    const short = available === null ? 'unknown until read' : runwayShort(available, perDay);
    return { account: b.account, reading: b.reading, error: b.error, reserved, waitingForBalance, available, runway, runwayShort: short };
  });
}

/**
 * Reserved, and under it (its own figure, never added in) what batches waiting for balance would
 * spend: a column of its own did not fit the table at 1400 px (test/console/money-browser.test.ts).
 * The live feed fills both (assets.ts).
 */
function reservedCell(reserved: number, waiting: number): Html {
  return html`<span data-f="reserved">${usd(reserved)}</span><span class="muted note" data-f="waiting-balance">${waitingText(waiting)}</span>`;
}

/** The words under Reserved; empty when nothing waits (the live feed writes the same: assets.ts). */
function waitingText(usdWaiting: number): string {
  return usdWaiting > 0 ? `waiting for balance: ${usd(usdWaiting)}` : '';
}

function balanceCell(m: AccountMoney, now: number): Html {
  return m.reading ? html`<strong data-f="balance-usd">${usd(m.reading.usd)}</strong> <span class="muted note">read <time datetime="${new Date(m.reading.at).toISOString()}" title="${when(m.reading.at)}">${ago(m.reading.at, now)}</time></span>` : html`<span class="muted">not read yet${m.error ? ` (${m.error})` : ''}</span>`;
}

/**
 * (The words that say what each column means stand above the table, not in its caption: a caption
 * is as wide as its table, and at 390 px it was cut at the right edge of the box that scrolls
 * sideways; trial s34, test/console/money-phone-live.test.ts.)
 *
 * Money: each account's balance pays for its own rows, so each account has its own balance,
 * reserved, available and runway (one figure each, read once: the Accounts table below does not
 * repeat them). A home without accounts.toml shows its one account as before.
 */
function money(svc: Services, now: number): Html {
  void svc.balance.refreshIfOld();
  const list = moneyOf(svc, now);
  const sandbox = svc.rt.config.sandbox ? ' (sandbox)' : '';
  if (!namedAccounts(svc.rt.config)) {
    const m = list[0]!;
    return html`<section aria-labelledby="money"><h2 id="money">Money</h2>
<dl class="facts" data-money-account="${m.account}">
  <div><dt>Balance${sandbox}</dt><dd>${m.reading ? html`<strong data-f="balance-usd">${usd(m.reading.usd)}</strong> read ${timeTag(m.reading.at, now)}` : html`not read yet${m.error ? ` (${m.error})` : ''}`}</dd></div>
  <div><dt>Reserved</dt><dd><span data-f="reserved">${usd(m.reserved)}</span> <span class="muted">(unsent rows of unfinished batches the balance covers)</span></dd></div>
  <div><dt>Waiting for balance</dt><dd>${usd(m.waitingForBalance)} <span class="muted">(unsent rows of batches the balance does not cover: nothing is set aside for them until a top-up)</span></dd></div>
  <div><dt>Available for new files</dt><dd data-f="available">${m.available === null ? '—' : usd(m.available)}</dd></div>
  <div><dt>Runway</dt><dd>${m.runway}</dd></div>
</dl>${checksMoney(svc, now)}</section>`;
  }
  const rows = list.map((m) => html`<tr data-money-account="${m.account}"><th scope="row">${m.account}</th><td class="num" data-f="balance">${balanceCell(m, now)}</td><td class="num">${reservedCell(m.reserved, m.waitingForBalance)}</td><td class="num" data-f="available">${m.available === null ? '—' : usd(m.available)}</td><td data-f="runway">${m.runwayShort}</td></tr>`);
  // The total only when every account has been read: a sum with a gap would pass for the whole.
  const all = list.every((m) => m.reading !== null);
  const total = html`<tr data-money-total><th scope="row">All accounts</th><td class="num" data-f="balance">${all ? html`<strong data-f="balance-usd">${usd(roundCents(list.reduce((n, m) => n + m.reading!.usd, 0)))}</strong>` : html`<span class="muted">— (not every account read yet)</span>`}</td><td class="num">${reservedCell(roundCents(list.reduce((n, m) => n + m.reserved, 0)), roundCents(list.reduce((n, m) => n + m.waitingForBalance, 0)))}</td><td class="num" data-f="available">${all ? usd(roundCents(list.reduce((n, m) => n + m.available!, 0))) : '—'}</td><td class="muted">each account pays for its own rows</td></tr>`;
  return html`<section aria-labelledby="money"><h2 id="money">Money</h2>
<p class="muted" id="money-how" data-money-how>Reserved: unsent rows of unfinished batches the balance covers (rows of batches waiting for balance are shown under it, not in it: nothing is set aside for them); available: what is left for new files; runway: how long that lasts at the account's last ${RUNWAY_DAYS} days' pace.</p>
${tableWrap('Money by account', html`<table aria-describedby="money-how"><caption>Balance${sandbox} per supplier account</caption><thead><tr><th scope="col">Account</th><th scope="col">Balance</th><th scope="col">Reserved</th><th scope="col">Available</th><th scope="col">Runway</th></tr></thead><tbody>${rows}</tbody><tfoot>${total}</tfoot></table>`)}
${checksMoney(svc, now)}</section>`;
}

/**
 * The player checks of the last day and what they may have cost (docs/player-checks.md): those
 * the supplier ran and those whose answer never said (a lost answer, a process killed before it
 * recorded one) are counted, the second kind named apart; a 429 or a refusal costs nothing.
 */
function checksMoney(svc: Services, now: number): Html | '' {
  const c = new PlayerCheckStore(svc.rt.db).callsSince(now - 24 * 3_600_000);
  if (c.calls === 0) return '';
  return html`<p data-player-checks-money>Player checks, last 24 h: ${c.calls} sent, may have cost <strong>${usd(c.costUsd)}</strong> at your price${c.inDoubt > 0 ? html` <span data-in-doubt>(${c.inDoubt} in doubt: no answer said whether the supplier ran ${c.inDoubt === 1 ? 'it' : 'them'}, possibly charged ${usd(c.inDoubtUsd)})</span>` : ''}; the supplier's charge is in its balance.</p>`;
}

/**
 * Each supplier account (a home with accounts.toml): whether it is sending, and if paused why,
 * since when, and when its read probe last ran and what it showed (account/pauses.ts); its calls in
 * the last minute and rows waiting. Its money is in the Money section above.
 */
function accounts(svc: Services, ctx: PageCtx, now: number): Html {
  const calls = callsWithinByAccount(svc.rt.db, systemClock.mono());
  const waiting = new Map(accountQueues(svc.rt, svc.rt.accounts.map((a) => a.id)).map((q) => [q.account, q.rowsWaiting]));
  const lines = svc.rt.accounts.map((a) => {
    const v = pauseView(svc.rt.meta, a.id);
    const p = v.pause;
    const probe = v.lastProbe ? html`<br><span class="muted" data-probe>last probed ${timeTag(v.lastProbe.at, now)}: ${v.lastProbe.ok ? '' : 'failed: '}${v.lastProbe.outcome}</span>` : p ? html`<br><span class="muted" data-probe>not probed yet</span>` : '';
    const next = p && v.nextProbeInMs !== null ? html`<br><span class="muted">next probe in ${duration(v.nextProbeInMs)}</span>` : '';
    const state = p
      ? html`<span class="badge">${pauseBadge(p.kind)}</span> <strong>${p.code}</strong> since ${timeTag(p.since, now)}${p.detail && p.detail !== p.code ? html` <span class="muted">(${p.detail})</span>` : ''}`
      : v.trial ? html`<span class="badge">On trial</span> sending again since ${timeTag(v.trial.liftedAt, now)} after ${v.trial.code}: the next order tells` : html`<span class="ok">sending</span>`;
    return html`<tr data-account="${a.id}"><th scope="row">${a.id}</th><td data-pause>${state}${p || v.trial ? html`${probe}${next}` : ''}</td><td class="num">${calls.get(a.id) ?? 0}</td><td class="num" data-f="waiting">${waiting.get(a.id) ?? 0}</td><td>${pauseControl(ctx, a.id, p)}</td></tr>`;
  });
  return html`<section aria-labelledby="accounts-h"><h2 id="accounts-h">Accounts</h2>
${tableWrap('Accounts', html`<table><caption>Supplier accounts (accounts.toml)</caption><thead><tr><th scope="col">Account</th><th scope="col">Sending</th><th scope="col">Calls last min</th><th scope="col">Rows waiting</th><th scope="col">Action</th></tr></thead><tbody>${lines}</tbody></table>`)}
<p><a href="/accounts">All accounts: pause or resume sending</a></p>
</section>`;
}

/** What holds sending back (each account's pause and Retry-After hold), and each account's rate budget in use. */
function sending(svc: Services, now: number): Html {
  const p = svc.runner.snapshot({ batches: false });
  const named = namedAccounts(svc.rt.config);
  const held: Html[] = [];
  for (const a of svc.rt.accounts) {
    const v = pauseView(svc.rt.meta, a.id);
    const pause = v.pause;
    const on = named ? `${a.id}: ` : '';
    // When its read probe last ran and what it showed (account/pauses.ts), for a home of one account too.
    const probe = v.lastProbe ? html` <span class="muted" data-probe>· last probed ${timeTag(v.lastProbe.at, now)}: ${v.lastProbe.ok ? '' : 'failed: '}${v.lastProbe.outcome}</span>` : html` <span class="muted" data-probe>· not probed yet</span>`;
    if (pause) held.push(html`<li>${on}${pauseBadge(pause.kind)}: <strong>${pause.code}</strong> ${pause.detail ? `(${pause.detail})` : ''} since ${timeTag(pause.since, now)}${probe}</li>`);
    const hold = a.scheduler.holdRemainingMs();
    if (hold > 0) held.push(html`<li>${on}Retry-After: the API asked to wait; calls held for ${duration(hold)} more</li>`);
  }
  const windows = svc.rt.accounts.flatMap((a) => a.scheduler.windows.map((w) => {
    const used = a.scheduler.callsWithin(w.windowMs);
    const label = `${named ? `${a.id}, ` : ''}last ${duration(w.windowMs)}`;
    return html`<tr><th scope="row">${label}</th><td>${used} / ${w.limit}</td><td><progress max="${w.limit}" value="${Math.min(used, w.limit)}" aria-label="calls in the ${label}">${used}</progress></td></tr>`;
  }));
  return html`<section aria-labelledby="sending"><h2 id="sending">Sending</h2>
${held.length > 0 ? html`<ul class="alerts">${held}</ul>` : html`<p class="ok">Nothing holds sending back.</p>`}
<p><a href="/accounts">Pause or resume sending on an account</a></p>
${tableWrap('Rate budget', html`<table><caption>Rate budget in use (calls of every process on this home${named ? ', per account' : ''})</caption><thead><tr><th scope="col">Window</th><th scope="col">Calls</th><th scope="col">Use</th></tr></thead><tbody>${windows}</tbody></table>`)}
<p class="muted">${p.inFlight} orders on their way · ${p.rate.waitingCalls} calls waiting for the budget · ${p.queuedFiles} files queued for claiming</p>
</section>`;
}

function batches(svc: Services, now: number): Html {
  const pauses = accountPauses(svc.rt);
  const list = svc.rt.batches.unfinished().slice(0, 20);
  if (list.length === 0) return html`<section aria-labelledby="active"><h2 id="active">Active batches</h2><p>None. <a href="/upload">Upload a file</a> or drop one into the inbox.</p></section>`;
  const rows = list.map((b) => {
    const f = svc.figures.get(b, pauses, now);
    return html`<tr data-batch="${b.id}"><td><a class="id" href="/batches/${encodeURIComponent(b.id)}">${b.id}</a><br><span class="muted">${b.sourceName}</span></td>
<td data-f="state">${f.state}</td><td><span data-f="done">${f.done} / ${f.rows}</span></td><td data-f="why">${f.why}</td></tr>`;
  });
  return html`<section aria-labelledby="active"><h2 id="active">Active batches</h2>
${tableWrap('Active batches', html`<table><thead><tr><th scope="col">Batch</th><th scope="col">State</th><th scope="col">Done</th><th scope="col">Why it waits</th></tr></thead><tbody>${rows}</tbody></table>`)}
</section>`;
}

function jobs(svc: Services, now: number): Html {
  const rows = jobViews(svc).map((j) => html`<tr><th scope="row">${j.name}</th><td>${j.cron ?? 'off'}</td>
<td>${j.lastRun ? html`${timeTag(j.lastRun.at, now)} ${j.lastRun.ok ? html`<span class="badge good">ok</span>` : html`<span class="badge bad">failed</span> ${j.lastRun.error ?? ''}`}` : html`<span class="muted">never</span>`}</td>
<td>${j.nextDue ? timeTag(j.nextDue, now) : html`<span class="muted">—</span>`}</td></tr>`);
  // The store's backups (ops/backup-job.ts): the last attempt, and the last good backup's age.
  const good = lastBackup(svc.rt.meta);
  const attempt = lastBackupAttempt(svc.rt.meta);
  const backup = html`<tr data-job="backup"><th scope="row">backup</th><td>${svc.rt.config.backup.cron ?? 'off'}</td>
<td>${attempt ? html`${timeTag(attempt.at, now)} ${attempt.ok ? html`<span class="badge good">ok</span>` : html`<span class="badge bad">failed</span> ${attempt.error ?? ''}`}` : html`<span class="muted">never</span>`}</td>
<td>last good: ${good ? timeTag(good.takenAt, now) : html`<span class="badge bad">none</span>`}</td></tr>`;
  return html`<section aria-labelledby="jobs"><h2 id="jobs">Scheduled jobs</h2>
${tableWrap('Scheduled jobs', html`<table><thead><tr><th scope="col">Job</th><th scope="col">Schedule</th><th scope="col">Last run</th><th scope="col">Next</th></tr></thead><tbody>${rows}${backup}</tbody></table>`)}
<p><a href="/reports">Reports and "run now"</a></p></section>`;
}

function errors(svc: Services, now: number): Html {
  const list = svc.recent.list().slice(0, 10);
  return html`<section aria-labelledby="errors"><h2 id="errors">Recent errors</h2>
${list.length === 0 ? html`<p class="ok">None since the daemon started.</p>` : html`<ul class="errors">${list.map((e) => html`<li>${timeTag(e.at, now)} ${e.what}${e.count > 1 ? html` <span class="muted">(×${e.count} since ${timeTag(e.first, now)})</span>` : ''}</li>`)}</ul>`}
</section>`;
}

export function registerOverview(app: Hono<ConsoleEnv>, svc: Services): void {
  app.get('/', (c) => {
    const ctx = pageCtx(c, svc);
    const now = ctx.now;
    const review = ctx.reviewRows;
    const by = spendByOf(c.req.query('spend'));
    const body = html`<div class="grid">
${money(svc, now)}
${namedAccounts(svc.rt.config) ? accounts(svc, ctx, now) : ''}
<section aria-labelledby="review-h"><h2 id="review-h">Review</h2><p>${review === 0 ? html`<span class="ok">No rows waiting for review.</span>` : html`<a href="/review"><strong>${review}</strong> rows</a> need a decision: charged or not.`}</p></section>
</div>
<section aria-labelledby="pictures-h" class="pictures-wrap"><h2 id="pictures-h">The last ${DAYS} days</h2>
<div data-pictures="/pictures?spend=${by}">${picturesHtmlFor(svc, now, by)}</div>
</section>
<div class="grid">
${sending(svc, now)}
${batches(svc, now)}
${jobs(svc, now)}
${errors(svc, now)}
</div>`;
    return c.html(page(ctx, 'Overview', body));
  });
}

/** A pause's kind in a word or two, for the Accounts table and the Sending list. */
function pauseBadge(kind: PauseKind): string {
  return kind === 'account' ? 'Account problem' : kind === 'operator' ? 'Paused by the operator' : 'Maintenance';
}
