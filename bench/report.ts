/** Turns the raw runs into the figures of the table, and prints the table. */
import type { CallLogEntry } from '../src/sandbox/index.js';
import type { DaemonRunRaw } from './daemon-run.js';
import type { NaiveRaw } from './naive-client.js';
import { round } from './lib.js';

export type RouteGroup = 'submit' | 'poll' | 'history' | 'other';

export function routeGroup(route: string): RouteGroup {
  if (route === 'POST /orders') return 'submit';
  if (route === 'GET /orders/:orderId') return 'poll';
  if (route === 'GET /history') return 'history';
  return 'other';
}

export interface Setting {
  rows: number;
  scale: number;
  /** Calls per minute the API allows (the ceiling), and its 1-second window. */
  perMinute: number;
  perSecond: number;
  longestFulfilmentMs: number;
}

export interface ContenderFigures {
  label: string;
  rows: number;
  ordersPlaced: number;
  finished: number;
  counts?: Record<string, number>;
  /** Real-equivalent minutes (sandbox clock). */
  wallMin: number;
  wallMeasuredSec: number;
  lowerBoundMin?: number;
  wallVsLowerBound?: number;
  ordersPerMin: number;
  /** Steady rate of new orders while sending, ÷ the ceiling. */
  steadyOrdersPerMin?: number;
  budgetEfficiency?: number;
  newOrderShareOfCalls: number;
  firstOrderAfterSec?: number;
  lastOrderAtMin?: number;
  calls: { total: number; admitted: number; byRoute: Record<RouteGroup, number>; perOrder: Record<RouteGroup | 'all', number> };
  rateLimited429: number;
  extraSubmits: number;
  startupCalls?: number;
  daemon?: { cpuSecInBatch: number; cpuSecTotal: number; peakRssMb: number; rssAtEndMb: number };
  timeline?: { minute: number; admitted: number; submit: number; poll: number; history: number; other: number; r429: number }[];
  note?: string;
}

function byRoute(calls: CallLogEntry[]): Record<RouteGroup, number> {
  const out: Record<RouteGroup, number> = { submit: 0, poll: 0, history: 0, other: 0 };
  for (const c of calls) out[routeGroup(c.route)]++;
  return out;
}

function perOrder(counts: Record<RouteGroup, number>, orders: number): Record<RouteGroup | 'all', number> {
  const d = Math.max(orders, 1);
  const all = counts.submit + counts.poll + counts.history + counts.other;
  return { submit: round(counts.submit / d, 3), poll: round(counts.poll / d, 3), history: round(counts.history / d, 3), other: round(counts.other / d, 3), all: round(all / d, 3) };
}

function timeline(calls: CallLogEntry[], from: number): NonNullable<ContenderFigures['timeline']> {
  const rows: NonNullable<ContenderFigures['timeline']> = [];
  for (const c of calls) {
    const m = Math.floor((c.t - from) / 60_000);
    while (rows.length <= m) rows.push({ minute: rows.length, admitted: 0, submit: 0, poll: 0, history: 0, other: 0, r429: 0 });
    const r = rows[m]!;
    if (c.status === 429) r.r429++;
    if (!c.admitted) continue;
    r.admitted++;
    r[routeGroup(c.route)]++;
  }
  return rows;
}

