/**
 * 2. Lost responses: 20 % of order answers dropped after the order is created, 5 % answered
 * 5xx before creating it and 5 % after, 5 % answered slower than the client waits.
 * 3. Duplicate in flight: every new order's answer is slower than the client's timeout, so
 * the resend meets DUPLICATE_IN_FLIGHT until the first submit is answered.
 */
import { join } from 'node:path';
import { atLeast, callsOf, eq0, info, judge, ledgerFigures, ledgerOf, makeBatch, runOnce, storeRows, type Scenario, world, dataRows } from '../lib.js';

export const lostResponses: Scenario = {
  name: 'lost-responses',
  title: 'Lost responses, 5xx before/after, slow answers',
  async run(ctx) {
    const rows = ctx.quick ? 120 : 400;
    const w = await world(ctx, { sandboxArgs: ['--processing-share', '0.4', '--processing-ms', '300-2000', '--fail-share', '0.05'], env: { TOPUP_REQUEST_TIMEOUT_MS: '1200' } });
    await w.sb.admin('POST', 'faults', { lostResponseShare: 0.2, error5xxBeforeShare: 0.05, error5xxAfterShare: 0.05, slowShare: 0.05, slowMs: 2000 });
    const text = makeBatch(ctx.rand, { rows, failing: 0.05, keys: 0.15 });
    w.home.drop('lost.csv', text);
    const r = await runOnce(w, ctx, 240_000);
    if (r.code !== 0) throw new Error(`daemon exited ${r.code}`);
    const ledger = await ledgerOf(w.sb);
    const v = judge(join(w.home.outbox, 'lost.result.csv'), dataRows(text), ledger);
    for (const m of v.mismatchExamples) ctx.log(m);
    const attempts = storeRows(w).filter((x) => x.trxid !== null).map((x) => x.attempts);
    const mean = attempts.reduce((a, b) => a + b, 0) / Math.max(1, attempts.length);
    const calls = await callsOf(w.sb);
    return [
      info('rows', v.inputRows),
      info('submit answers lost / 5xx (sandbox)', `${calls.filter((c) => c.route === 'POST /orders' && c.status === 0).length} / ${calls.filter((c) => c.route === 'POST /orders' && c.status >= 500).length}`),
      ...ledgerFigures(v),
      atLeast('result order ids matching the ledger', Math.round(v.matchedShare * 1000) / 10, 100, ' %'),
      eq0('rows reported not charged that were charged', v.wronglyNotCharged),
      info('calls per row (mean)', Math.round(mean * 100) / 100),
      info('calls per row (max)', Math.max(0, ...attempts)),
    ];
  },
};

export const duplicateInFlight: Scenario = {
  name: 'duplicate-in-flight',
  title: 'Duplicate in flight (answers slower than the client waits)',
  async run(ctx) {
    const rows = ctx.quick ? 24 : 80;
    const w = await world(ctx, { sandboxArgs: ['--processing-share', '0.3', '--processing-ms', '300-1000', '--fail-share', '0'], env: { TOPUP_REQUEST_TIMEOUT_MS: '800' } });
    await w.sb.admin('POST', 'faults', { slowShare: 1, slowMs: 2500 });
    const text = makeBatch(ctx.rand, { rows, keys: 0.2 });
    w.home.drop('dup.csv', text);
    const r = await runOnce(w, ctx, 240_000);
    if (r.code !== 0) throw new Error(`daemon exited ${r.code}`);
    const ledger = await ledgerOf(w.sb);
    const v = judge(join(w.home.outbox, 'dup.result.csv'), dataRows(text), ledger);
    const { readResultFile } = await import('../lib.js');
    const failedDup = readResultFile(join(w.home.outbox, 'dup.result.csv')).filter((x) => x.status !== 'completed' && x.status !== 'cancelled' && /DUPLICATE/i.test(x.error ?? '')).length;
    const notPlaced = readResultFile(join(w.home.outbox, 'dup.result.csv')).filter((x) => x.status !== 'completed' && x.status !== 'cancelled').length;
    const calls = await callsOf(w.sb);
    return [
      info('rows', v.inputRows),
      info('429 DUPLICATE_IN_FLIGHT answers', calls.filter((c) => c.route === 'POST /orders' && c.status === 429).length),
      eq0('rows failed because of DUPLICATE_IN_FLIGHT', failedDup),
      eq0('rows not placed', notPlaced),
      ...ledgerFigures(v),
    ];
  },
};
