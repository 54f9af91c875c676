/**
 * 6. Maintenance and API_ORDER_DISABLED windows, an account suspended and restored, the balance
 * running out and topped up — each in the middle of one batch. No row may fail because of
 * them, and sending must resume soon after each condition clears.
 */
import { join } from 'node:path';
import { callsOf, dataRows, eq0, info, judge, ledgerFigures, ledgerOf, makeBatch, atMost, readResultFile, sleep, startDaemon, type Scenario, waitUntil, world } from '../lib.js';

export const conditions: Scenario = {
  name: 'conditions',
  title: 'Maintenance, API_ORDER_DISABLED, suspension, balance out',
  async run(ctx) {
    const rows = ctx.quick ? 160 : 400;
    const holdMs = ctx.quick ? 2000 : 4000;
    const w = await world(ctx, { limits: '40/1s,2000/1m', sandboxArgs: ['--processing-share', '0.3', '--processing-ms', '300-1500', '--fail-share', '0'] });
    const text = makeBatch(ctx.rand, { rows, keys: 0.1 });
    w.home.drop('cond.csv', text);
    const d = startDaemon(w, ctx, { once: true });
    const phases: { name: string; start: () => Promise<void>; clear: () => Promise<void> }[] = [
      { name: 'MAINTENANCE', start: () => w.sb.admin('POST', 'faults', { maintenance: { code: 'MAINTENANCE' } }), clear: () => w.sb.admin('POST', 'faults', { maintenance: null }) },
      { name: 'API_ORDER_DISABLED', start: () => w.sb.admin('POST', 'faults', { maintenance: { code: 'API_ORDER_DISABLED' } }), clear: () => w.sb.admin('POST', 'faults', { maintenance: null }) },
      { name: 'account restricted', start: () => w.sb.admin('POST', 'account', { state: 'restricted' }), clear: () => w.sb.admin('POST', 'account', { state: 'active' }) },
      { name: 'balance ran out', start: () => w.sb.admin('POST', 'balance', { balanceUsd: 2 }), clear: () => w.sb.admin('POST', 'topup', { amountUsd: 100_000 }) },
    ];
    const cleared: { name: string; at: number }[] = [];
    for (const [i, p] of phases.entries()) {
      const threshold = Math.floor(rows * (0.12 + 0.18 * i));
      await waitUntil(`${threshold} orders before ${p.name}`, async () => (await ledgerOf(w.sb)).orders.length >= threshold, 90_000, 50);
      await p.start();
      await sleep(holdMs);
      await p.clear();
      cleared.push({ name: p.name, at: Date.now() });
      ctx.log(`${p.name}: held ${holdMs} ms, cleared`);
    }
    const r = await Promise.race([d.exited, sleep(180_000).then(() => null)]);
    if (r === null) throw new Error('daemon did not finish');
    const calls = (await callsOf(w.sb)).filter((c) => c.route === 'POST /orders').sort((a, b) => a.t - b.t);
    const resume = cleared.map((c) => {
      const next = calls.find((x) => x.t >= c.at && x.status === 200);
      return { name: c.name, ms: next ? next.t - c.at : Infinity };
    });
    const results = readResultFile(join(w.home.outbox, 'cond.result.csv'));
    const failed = results.filter((x) => x.status !== 'completed' && x.status !== 'cancelled').length;
    const v = judge(join(w.home.outbox, 'cond.result.csv'), dataRows(text), await ledgerOf(w.sb));
    return [
      info('rows', v.inputRows),
      eq0('rows failed because of the conditions', failed),
      ...resume.map((x) => atMost(`time to resume after ${x.name} cleared (ms)`, x.ms, 5000)),
      ...ledgerFigures(v),
    ];
  },
};
