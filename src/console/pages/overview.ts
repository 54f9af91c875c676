/**
 * Overview: money (balance and when it was read, reserved, runway), what holds sending back
 * (pauses, Retry-After), the rate budget in use, active and waiting batches and why they wait,
 * the scheduled jobs, recent errors, and the rows waiting for review. Store reads only, plus the
 * runner's snapshot (in-process figures: calls in flight, files queued).
 */
import type { Hono } from 'hono';
import { JOB_NAMES, lastRunKey, scheduleKey, type JobName } from '../../reports/schedule.js';
import { roundCents } from '../../kernel/money.js';
import { systemClock } from '../../kernel/clock.js';
import { Pauses } from '../../account/pauses.js';
import { callsWithinByAccount, namedAccounts, reservedByAccount } from '../../ops/account-views.js';
import { lastBackup, lastBackupAttempt } from '../../ops/backup-job.js';
import type { ConsoleEnv } from '../auth.js';
import { duration, html, timeTag, usd, type Html } from '../html.js';
import { page, tableWrap } from '../layout.js';
import { pageCtx, type Services } from '../services.js';

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

function money(svc: Services, now: number): Html {
  const bal = svc.balance.latest();
  const reserved = svc.rt.rows.reservedUsd(); // unsent rows of unfinished batches: already promised
  const pace = svc.spend.pace(now);
  const spentHour = roundCents(pace.usdPerHour);
  const span = pace.spanMs >= 3_600_000 ? 'the last hour' : `the last ${duration(pace.spanMs)}`;
  const available = bal ? roundCents(bal.usd - reserved) : null;
  const runway =
    available === null ? 'unknown until the balance is read'
      : spentHour > 0 ? `about ${duration((Math.max(available, 0) / spentHour) * 3_600_000)} at this daemon's pace over ${span} (${usd(spentHour)} an hour)`
        : `no spending by this daemon in ${span}`;
  return html`<section aria-labelledby="money"><h2 id="money">Money</h2>
<dl class="facts">
  <div><dt>Balance${svc.rt.config.sandbox ? ' (sandbox)' : ''}</dt><dd>${bal ? html`<strong>${usd(bal.usd)}</strong> read ${timeTag(bal.at, now)}` : html`not read yet${svc.balance.lastError ? ` (${svc.balance.lastError})` : ''}`}</dd></div>
  <div><dt>Reserved</dt><dd>${usd(reserved)} <span class="muted">(unsent rows of unfinished batches)</span></dd></div>
  <div><dt>Available for new files</dt><dd>${available === null ? '—' : usd(available)}</dd></div>
  <div><dt>Runway</dt><dd>${runway}</dd></div>
</dl></section>`;
}

/**
 * Each supplier account (a home with accounts.toml): its pause, balance, calls in the last minute,
 * rows waiting and USD reserved. A view starts a read of the balances older than 5 min; the page
 * shows the readings held (the live feed's next refresh shows the new ones).
 */
function accounts(svc: Services, now: number): Html {
  void svc.accountBalances.refreshIfOld();
  const calls = callsWithinByAccount(svc.rt.db, systemClock.mono());
  const waiting = svc.rt.rows.unsentByAccountAll();
  const reserved = reservedByAccount(svc.rt);
  const lines = svc.rt.accounts.map((a) => {
    const p = Pauses.read(svc.rt.meta, a.id);
    const b = svc.accountBalances.get(a.id);
    const pause = p ? html`<span class="badge">${p.kind === 'account' ? 'Account problem' : 'Maintenance'}</span> <strong>${p.code}</strong> since ${timeTag(p.since, now)}` : html`<span class="ok">sending</span>`;
    const balance = b.reading ? html`${usd(b.reading.usd)} <span class="muted">read ${timeTag(b.reading.at, now)}</span>` : html`<span class="muted">${b.error ? `not read (${b.error})` : 'reading…'}</span>`;
    return html`<tr data-account="${a.id}"><th scope="row">${a.id}</th><td data-pause>${pause}</td><td class="num" data-balance>${balance}</td><td class="num">${calls.get(a.id) ?? 0}</td><td class="num">${waiting.get(a.id) ?? 0}</td><td class="num">${usd(reserved.get(a.id) ?? 0)}</td></tr>`;
  });
  return html`<section aria-labelledby="accounts-h"><h2 id="accounts-h">Accounts</h2>
${tableWrap('Accounts', html`<table><caption>Supplier accounts (accounts.toml)</caption><thead><tr><th scope="col">Account</th><th scope="col">Sending</th><th scope="col">Balance</th><th scope="col">Calls last min</th><th scope="col">Rows waiting</th><th scope="col">Reserved</th></tr></thead><tbody>${lines}</tbody></table>`)}
</section>`;
}

function sending(svc: Services, now: number): Html {
  const p = svc.runner.snapshot({ batches: false });
  const hold = svc.rt.account.scheduler.holdRemainingMs();
  const held: Html[] = [];
  if (p.pause) held.push(html`<li>${p.pause.kind === 'account' ? 'Account problem' : 'Maintenance'}: <strong>${p.pause.code}</strong> ${p.pause.detail ? `(${p.pause.detail})` : ''} since ${timeTag(p.pause.since, now)}</li>`);
  if (hold > 0) held.push(html`<li>Retry-After: the API asked to wait; calls held for ${duration(hold)} more</li>`);
  const windows = svc.rt.config.rateLimits.map((w) => {
    const used = svc.rt.account.scheduler.callsWithin(w.windowMs);
    return html`<tr><th scope="row">last ${duration(w.windowMs)}</th><td>${used} / ${w.limit}</td><td><progress max="${w.limit}" value="${Math.min(used, w.limit)}" aria-label="calls in the last ${duration(w.windowMs)}">${used}</progress></td></tr>`;
  });
  return html`<section aria-labelledby="sending"><h2 id="sending">Sending</h2>
${held.length > 0 ? html`<ul class="alerts">${held}</ul>` : html`<p class="ok">Nothing holds sending back.</p>`}
${tableWrap('Rate budget', html`<table><caption>Rate budget in use (calls of every process on this home)</caption><thead><tr><th scope="col">Window</th><th scope="col">Calls</th><th scope="col">Use</th></tr></thead><tbody>${windows}</tbody></table>`)}
<p class="muted">${p.inFlight} orders on their way · ${p.rate.waitingCalls} calls waiting for the budget · ${p.queuedFiles} files queued for claiming</p>
</section>`;
}

function batches(svc: Services, now: number): Html {
  const pause = svc.runner.snapshot({ batches: false }).pause;
  const list = svc.rt.batches.unfinished().slice(0, 20);
  if (list.length === 0) return html`<section aria-labelledby="active"><h2 id="active">Active batches</h2><p>None. <a href="/upload">Upload a file</a> or drop one into the inbox.</p></section>`;
  const rows = list.map((b) => {
    const f = svc.figures.get(b, pause, now);
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
    const body = html`<div class="grid">
${money(svc, now)}
${namedAccounts(svc.rt.config) ? accounts(svc, now) : ''}
<section aria-labelledby="review-h"><h2 id="review-h">Review</h2><p>${review === 0 ? html`<span class="ok">No rows waiting for review.</span>` : html`<a href="/review"><strong>${review}</strong> rows</a> need a decision: charged or not.`}</p></section>
${sending(svc, now)}
${batches(svc, now)}
${jobs(svc, now)}
${errors(svc, now)}
</div>`;
    return c.html(page(ctx, 'Overview', body));
  });
}
