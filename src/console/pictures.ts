/**
 * The Overview's pictures (issue 33), each answering one question a reseller asks every morning,
 * each from the store's roll-ups (store/pictures.ts), each with its numbers one click away (a
 * table under "Numbers", and a CSV download from /pictures/<name>.csv):
 *  - spend: what was spent per day over 30 days, stacked by game (or by account);
 *  - outcomes: orders per day by how they ended;
 *  - failures: the failure and refund rates per day, and the answer classes behind them (the
 *    supplier's codes as the supplier's, topup's own TOPUP_… codes as topup's, in words);
 *  - balance: each account's balance over time (its stored readings), rises (top-ups) marked, and
 *    the runway each day (reports/runway.ts: the account's pace over that day and the 6 before);
 *  - rate: the rate budget's use per minute over the last hour, and how long orders waited for it;
 *  - latency: time from the first send to completion, p50 and p95 per day, per game;
 *  - margin: revenue (the reseller's own sale prices), cost and margin per day and per game.
 * One function builds the figures (picturesOf), the HTML and the CSV both read them, and the test
 * holds them to the rows themselves.
 */
import type { Hono } from 'hono';
import type { ConsoleEnv } from './auth.js';
import { html, type Html } from './html.js';
import { tableWrap } from './layout.js';
import { RUNWAY_DAYS, averagePerDay, runwayDays as runwayOf } from '../reports/runway.js';
import type { Services } from './services.js';
import { lines, legend, stackedBars, type ChartText, type LineSeries, type Series } from './charts.js';
import { bucketMs, daysZone, PictureReads, type DailyRow } from '../store/pictures.js';
import { zoneDaySql } from '../store/migrations.js';
import { safeCell } from '../outbox/cell-safety.js';
import { csvText } from '../kernel/csv-text.js';
import type { Db } from '../store/db.js';
import type { RateWindow } from '../config/config.js';
import { CANCELLED_CODE, FOREIGN_ORDER_CODE, NOT_COVERED_CODE, REPEAT_CODE, TRXID_USED_CODE } from '../store/rows.js';
import { PLAYER_NOT_FOUND_CODE } from '../claim/player-checks.js';
import { BOUGHT_BEFORE_CODE } from '../claim/repeats.js';

export const DAYS = 30;
/** Series named in a stacked picture; the rest are summed as "other". */
const MAX_KEYS = 6;
const MAX_GAMES_LATENCY = 4;

export type SpendBy = 'game' | 'account';

export interface Pictures {
  /** The days pictured, oldest first, in `zone` (the roll-up's: TOPUP_TIME_ZONE). */
  days: string[];
  /** The IANA zone of `days`, and how a page names it ("Asia/Jakarta, UTC+07:00 now"). */
  zone: { name: string; label: string };
  spend: { by: SpendBy; keys: string[]; cents: number[][]; orders: number[][]; totalCents: number };
  outcomes: { completed: number[]; cancelled: number[]; rejected: number[]; review: number[] };
  failures: { ended: number[]; failed: number[]; refunded: number[]; classes: FailureClass[] };
  balance: { account: string; usd: (number | null)[]; rises: { day: number; at: number; usd: number; rise: number }[]; runwayDays: (number | null)[]; spentCents: number[] }[];
  rate: { minutes: number[]; accounts: { account: string; calls: number[]; orders: number[]; waitAvgMs: (number | null)[]; waitMaxMs: number[]; perMinute: number | null }[] };
  latency: { game: string; n: number[]; p50Ms: (number | null)[]; p95Ms: (number | null)[] }[];
  margin: { saleRows: number; revenueCents: number[]; costCents: number[]; byGame: { game: string; n: number; revenueCents: number; costCents: number }[] };
}

const FAILED = new Set(['rejected', 'cancelled', 'refunded']);
const ENDED = new Set(['completed', 'cancelled', 'refunded', 'rejected', 'review']);

/**
 * topup's own codes (reject_code values topup writes itself, never the supplier's), in words. The
 * failure picture used to list them as if the supplier had said them (a new-user trial read
 * TOPUP_FOREIGN_ORDER as the supplier's code).
 */
const TOPUP_CODE_WORDS: Record<string, string> = {
  [TRXID_USED_CODE]: 'its trxid was already used by another purchase, and no order of its own was found',
  [FOREIGN_ORDER_CODE]: 'its trxid named an order it did not make (an earlier purchase under the same trxid)',
  [PLAYER_NOT_FOUND_CODE]: 'the player check found no such player: not sent',
  [BOUGHT_BEFORE_CODE]: 'bought before: not sent again',
  [REPEAT_CODE]: 'a repeat of an earlier purchase: not sent',
  [CANCELLED_CODE]: 'skipped by a cancel before it was sent',
  [NOT_COVERED_CODE]: 'not covered by the balance: not sent',
  TOPUP_NO_DEFINITE_ANSWER: 'no definite answer from the API',
};

/** Whose answer a failure class is: the supplier's code, topup's own, or none given. */
export type AnswerFrom = 'supplier' | 'topup' | 'none';

export interface FailureClass {
  /** As people read it: the answer in words, with what became of the money. */
  cls: string;
  from: AnswerFrom;
  /** The code as stored ('' when none was given). */
  code: string;
  n: number;
}

