/**
 * 7. Resubmit ambiguity. The daemon is killed right after answers arrive (nothing of them
 * stored), with 30 % of answers lost and 15 % of submits answered 5xx before anything is
 * created; while it is down the pack is switched off. The sandbox validates before it looks
 * at the trxid, so every resend is refused with 400 PRODUCT_DISABLED — some of those rows were
 * charged by the first attempt, some were not. Each must be reconciled against GET /history
 * before it is reported `rejected`; undecidable rows go to `review`.
 */
import { join } from 'node:path';
import { dataRows, eq0, expireDeadLeases, info, judge, ledgerOf, makeBatch, runOnce, sleep, startDaemon, storeRows, type Scenario, world } from '../lib.js';

export const resubmit: Scenario = {
  name: 'resubmit',
  title: 'Resubmit ambiguity (400 after a lost answer)',
  async run(ctx) {
    const rows = ctx.quick ? 60 : 200;
    const w = await world(ctx, { limits: '40/1s,2000/1m', sandboxArgs: ['--processing-share', '0.3', '--processing-ms', '300-1200', '--fail-share', '0'], env: { TOPUP_REQUEST_TIMEOUT_MS: '1000' } });
    await w.sb.admin('POST', 'faults', { validateBeforeIdempotency: true, lostResponseShare: 0.3, error5xxBeforeShare: 0.15 });
    const text = makeBatch(ctx.rand, { rows, topupPids: ['PUBG-60'] }).replace(/^ML-86,(\d+),\d+,/gm, 'PUBG-60,$1,,');
    w.home.drop('amb.csv', text);
    const n = 15 + Math.floor(ctx.rand() * 15);
    const d = startDaemon(w, ctx, { once: true, env: { TOPUP_CRASH_AT: `response-received:${n}` } });
    const r = await Promise.race([d.exited, sleep(60_000).then(() => null)]);
    if (r?.signal !== 'SIGKILL') throw new Error(`expected the crash at response-received:${n}, got ${JSON.stringify(r)}`);
    expireDeadLeases(w, d.child.pid);
    const inDoubt = storeRows(w).filter((x) => x.state === 'sending' || x.state === 'resending').map((x) => x.trxid);
    const before = await ledgerOf(w.sb);
    const chargedInDoubt = inDoubt.filter((t) => before.orders.some((o) => o.trxid === t)).length;
    await w.sb.admin('POST', 'product', { id: 'PUBG-60', status: 'inactive' });
    await w.sb.admin('POST', 'faults', { lostResponseShare: 0, error5xxBeforeShare: 0 });
    const last = await runOnce(w, ctx, 120_000);
    if (last.code !== 0) throw new Error(`daemon exited ${last.code}`);
    const ledger = await ledgerOf(w.sb);
    const v = judge(join(w.home.outbox, 'amb.result.csv'), dataRows(text), ledger);
    for (const m of v.mismatchExamples) ctx.log(m);
    return [
      info('rows in doubt at the kill (charged / not)', `${chargedInDoubt} / ${inDoubt.length - chargedInDoubt}`),
      eq0('rows wrongly reported as not charged', v.wronglyNotCharged),
      eq0('double charges', v.doubleCharges),
      eq0('rows without a final result', v.rowsWithoutResult),
      eq0('charges with no result row', v.chargesWithoutResult),
      eq0('result rows disagreeing with the ledger', v.mismatches),
      eq0('review rows the ledger shows completed', v.reviewButCompleted),
      info('rows in review (listed in the summary)', v.review),
      info('statuses', Object.entries(v.statuses).map(([k, c]) => `${k} ${c}`).join(', ')),
    ];
  },
};