export function daemonFigures(raw: DaemonRunRaw, s: Setting): ContenderFigures {
  const inBatch = raw.calls.filter((c) => c.t >= raw.landedAtSb - 1 && c.t <= raw.resultAtSb + 1);
  const admitted = inBatch.filter((c) => c.admitted);
  const routes = byRoute(admitted);
  // A real-world sandbox holds one manual order per account that no client placed: not ours.
  const created = raw.ledger.orders.filter((o) => o.source !== 'manual').map((o) => Date.parse(String(o.createdAt))).sort((a, b) => a - b);
  const n = created.length;
  const wallMs = raw.resultAtSb - raw.landedAtSb;
  const lowerMs = (s.rows / s.perMinute) * 60_000 + s.longestFulfilmentMs;
  const counts = raw.summary.counts as Record<string, number>;
  const finished = (counts.completed ?? 0) + (counts.cancelled ?? 0);
  // Steady rate: orders placed between the first order and the (n - B + 1)-th, over that time.
  // Counting whole windows this way is fair to a client that bursts at each window's start and to
  // one that spreads its calls evenly; both score the ceiling when every call is a new order.
  let steady: number | undefined;
  if (n > s.perMinute) steady = ((n - s.perMinute) / (created[n - s.perMinute]! - created[0]!)) * 60_000;
  const d = raw.daemon;
  return {
    label: raw.label,
    rows: s.rows,
    ordersPlaced: n,
    finished,
    counts,
    wallMin: round(wallMs / 60_000, 3),
    wallMeasuredSec: round((raw.resultAt - raw.landedAt) / 1000, 2),
    lowerBoundMin: round(lowerMs / 60_000, 3),
    wallVsLowerBound: round(wallMs / lowerMs, 3),
    ordersPerMin: round(finished / (wallMs / 60_000), 1),
    ...(steady !== undefined && { steadyOrdersPerMin: round(steady, 1), budgetEfficiency: round(steady / s.perMinute, 3) }),
    newOrderShareOfCalls: round(n / Math.max(admitted.length, 1), 3),
    ...(n > 0 && { firstOrderAfterSec: round((created[0]! - raw.landedAtSb) / 1000, 1), lastOrderAtMin: round((created[n - 1]! - raw.landedAtSb) / 60_000, 2) }),
    calls: { total: inBatch.length, admitted: admitted.length, byRoute: routes, perOrder: perOrder(routes, n) },
    rateLimited429: raw.calls.filter((c) => c.status === 429).length,
    extraSubmits: routes.submit - n,
    startupCalls: raw.calls.filter((c) => c.t < raw.landedAtSb - 1).length,
    ...(d.atLanding && d.atResult && {
      daemon: {
        cpuSecInBatch: round(d.atResult.cpuSec - d.atLanding.cpuSec, 2),
        cpuSecTotal: round(d.atResult.cpuSec, 2),
        peakRssMb: round(d.atResult.peakRssMb, 1),
        rssAtEndMb: round(d.atResult.rssMb, 1),
      },
    }),
    timeline: timeline(inBatch, raw.landedAtSb),
  };
}

export function naiveFigures(raw: NaiveRaw, s: Setting, budgetSec: number): ContenderFigures {
  const calls = raw.calls;
  const admitted = calls.filter((c) => c.admitted);
  const routes = byRoute(admitted);
  const wallMs = raw.endedAtSb - raw.startedAtSb;
  return {
    label: raw.label,
    rows: raw.finished,
    ordersPlaced: routes.submit - raw.rejected,
    finished: raw.finished,
    counts: { completed: raw.completed, cancelled: raw.cancelled, rejected: raw.rejected },
    wallMin: round(wallMs / 60_000, 3),
    wallMeasuredSec: round((raw.endedAt - raw.startedAt) / 1000, 2),
    ordersPerMin: round(raw.finished / (wallMs / 60_000), 2),
    newOrderShareOfCalls: round(routes.submit / Math.max(admitted.length, 1), 3),
    calls: { total: calls.length, admitted: admitted.length, byRoute: routes, perOrder: perOrder(routes, raw.finished) },
    rateLimited429: calls.filter((c) => c.status === 429).length,
    extraSubmits: 0,
    note: `ran for a budget of ${budgetSec} s (${round((budgetSec * s.scale) / 60, 1)} real-equivalent minutes) on the first rows of the same file; ${raw.finished} orders finished`,
  };
}

// ---------------------------------------------------------------------------------------------

const fmt = (v: unknown): string => (v === undefined || v === null ? '—' : typeof v === 'number' ? String(v) : String(v));

export function table(header: string[], rows: (string | number | undefined)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(fmt))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [line(cells[0]!), `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}