/** topup writes its own codes with this prefix; nothing the supplier says is stored under it. */
export const isTopupCode = (code: string): boolean => /^TOPUP_[A-Z_]+$/.test(code);

/**
 * A failure's answer class as people read it: whose it is, the code (a refusal's, or the error on
 * an order the supplier cancelled: daily_rows.class, migration 19), and what became of the money.
 */
export function classOf(cls: string, outcome: string): Omit<FailureClass, 'n'> {
  const money = outcome === 'refunded' ? ' (cancelled by the supplier, refunded)' : outcome === 'cancelled' ? ' (cancelled, not refunded)' : '';
  if (cls === '') {
    return { from: 'none', code: '', cls: outcome === 'rejected' ? 'refused (no code)' : outcome === 'refunded' ? 'cancelled by the supplier, refunded' : 'cancelled by the supplier, not refunded' };
  }
  if (isTopupCode(cls)) {
    const words = TOPUP_CODE_WORDS[cls] ?? 'a code of topup\'s own';
    return { from: 'topup', code: cls, cls: `${words}${money} [topup's code ${cls}]` };
  }
  return { from: 'supplier', code: cls, cls: `${cls}${money}` };
}

const FROM_WORDS: Record<AnswerFrom, string> = { supplier: "supplier's code", topup: "topup's own", none: 'no code' };

/** The budget a window allows per minute: the tightest of the account's windows. */
export function perMinute(windows: readonly RateWindow[]): number | null {
  if (windows.length === 0) return null;
  return Math.min(...windows.map((w) => (w.limit * 60_000) / w.windowMs));
}

function topKeys(totals: Map<string, number>): string[] {
  const sorted = [...totals.entries()].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([k]) => k);
  return sorted.length <= MAX_KEYS ? sorted : [...sorted.slice(0, MAX_KEYS - 1), 'other'];
}

function percentile(buckets: Map<number, number>, q: number): number | null {
  const total = [...buckets.values()].reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const want = Math.ceil(q * total);
  let seen = 0;
  for (const b of [...buckets.keys()].sort((x, y) => x - y)) {
    seen += buckets.get(b)!;
    if (seen >= want) return bucketMs(b);
  }
  return null;
}

