/**
 * 4. Rate compliance: the sandbox enforces the sliding windows on every call while losing 20 %
 * of order answers. Full run: the real limits (40/1s, 200/1m). Quick run: the same counts
 * over windows a quarter as long (40/250ms, 200/15s) on both sides, so the minute window is
 * reached in seconds.
 * 5. Retry-After: a 429 with Retry-After in seconds, then one with an HTTP date; no call may
 * arrive before it runs out.
 */
import { join } from 'node:path';
import { startProxy } from './swallow.js';
import { atMost, callsOf, dataRows, eq0, info, judge, ledgerFigures, ledgerOf, makeBatch, runOnce, sleep, startDaemon, type Scenario, waitUntil, world } from '../lib.js';

interface RateStats {
  worstPerWindow: { windowMs: number; limit: number; worstAdmitted: number; worstArrivals: number }[];
  rateLimited: number;
  earlyAfterForced: { t: number; route: string; msEarly: number }[];
}

export const rateCompliance: Scenario = {
  name: 'rate',
  title: 'Rate compliance with 20 % lost answers',
  async run(ctx) {
    const limits = ctx.quick ? '40/250ms,200/15s' : '40/1s,200/1m';
    const rows = ctx.quick ? 200 : 400;
    const w = await world(ctx, {
      limits,
      sandboxArgs: ['--processing-share', '0.3', '--processing-ms', '300-1500', '--fail-share', '0.05'],
      env: { TOPUP_RATE_MARGIN_MS: '100', TOPUP_POLL_INTERVAL_MS: ctx.quick ? '750' : '3000' },
    });
    await w.sb.admin('POST', 'faults', { lostResponseShare: 0.2 });
    const text = makeBatch(ctx.rand, { rows, keys: 0.1 });
    w.home.drop('rate.csv', text);
    const r = await runOnce(w, ctx, ctx.quick ? 150_000 : 600_000);
    if (r.code !== 0) throw new Error(`daemon exited ${r.code}`);
    const stats = (await w.sb.admin('GET', 'rate-stats')) as RateStats;
    const calls = (await callsOf(w.sb)).sort((a, b) => a.t - b.t);
    const v = judge(join(w.home.outbox, 'rate.result.csv'), dataRows(text), await ledgerOf(w.sb));
    // Throughput while there was still something to send: first call → last submit.
    const first = calls[0]!.t;
    const lastSubmit = [...calls].reverse().find((c) => c.route === 'POST /orders')!.t;
    const busy = calls.filter((c) => c.t <= lastSubmit).length;
    const span = lastSubmit - first;
    const ceiling = Math.min(...stats.worstPerWindow.map((x) => x.limit * (Math.floor(span / x.windowMs) + 1)));
    const label = (ms: number) => (ms >= 60_000 ? `${ms / 60_000} min` : ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`);
    return [
      info('limits (both sides)', limits),
      info('rows / calls', `${v.inputRows} / ${calls.length}`),
      ...stats.worstPerWindow.map((x) => atMost(`worst calls in any rolling ${label(x.windowMs)} (sandbox)`, Math.max(x.worstAdmitted, x.worstArrivals), x.limit)),
      eq0('429 RATE_LIMIT received', stats.rateLimited),
      info('throughput while sending, share of the ceiling', `${Math.round((busy / ceiling) * 100)} %`),
      ...ledgerFigures(v),
    ];
  },
};

export const retryAfter: Scenario = {
  name: 'retry-after',
  title: 'Retry-After in seconds and as an HTTP date',
  async run(ctx) {
    const rows = ctx.quick ? 80 : 200;
    const base = await world(ctx, { limits: '40/1s,2000/1m', sandboxArgs: ['--processing-share', '0.3', '--processing-ms', '300-1500'] });
    // A pass-through proxy sees the wire: when each 429 reached the client, when each request left it.
    const proxy = await startProxy(base.sb.url);
    ctx.defer(() => proxy.close());
    const holds: { format: string; deliveredAt: number; until: number }[] = [];
    const arrivals: { method: string; url: string; t: number }[] = [];
    let format = 'seconds';
    proxy.onRequest = (method, url, t) => arrivals.push({ method, url, t });
    proxy.onAnswer = (status, headers, t) => {
      const ra = headers['retry-after'];
      if (status !== 429 || typeof ra !== 'string') return;
      // The deadline the header states: seconds from now, or the HTTP date itself.
      const until = /^\d+$/.test(ra) ? t + Number(ra) * 1000 : Date.parse(ra);
      holds.push({ format, deliveredAt: t, until });
    };
    const w = { ...base, env: (extra: NodeJS.ProcessEnv = {}) => base.env({ TOPUP_API_URL: proxy.url, ...extra }) };
    const text = makeBatch(ctx.rand, { rows, keys: 0.1 });
    w.home.drop('ra.csv', text);
    const d = startDaemon(w, ctx, { once: true });
    for (const [i, f] of (['seconds', 'http-date'] as const).entries()) {
      const threshold = Math.floor(rows * (0.2 + 0.35 * i));
      await waitUntil(`${threshold} orders`, async () => (await ledgerOf(w.sb)).orders.length >= threshold, 60_000, 50);
      format = f;
      const before = holds.length;
      await w.sb.admin('POST', 'faults', { forceRateLimit: { remaining: 1, retryAfterSec: 2, format: f } });
      await waitUntil('the forced 429', () => holds.length > before, 30_000, 20);
    }
    const r = await Promise.race([d.exited, sleep(180_000).then(() => null)]);
    if (r === null) throw new Error('daemon did not finish');
    const stats = (await w.sb.admin('GET', 'rate-stats')) as RateStats;
    // Calls that left the client after the 429 reached it and before the stated deadline.
    // GRACE covers a request already written to the socket while the 429 was being delivered.
    const GRACE = 5;
    const early = (f: string) => holds.filter((h) => h.format === f).flatMap((h) => arrivals.filter((a) => a.t > h.deliveredAt + GRACE && a.t < h.until));
    const inFlight = (f: string) => holds.filter((h) => h.format === f).flatMap((h) => arrivals.filter((a) => a.t >= h.deliveredAt - 1 && a.t <= h.deliveredAt + GRACE && a.t < h.until)).length;
    const sec = early('seconds');
    const date = early('http-date');
    for (const [f, list] of [['seconds', sec], ['http-date', date]] as const) {
      const h = holds.find((x) => x.format === f);
      for (const e of list.slice(0, 5)) ctx.log(`${f}: ${e.method} ${e.url} left ${e.t - h!.deliveredAt} ms after the 429 reached the client, ${h!.until - e.t} ms before the stated deadline`);
    }
    const v = judge(join(w.home.outbox, 'ra.result.csv'), dataRows(text), await ledgerOf(w.sb));
    return [
      eq0('calls sent before Retry-After (seconds) expired', sec.length),
      eq0('calls sent before Retry-After (HTTP date) expired', date.length),
      info('calls already leaving as the 429 arrived (≤ 5 ms)', inFlight('seconds') + inFlight('http-date')),
      info('sandbox view: calls before its ms-exact deadline', stats.earlyAfterForced.length),
      ...ledgerFigures(v),
    ];
  },
};