/** Every picture's figures, from the store. `accounts`: the home's accounts and their rate windows. */
export function picturesOf(db: Db, now: number, by: SpendBy, accounts: readonly { id: string; windows: readonly RateWindow[] }[]): Pictures {
  const reads = new PictureReads(db);
  const zone = daysZone(db);
  const days = zone.lastDays(now, DAYS);
  const dayIx = new Map(days.map((d, i) => [d, i]));
  const rows = reads.daily(days[0]!);
  const zero = (): number[] => days.map(() => 0);

  // Spend, by game or by account.
  const keyOf = (r: DailyRow): string => (by === 'game' ? r.game || '(no game)' : r.account);
  const totals = new Map<string, number>();
  for (const r of rows) totals.set(keyOf(r), (totals.get(keyOf(r)) ?? 0) + r.spentCents);
  const keys = topKeys(totals);
  const named = new Set(keys);
  const cents = keys.map(zero);
  const orders = keys.map(zero);
  const outcomes = { completed: zero(), cancelled: zero(), rejected: zero(), review: zero() };
  const failures = { ended: zero(), failed: zero(), refunded: zero(), classes: [] as FailureClass[] };
  const classes = new Map<string, FailureClass>();
  const revenue = zero();
  const cost = zero();
  const byGame = new Map<string, { n: number; revenueCents: number; costCents: number }>();
  const spentBy = new Map<string, number[]>();
  let saleRows = 0;
  for (const r of rows) {
    const d = dayIx.get(r.day);
    if (d === undefined) continue;
    if (r.spentCents > 0) {
      const k = named.has(keyOf(r)) ? keyOf(r) : 'other';
      const ki = keys.indexOf(k);
      cents[ki]![d]! += r.spentCents;
      orders[ki]![d]! += r.n;
      const a = spentBy.get(r.account) ?? zero();
      a[d]! += r.spentCents;
      spentBy.set(r.account, a);
    }
    if (r.outcome === 'completed') outcomes.completed[d]! += r.n;
    else if (r.outcome === 'cancelled' || r.outcome === 'refunded') outcomes.cancelled[d]! += r.n;
    else if (r.outcome === 'rejected') outcomes.rejected[d]! += r.n;
    else if (r.outcome === 'review') outcomes.review[d]! += r.n;
    if (ENDED.has(r.outcome)) failures.ended[d]! += r.n;
    if (FAILED.has(r.outcome)) {
      failures.failed[d]! += r.n;
      const c = classOf(r.cls, r.outcome);
      const had = classes.get(c.cls);
      if (had) had.n += r.n;
      else classes.set(c.cls, { ...c, n: r.n });
    }
    if (r.outcome === 'refunded') failures.refunded[d]! += r.n;
    if (r.saleN > 0) {
      saleRows += r.saleN;
      revenue[d]! += r.saleCents;
      cost[d]! += r.saleCostCents;
      const g = byGame.get(r.game) ?? { n: 0, revenueCents: 0, costCents: 0 };
      g.n += r.saleN;
      g.revenueCents += r.saleCents;
      g.costCents += r.saleCostCents;
      byGame.set(r.game, g);
    }
  }
  failures.classes = [...classes.values()].sort((a, b) => b.n - a.n || a.cls.localeCompare(b.cls));

  // Balance per account: the last reading of each day (a day of the zone: the store's own offsets
  // name it, as for the roll-ups), carried over days without one.
  const since = zone.startOf(days[0]!);
  const lastOfDay = db
    .prepare(`SELECT account, ${zoneDaySql('at')} AS d, usd, max(at) AS at FROM balance_readings WHERE at >= ? GROUP BY account, d`)
    .all(since) as { account: string; d: string; usd: number; at: number }[];
  const before = new Map(reads.balanceBefore(since).map((b) => [b.account, b.usd]));
  const rises = db
    .prepare('SELECT account, at, usd, rise FROM balance_readings WHERE at >= ? AND rise > 0 ORDER BY account, at')
    .all(since) as { account: string; at: number; usd: number; rise: number }[];
  const balanceAccounts = [...new Set([...accounts.map((a) => a.id), ...lastOfDay.map((l) => l.account)])];
  const balance = balanceAccounts.map((account) => {
    const usd: (number | null)[] = days.map(() => null);
    for (const l of lastOfDay) if (l.account === account) {
      const d = dayIx.get(l.d);
      if (d !== undefined) usd[d] = l.usd;
    }
    let carry: number | null = before.get(account) ?? null;
    for (let i = 0; i < usd.length; i++) {
      if (usd[i] === null) usd[i] = carry;
      else carry = usd[i]!;
    }
    const spent = spentBy.get(account) ?? zero();
    // The one runway (reports/runway.ts); a day whose week starts before the 30 days has none.
    const runwayDays = usd.map((u, i) => (u === null || i < RUNWAY_DAYS - 1 ? null : runwayOf(u, averagePerDay(spent.slice(i - RUNWAY_DAYS + 1, i + 1).reduce((a, b) => a + b, 0)))));
    const own = rises.filter((r) => r.account === account).flatMap((r) => {
      const d = dayIx.get(zone.dayOf(r.at));
      return d === undefined ? [] : [{ day: d, at: r.at, usd: r.usd, rise: Math.round(r.rise * 100) / 100 }];
    });
    return { account, usd, rises: own, runwayDays, spentCents: spent };
  });

  // The rate budget over the last hour, per minute.
  const nowMinute = Math.floor(now / 60_000);
  const minutes = Array.from({ length: 60 }, (_, i) => nowMinute - 59 + i);
  const mins = reads.rateMinutes(minutes[0]!);
  const rate = {
    minutes,
    accounts: accounts.map((a) => {
      const calls = minutes.map(() => 0);
      const ord = minutes.map(() => 0);
      const waitSum = minutes.map(() => 0);
      const waitMaxMs = minutes.map(() => 0);
      for (const m of mins) if (m.account === a.id) {
        const i = m.minute - minutes[0]!;
        if (i < 0 || i >= 60) continue;
        calls[i] = m.calls;
        ord[i] = m.orders;
        waitSum[i] = m.orderWaitMs;
        waitMaxMs[i] = m.orderWaitMaxMs;
      }
      return { account: a.id, calls, orders: ord, waitAvgMs: ord.map((n, i) => (n > 0 ? waitSum[i]! / n : null)), waitMaxMs, perMinute: perMinute(a.windows) };
    }),
  };

  // Time to completion per game: the games with the most completed rows.
  const games = (db.prepare(`SELECT game, sum(n) AS n FROM daily_latency WHERE day >= ? GROUP BY game HAVING sum(n) > 0 ORDER BY 2 DESC, 1 LIMIT ${MAX_GAMES_LATENCY}`).all(days[0]!) as { game: string }[]).map((g) => g.game);
  const lat = games.length === 0 ? [] : reads.latency(days[0]!, games);
  const latency = games.map((game) => {
    const per = days.map(() => new Map<number, number>());
    for (const l of lat) if (l.game === game) {
      const d = dayIx.get(l.day);
      if (d !== undefined) per[d]!.set(l.bucket, (per[d]!.get(l.bucket) ?? 0) + l.n);
    }
    return { game: game || '(no game)', n: per.map((m) => [...m.values()].reduce((a, b) => a + b, 0)), p50Ms: per.map((m) => percentile(m, 0.5)), p95Ms: per.map((m) => percentile(m, 0.95)) };
  });

  return {
    days,
    zone: { name: zone.name, label: zone.label(now) },
    spend: { by, keys, cents, orders, totalCents: cents.flat().reduce((a, b) => a + b, 0) },
    outcomes,
    failures,
    balance,
    rate,
    latency,
    margin: { saleRows, revenueCents: revenue, costCents: cost, byGame: [...byGame.entries()].map(([game, g]) => ({ game: game || '(no game)', ...g })).sort((a, b) => b.revenueCents - a.revenueCents) },
  };
}

// ───────── formats ─────────

const money = (cents: number): string => (cents / 100).toFixed(2);
const usdAxis = (v: number): string => (Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(v % 1000 === 0 ? 0 : 1)}k` : `${v}`);
const shortDay = (d: string): string => d.slice(5);
const pct = (a: number, b: number): number | null => (b > 0 ? Math.round((a / b) * 1000) / 10 : null);
const secs = (ms: number | null): string => (ms === null ? '—' : ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${(ms / 60_000).toFixed(1)} min`);
const minuteLabel = (m: number): string => new Date(m * 60_000).toISOString().slice(11, 16);
const sum = (a: readonly number[]): number => a.reduce((x, y) => x + y, 0);

// ───────── CSV ─────────

/** Each picture's numbers as CSV rows (header first): what its table shows, in plain units. */
export function csvRows(p: Pictures, name: string): (string | number)[][] | null {
  switch (name) {
    case 'spend':
      return [['day', p.spend.by, 'spent_usd', 'orders'], ...p.days.flatMap((d, i) => p.spend.keys.flatMap((k, ki) => (p.spend.cents[ki]![i]! > 0 ? [[d, k, money(p.spend.cents[ki]![i]!), p.spend.orders[ki]![i]!]] : [])))];
    case 'outcomes':
      return [['day', 'completed', 'cancelled_or_refunded', 'rejected', 'in_review'], ...p.days.map((d, i) => [d, p.outcomes.completed[i]!, p.outcomes.cancelled[i]!, p.outcomes.rejected[i]!, p.outcomes.review[i]!])];
    case 'failures':
      return [['day', 'orders_ended', 'failed', 'refunded', 'failure_rate_pct', 'refund_rate_pct'], ...p.days.map((d, i) => [d, p.failures.ended[i]!, p.failures.failed[i]!, p.failures.refunded[i]!, pct(p.failures.failed[i]!, p.failures.ended[i]!) ?? '', pct(p.failures.refunded[i]!, p.failures.ended[i]!) ?? ''])];
    case 'failure-classes':
      return [['answer_from', 'code', 'answer_class', 'failed_orders_30_days'], ...p.failures.classes.map((c) => [c.from, c.code, c.cls, c.n])];
    case 'balance':
      return [['day', 'account', 'balance_usd', 'spent_usd', 'runway_days', 'rises_usd'], ...p.balance.flatMap((b) => p.days.map((d, i) => [d, b.account, b.usd[i] === null ? '' : b.usd[i]!.toFixed(2), money(b.spentCents[i]!), b.runwayDays[i] === null ? '' : b.runwayDays[i]!.toFixed(1), b.rises.filter((r) => r.day === i).map((r) => r.rise.toFixed(2)).join(' ')]))];
    case 'rate':
      return [['minute_utc', 'account', 'calls', 'budget_per_minute', 'orders', 'order_wait_avg_ms', 'order_wait_max_ms'], ...p.rate.accounts.flatMap((a) => p.rate.minutes.map((m, i) => [new Date(m * 60_000).toISOString().slice(0, 16), a.account, a.calls[i]!, a.perMinute === null ? '' : Math.floor(a.perMinute), a.orders[i]!, a.waitAvgMs[i] === null ? '' : Math.round(a.waitAvgMs[i]!), a.waitMaxMs[i]!]))];
    case 'latency':
      return [['day', 'game', 'completed', 'p50_seconds', 'p95_seconds'], ...p.latency.flatMap((g) => p.days.flatMap((d, i) => (g.n[i]! > 0 ? [[d, g.game, g.n[i]!, (g.p50Ms[i]! / 1000).toFixed(1), (g.p95Ms[i]! / 1000).toFixed(1)]] : [])))];
    case 'margin':
      return [['day', 'revenue_usd', 'cost_usd', 'margin_usd'], ...p.days.map((d, i) => [d, money(p.margin.revenueCents[i]!), money(p.margin.costCents[i]!), money(p.margin.revenueCents[i]! - p.margin.costCents[i]!)])];
    case 'margin-games':
      return [['game', 'orders_with_sale_price', 'revenue_usd', 'cost_usd', 'margin_usd'], ...p.margin.byGame.map((g) => [g.game, g.n, money(g.revenueCents), money(g.costCents), money(g.revenueCents - g.costCents)])];
    default:
      return null;
  }
}

export const CSV_NAMES = ['spend', 'outcomes', 'failures', 'failure-classes', 'balance', 'rate', 'latency', 'margin', 'margin-games'] as const;

/** Each link names what it downloads: a page of several "Download CSV" links would not say which is which. */
const CSV_LABELS: Record<string, string> = {
  spend: 'spend per day', outcomes: 'orders by outcome', failures: 'failure and refund rates', 'failure-classes': 'failures by answer class',
  balance: 'balance per day', rate: 'rate budget per minute', latency: 'time to completion', margin: 'margin per day', 'margin-games': 'margin per game',
};

function csvLink(name: string, q = ''): Html {
  return html`<a class="csv" href="/pictures/${name}.csv${q}" download="${name}.csv">Download CSV: ${CSV_LABELS[name] ?? name}</a>`;
}

// ───────── HTML ─────────

function numbers(label: string, head: readonly string[], body: readonly (readonly (string | number | Html)[])[], foot?: readonly (string | number | Html)[]): Html {
  return html`<details class="numbers"><summary>Numbers: ${label}</summary>${tableWrap(label, html`<table><thead><tr>${head.map((h, i) => html`<th scope="col"${i > 0 ? html` class="num"` : ''}>${h}</th>`)}</tr></thead><tbody>${body.map((r) => html`<tr>${r.map((c, i) => (i === 0 ? html`<th scope="row">${c}</th>` : html`<td class="num">${c}</td>`))}</tr>`)}</tbody>${foot ? html`<tfoot><tr>${foot.map((c, i) => (i === 0 ? html`<th scope="row">${c}</th>` : html`<td class="num">${c}</td>`))}</tr></tfoot>` : ''}</table>`)}</details>`;
}

function picture(id: string, heading: string, question: string, fig: Html, caption: Html | string, table: Html, csv: Html, extra: Html | string = ''): Html {
  return html`<section class="picture" aria-labelledby="${id}-h" data-picture="${id}"><h3 id="${id}-h">${heading}</h3><p class="muted question">${question}</p>${extra}<figure>${fig}<figcaption>${caption}</figcaption></figure>${table}<p class="csvline">${csv}</p></section>`;
}

function spendHtml(p: Pictures): Html {
  const s = p.spend;
  const series: Series[] = s.keys.map((k, i) => ({ name: k, values: s.cents[i]!.map((c) => c / 100) }));
  const total = s.totalCents;
  const t: ChartText = { id: 'pic-spend', title: `Spend per day, last ${DAYS} days, by ${s.by}`, desc: `${money(total)} USD spent over ${DAYS} days${s.keys.length ? `: ${s.keys.map((k, i) => `${k} ${money(sum(s.cents[i]!))} USD`).join(', ')}` : ''}.` };
  const other: SpendBy = s.by === 'game' ? 'account' : 'game';
  const sw = html`<p class="switch">By <strong aria-current="true">${s.by}</strong> · <a href="/?spend=${other}#pic-spend-h">by ${other}</a></p>`;
  const body = p.days.map((d, i) => [d, ...s.keys.map((_, k) => money(s.cents[k]![i]!)), money(sum(s.keys.map((_, k) => s.cents[k]![i]!)))]);
  const foot = ['Total', ...s.keys.map((_, k) => money(sum(s.cents[k]!))), money(total)];
  // "This week": the last 7 days (of the zone), today included (the same 7 days the runway divides by), by
  // the same keys as the chart, so the week's spend per game or per account is read at a glance.
  const weekFrom = Math.max(0, p.days.length - 7);
  const week = s.keys.map((k, i) => ({ k, c: sum(s.cents[i]!.slice(weekFrom)) })).filter((x) => x.c > 0);
  const weekTotal = sum(week.map((x) => x.c));
  return picture('pic-spend', 'Spend per day', `How much did I spend each day, on which ${s.by}s?`,
    html`${stackedBars(t, p.days, series, usdAxis, { xLabel: shortDay })}${legend('pic-spend', s.keys, 'fill')}`,
    html`<strong data-total="spend">${money(total)} USD</strong> spent in the last ${DAYS} days (completed orders, and cancelled ones not refunded); today ${money(sum(s.keys.map((_, k) => s.cents[k]![p.days.length - 1]!)))} USD; this week (the last 7 days, today included) <strong data-total="spend-week">${money(weekTotal)} USD</strong>${week.length > 0 ? `: ${week.map((x) => `${x.k} ${money(x.c)} USD`).join(', ')}` : ''}.`,
    numbers(`spend per day (USD) by ${s.by}`, ['Day', ...s.keys, 'All'], body, foot), csvLink('spend', `?by=${s.by}`), sw);
}

function outcomesHtml(p: Pictures): Html {
  const o = p.outcomes;
  const names = ['completed', 'cancelled or refunded', 'rejected', 'in review'];
  const vals = [o.completed, o.cancelled, o.rejected, o.review];
  const totals = vals.map(sum);
  const t: ChartText = { id: 'pic-outcomes', title: `Orders per day by outcome, last ${DAYS} days`, desc: names.map((n, i) => `${n} ${totals[i]}`).join(', ') };
  return picture('pic-outcomes', 'Orders by outcome', 'How did my orders end each day?',
    html`${stackedBars(t, p.days, names.map((n, i) => ({ name: n, values: vals[i]! })), (v) => String(v), { xLabel: shortDay })}${legend('pic-outcomes', names, 'fill')}`,
    html`Last ${DAYS} days: ${names.map((n, i) => html`<strong>${totals[i]}</strong> ${n}`).reduce((a: Html[], h, i) => (i ? [...a, html` · `, h] : [h]), [])}. Rows never sent (invalid, skipped) are not orders and are not counted.`,
    numbers('orders per day by outcome', ['Day', ...names], p.days.map((d, i) => [d, ...vals.map((v) => v[i]!)]), ['Total', ...totals]), csvLink('outcomes'));
}

function failuresHtml(p: Pictures): Html {
  const f = p.failures;
  const failRate = p.days.map((_, i) => pct(f.failed[i]!, f.ended[i]!));
  const refundRate = p.days.map((_, i) => pct(f.refunded[i]!, f.ended[i]!));
  const tf = sum(f.failed);
  const te = sum(f.ended);
  const t: ChartText = { id: 'pic-failures', title: `Failure and refund rate per day, last ${DAYS} days`, desc: `${tf} of ${te} orders failed (${pct(tf, te) ?? 0} %), ${sum(f.refunded)} refunded.` };
  const series: LineSeries[] = [{ name: 'failed %', values: failRate }, { name: 'refunded %', values: refundRate }];
  const maxN = Math.max(1, ...f.classes.map((c) => c.n));
  const classes = f.classes.length === 0
    ? html`<p class="ok">No failures in the last ${DAYS} days.</p>`
    : html`<h4 class="h4">Behind the failures: whose answer, and what it said</h4><p class="muted">The supplier's code as the supplier gave it; topup's own (TOPUP_…) in words: topup decided it, the supplier did not say it.</p><ul class="classes">${f.classes.slice(0, 8).map((c) => html`<li data-answer-from="${c.from}"><span class="cls"><span class="from from-${c.from}">${FROM_WORDS[c.from]}</span> ${c.cls}</span> <svg class="hbar" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true"><rect width="${((c.n / maxN) * 100).toFixed(1)}" height="8" fill="#a3123a"/></svg> <strong>${c.n}</strong> <span class="muted">(${pct(c.n, tf)} %)</span></li>`)}</ul>${numbers('failures by answer class', ['Answer class', 'Whose', 'Code', 'Failed orders'], f.classes.map((c) => [c.cls, FROM_WORDS[c.from], c.code || '—', c.n]), ['Total', '', '', tf])}<p class="csvline">${csvLink('failure-classes')}</p>`;
  return picture('pic-failures', 'Failures and refunds', 'Are failures or refunds rising, and why do orders fail?',
    html`${lines(t, p.days, series, (v) => `${v} %`, { xLabel: shortDay })}${legend('pic-failures', series.map((s) => s.name), 'line')}`,
    html`Last ${DAYS} days: <strong>${tf}</strong> of ${te} orders failed (${pct(tf, te) ?? 0} %: rejected, or cancelled by the supplier), <strong>${sum(f.refunded)}</strong> refunded. A rate is of the orders that ended that day.`,
    html`${numbers('failure and refund rate per day', ['Day', 'Orders ended', 'Failed', 'Refunded', 'Failed %', 'Refunded %'], p.days.map((d, i) => [d, f.ended[i]!, f.failed[i]!, f.refunded[i]!, failRate[i] ?? '—', refundRate[i] ?? '—']))}${classes}`,
    csvLink('failures'));
}

function balanceHtml(p: Pictures): Html {
  const b = p.balance;
  const any = b.some((a) => a.usd.some((u) => u !== null));
  const series: LineSeries[] = b.map((a) => ({ name: a.account, values: a.usd }));
  const marks = b.flatMap((a) => {
    const byDay = new Map<number, number>();
    for (const r of a.rises) byDay.set(r.day, (byDay.get(r.day) ?? 0) + r.rise);
    return [...byDay.entries()].map(([day, rise]) => ({ i: day, v: a.usd[day] ?? 0, label: `+${rise.toFixed(2)}` }));
  });
  const last = p.days.length - 1;
  const now = b.map((a) => html`<strong>${a.account}</strong> ${a.usd[last] === null ? 'not read yet' : `${a.usd[last]!.toFixed(2)} USD`}${a.runwayDays[last] === null ? '' : html` (runway about ${a.runwayDays[last]!.toFixed(1)} days at the last ${RUNWAY_DAYS} days' pace)`}`);
  const t: ChartText = { id: 'pic-balance', title: `Balance per account, last ${DAYS} days`, desc: b.map((a) => `${a.account}: ${a.usd[last] === null ? 'not read' : `${a.usd[last]!.toFixed(2)} USD`}, ${a.rises.length} rises`).join('; ') };
  const body = b.flatMap((a) => p.days.map((d, i) => [d, a.account, a.usd[i] === null ? '—' : a.usd[i]!.toFixed(2), money(a.spentCents[i]!), a.runwayDays[i] === null ? '—' : a.runwayDays[i]!.toFixed(1), a.rises.filter((r) => r.day === i).map((r) => `+${r.rise.toFixed(2)}`).join(' ')]));
  return picture('pic-balance', 'Balance and runway', 'When will each account run out, and when was it topped up?',
    any ? html`${lines(t, p.days, series, usdAxis, { xLabel: shortDay, marks })}${legend('pic-balance', series.map((s) => s.name), 'line')}` : html`<p>No balance read yet: the daemon reads each account's balance every 5 minutes while it runs.</p>`,
    html`Now: ${now.reduce((a: Html[], h, i) => (i ? [...a, html` · `, h] : [h]), [])}. ▼ marks a rise of the balance (a top-up; a refund shows as a small rise too). Each day's balance is its last reading.`,
    numbers('balance per day and account', ['Day', 'Account', 'Balance USD', 'Spent USD', 'Runway days', 'Rises USD'], body), csvLink('balance'));
}

function rateHtml(p: Pictures): Html {
  const r = p.rate;
  const labels = r.minutes.map(String);
  const calls: LineSeries[] = r.accounts.map((a) => ({ name: `${a.account} calls`, values: a.calls }));
  const budget = r.accounts.map((a) => a.perMinute).filter((v): v is number => v !== null);
  const ceiling = budget.length > 0 ? { v: Math.min(...budget), label: `budget ${Math.floor(Math.min(...budget))}/min${r.accounts.length > 1 ? ' (tightest account)' : ''}` } : undefined;
  const waits: LineSeries[] = r.accounts.flatMap((a) => [{ name: `${a.account} average wait`, values: a.waitAvgMs.map((v) => (v === null ? null : v / 1000)) }, { name: `${a.account} longest wait`, values: a.waitMaxMs.map((v, i) => (a.orders[i]! > 0 ? v / 1000 : null)) }]);
  const totalCalls = r.accounts.map((a) => sum(a.calls));
  const t1: ChartText = { id: 'pic-rate', title: 'Rate budget use per minute, last hour', desc: r.accounts.map((a, i) => `${a.account}: ${totalCalls[i]} calls${a.perMinute === null ? '' : `, budget ${Math.floor(a.perMinute)} a minute`}`).join('; ') };
  const t2: ChartText = { id: 'pic-wait', title: 'How long orders waited for the rate budget, last hour (seconds)', desc: r.accounts.map((a) => `${a.account}: longest ${secs(Math.max(0, ...a.waitMaxMs))}`).join('; ') };
  const body = r.accounts.flatMap((a) => r.minutes.flatMap((m, i) => (a.calls[i]! > 0 ? [[minuteLabel(m), a.account, a.calls[i]!, a.perMinute === null ? '—' : Math.floor(a.perMinute), a.orders[i]!, secs(a.waitAvgMs[i]!), a.orders[i]! > 0 ? secs(a.waitMaxMs[i]!) : '—']] : [])));
  return picture('pic-rate', 'Rate budget', 'Is the rate budget what holds orders back?',
    html`${lines(t1, labels, calls, (v) => String(v), { xLabel: (l) => minuteLabel(Number(l)), ceiling, height: 180 })}${legend('pic-rate', calls.map((s) => s.name), 'line')}${lines(t2, labels, waits, (v) => `${v}s`, { xLabel: (l) => minuteLabel(Number(l)), height: 160 })}${legend('pic-wait', waits.map((s) => s.name), 'line')}`,
    html`Last hour: ${r.accounts.map((a, i) => html`<strong>${a.account}</strong> ${totalCalls[i]} calls, ${sum(a.orders)} orders, longest wait for the budget ${secs(sum(a.orders) > 0 ? Math.max(...a.waitMaxMs) : null)}`).reduce((a: Html[], h, i) => (i ? [...a, html` · `, h] : [h]), [])}. Calls of every topup process on this home.`,
    numbers('rate budget per minute (minutes with calls)', ['Minute (UTC)', 'Account', 'Calls', 'Budget / min', 'Orders', 'Average wait', 'Longest wait'], body), csvLink('rate'));
}

function latencyHtml(p: Pictures): Html {
  if (p.latency.length === 0) {
    return picture('pic-latency', 'Time to completion', 'Is the supplier getting slower?', html`<p>No completed orders in the last ${DAYS} days.</p>`, '', html``, csvLink('latency'));
  }
  const charts = p.latency.map((g, gi) => {
    const s: LineSeries[] = [{ name: 'p50', values: g.p50Ms.map((v) => (v === null ? null : Math.round(v / 100) / 10)) }, { name: 'p95', values: g.p95Ms.map((v) => (v === null ? null : Math.round(v / 100) / 10)) }];
    const last = [...g.p95Ms].reverse().find((v) => v !== null) ?? null;
    const t: ChartText = { id: `pic-latency-${gi}`, title: `${g.game}: time from sending to completion, p50 and p95 per day (seconds)`, desc: `${sum(g.n)} completed orders; latest p95 ${secs(last)}` };
    return html`<div class="small-multiple"><h4 class="h4">${g.game} <span class="muted">(${sum(g.n)} completed)</span></h4>${lines(t, p.days, s, (v) => `${v}s`, { xLabel: shortDay, height: 150 })}</div>`;
  });
  const body = p.latency.flatMap((g) => p.days.flatMap((d, i) => (g.n[i]! > 0 ? [[d, g.game, g.n[i]!, secs(g.p50Ms[i]!), secs(g.p95Ms[i]!)]] : [])));
  return picture('pic-latency', 'Time to completion', 'Is the supplier getting slower?',
    html`<div class="multiples">${charts}</div>${legend('pic-latency', ['p50 (half of the orders were faster)', 'p95 (19 in 20 were faster)'], 'line')}`,
    html`From the first send to the order's end, for completed orders, per day and game (${p.latency.length === 1 ? 'the busiest game' : `the ${p.latency.length} busiest games`}). Measured in steps of about 13 %.`,
    numbers('time to completion per day and game', ['Day', 'Game', 'Completed', 'p50', 'p95'], body), csvLink('latency'));
}

function marginHtml(p: Pictures): Html {
  const m = p.margin;
  if (m.saleRows === 0) {
    return picture('pic-margin', 'Margin', 'What did I earn on what I sold?', html`<p>No sale prices yet. Give each row the price you charged your customer, and the console shows revenue, cost and margin per day and game: a column named <code>sale price</code> (or <code>salePriceUsd</code>, <code>sell price</code>) in a file, or <code>meta.salePriceUsd</code> in an order of the order API. The column report of a file names the column it read.</p>`, '', html``, csvLink('margin'));
  }
  const rev = sum(m.revenueCents);
  const cost = sum(m.costCents);
  const series: LineSeries[] = [
    { name: 'revenue', values: m.revenueCents.map((c) => c / 100) },
    { name: 'cost', values: m.costCents.map((c) => c / 100) },
    { name: 'margin', values: m.revenueCents.map((c, i) => (c - m.costCents[i]!) / 100) },
  ];
  const t: ChartText = { id: 'pic-margin', title: `Revenue, cost and margin per day, last ${DAYS} days`, desc: `revenue ${money(rev)} USD, cost ${money(cost)} USD, margin ${money(rev - cost)} USD over ${m.saleRows} orders with a sale price` };
  return picture('pic-margin', 'Margin', 'What did I earn on what I sold?',
    html`${lines(t, p.days, series, usdAxis, { xLabel: shortDay })}${legend('pic-margin', series.map((s) => s.name), 'line')}`,
    html`Last ${DAYS} days, the <strong>${m.saleRows}</strong> completed orders with your sale price: revenue <strong data-total="revenue">${money(rev)} USD</strong>, cost ${money(cost)} USD, margin <strong>${money(rev - cost)} USD</strong>${rev > 0 ? ` (${pct(rev - cost, rev)} %)` : ''}.`,
    html`${numbers('revenue, cost and margin per day (USD)', ['Day', 'Revenue', 'Cost', 'Margin'], p.days.map((d, i) => [d, money(m.revenueCents[i]!), money(m.costCents[i]!), money(m.revenueCents[i]! - m.costCents[i]!)]), ['Total', money(rev), money(cost), money(rev - cost)])}${numbers('margin per game, last 30 days (USD)', ['Game', 'Orders', 'Revenue', 'Cost', 'Margin'], m.byGame.map((g) => [g.game, g.n, money(g.revenueCents), money(g.costCents), money(g.revenueCents - g.costCents)]))}<p class="csvline">${csvLink('margin-games')}</p>`,
    csvLink('margin'));
}

/** The pictures block of the Overview (also served alone, for the live script). */
export function picturesHtml(p: Pictures): Html {
  // Which zone a day is in, said once above the pictures (TOPUP_TIME_ZONE): "today" is the reseller's today.
  const zoneLine = html`<p class="muted days-zone" data-days-zone="${p.zone.name}">Days are ${p.zone.name === 'UTC' ? 'UTC days' : html`days in <strong>${p.zone.label}</strong>`}: each runs from midnight to midnight there (<code>TOPUP_TIME_ZONE</code>${p.zone.name === 'UTC' ? ', not set' : ''}). Times of day are UTC.</p>`;
  return html`<div class="pictures">${zoneLine}${spendHtml(p)}${outcomesHtml(p)}${failuresHtml(p)}${balanceHtml(p)}${rateHtml(p)}${latencyHtml(p)}${marginHtml(p)}</div>`;
}

export function spendByOf(q: string | undefined): SpendBy {
  return q === 'account' ? 'account' : 'game';
}

export function picturesFor(svc: Services, now: number, by: SpendBy): Pictures {
  return picturesOf(svc.rt.db, now, by, svc.rt.accounts.map((a) => ({ id: a.id, windows: a.scheduler.windows })));
}

/**
 * The pictures' HTML, kept MAX_AGE_MS per spend switch: the Overview and the live script's reads
 * between two rows ending show the same 30 days, and the pictures are read on the daemon's own
 * thread. Never older than that, so they follow the batches as the other live figures do (every
 * 1–5 s). The CSV downloads are always read fresh.
 */
const MAX_AGE_MS = 5_000;
const kept = new WeakMap<Services, Map<SpendBy, { at: number; html: Html }>>();

export function picturesHtmlFor(svc: Services, now: number, by: SpendBy): Html {
  const mine = kept.get(svc) ?? new Map<SpendBy, { at: number; html: Html }>();
  kept.set(svc, mine);
  const e = mine.get(by);
  if (e && now - e.at >= 0 && now - e.at < MAX_AGE_MS) return e.html;
  const made = picturesHtml(picturesFor(svc, now, by));
  mine.set(by, { at: now, html: made });
  return made;
}

export function registerPictures(app: Hono<ConsoleEnv>, svc: Services): void {
  // The pictures alone: the Overview's script reads them again when the figures moved.
  app.get('/pictures', (c) => c.html(picturesHtmlFor(svc, svc.rt.clock.now(), spendByOf(c.req.query('spend') ?? c.req.query('by'))).text));
  app.get('/pictures/:name{[a-z-]+\\.csv}', (c) => {
    const name = c.req.param('name').replace(/\.csv$/, '');
    const rows = csvRows(picturesFor(svc, svc.rt.clock.now(), spendByOf(c.req.query('by'))), name);
    if (!rows) return c.notFound();
    const text = csvText(rows.map((r) => r.map((v) => (typeof v === 'number' ? v : safeCell(v)))));
    return c.body(text, 200, { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${name}-${daysZone(svc.rt.db).dayOf(svc.rt.clock.now())}.csv"` });
  });
}
