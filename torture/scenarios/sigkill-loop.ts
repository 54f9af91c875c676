/**
 * 1. SIGKILL loop: ≥ 50 kills at random instants during a 500-row batch (top-ups that stay
 * `processing` for a while, game keys with codes, failures with refunds), then targeted kills
 * at the crash points: right after the send intent is committed, right after the answer
 * arrives (the request has left and come back; nothing of it is stored), and right before the
 * final result is committed. After every kill: PRAGMA integrity_check. At the end, every row's
 * result is compared with the sandbox ledger.
 */
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import {
  atMost, callsOf, dataRows, eq0, expireDeadLeases, info, integrityCheck, judge, ledgerOf, makeBatch,
  runOnce, sleep, storeRows, type World, startDaemon, type Figure, type Scenario, type ScenarioCtx, world,
} from '../lib.js';

export interface KillLoopOptions {
  rows: number;
  kills: number;
  /** Random instants are drawn in [minMs, maxMs) after the daemon starts. */
  minMs: number;
  maxMs: number;
  targeted: string[];
}

export async function killLoop(ctx: ScenarioCtx, o: KillLoopOptions): Promise<{ figures: Figure[]; integrityFailures: number; kills: number }> {
  const w = await world(ctx, { limits: '40/1s,2000/1m', sandboxArgs: ['--processing-share', '0.5', '--processing-ms', '300-2500', '--fail-share', '0.05'] });
  const text = makeBatch(ctx.rand, { rows: o.rows, failing: 0.08, keys: 0.12, invalid: 0.03 });
  w.home.drop('batch.csv', text);
  let kills = 0;
  let integrityFailures = 0;
  let finishedEarly = false;
  const check = () => {
    const r = integrityCheck(join(w.home.jobs, 'topup.db'));
    if (r !== 'ok') {
      integrityFailures++;
      ctx.log(`integrity_check after kill ${kills}: ${r}`);
    }
  };
  // Until `o.kills` real kills (a draw that finds the work done kills nothing and is not counted).
  for (let i = 0; kills < o.kills && i < o.kills * 3; i++) {
    const d = startDaemon(w, ctx, { once: true });
    const delay = o.minMs + Math.floor(ctx.rand() * (o.maxMs - o.minMs));
    const r = await Promise.race([d.exited, sleep(delay).then(() => null)]);
    if (r !== null) {
      // The batch finished before this kill: drop the same rows again under a new name so
      // the loop keeps killing a daemon that has work (new content → new trxids).
      finishedEarly = true;
      w.home.drop(`batch-more-${i}.csv`, makeBatch(ctx.rand, { rows: Math.ceil(o.rows / 4), failing: 0.08, keys: 0.12 }).replace(/row-/g, `m${i}-`));
      continue;
    }
    await d.kill();
    kills++;
    expireDeadLeases(w, d.child.pid);
    check();
  }
  // Targeted kills: each crash point, with a fresh batch so the point is certainly reached.
  let targetedKills = 0;
  let intentMissing = 0;
  for (const [k, point] of o.targeted.entries()) {
    // The kill's own intent: a row committed as `sending` during this run, not one left from before.
    const runStart = Date.now();
    w.home.drop(`targeted-${k}.csv`, makeBatch(ctx.rand, { rows: 20, failing: 0.1, keys: 0.1 }).replace(/row-/g, `t${k}-`));
    const d = startDaemon(w, ctx, { once: true, env: { TOPUP_CRASH_AT: point } });
    const r = await Promise.race([d.exited, sleep(30_000).then(() => null)]);
    if (r === null) await d.kill();
    if (r?.signal === 'SIGKILL') targetedKills++;
    else ctx.log(`crash point ${point} was not reached (exit ${JSON.stringify(r)})`);
    if (r?.signal === 'SIGKILL' && point.startsWith('intent-committed')) {
      // The intent must be on disk: a `sending` (or `resending`) row with its exact body and trxid.
      const sending = storeRows(w).filter(
        (x) =>
          (x.state === 'sending' || x.state === 'resending') &&
          x.trxid !== null &&
          (x.last_sent_at ?? 0) >= runStart &&
          x.request_json !== null &&
          (JSON.parse(x.request_json) as { trxid?: string }).trxid === x.trxid,
      );
      if (sending.length === 0) intentMissing++;
    }
    kills++;
    expireDeadLeases(w, d.child.pid);
    check();
  }
  const last = await runOnce(w, ctx, 180_000);
  if (last.code !== 0) throw new Error(`final daemon run exited ${last.code}`);

  const ledger = await ledgerOf(w.sb);
  const calls = await callsOf(w.sb);
  const v = judge(inputsOf(w), 0, ledger);
  for (const m of v.mismatchExamples) ctx.log(m);
  const sent = (v.statuses.completed ?? 0) + (v.statuses.cancelled ?? 0) + (v.statuses.rejected ?? 0) + (v.statuses.review ?? 0);
  const submits = calls.filter((c) => c.route === 'POST /orders').length;
  const extraPerKill = kills === 0 ? 0 : Math.round(((submits - sent) / kills) * 100) / 100;
  ctx.log(`kills ${kills} (targeted ${targetedKills}/${o.targeted.length}), rows ${v.inputRows}, submits ${submits}, sent rows ${sent}${finishedEarly ? '; the first batch finished before the last kill, so more files were dropped' : ''}`);
  const totals = { doubleCharges: v.doubleCharges, rowsWithoutResult: v.rowsWithoutResult, chargesWithoutResult: v.chargesWithoutResult, mismatches: v.mismatches, spendMismatches: v.spendMismatches, review: v.review, reviewButCompleted: v.reviewButCompleted, keyRowsMissingCodes: v.keyRowsMissingCodes, rows: v.inputRows };
  return {
    kills,
    integrityFailures,
    figures: [
      info('kills (random + targeted)', `${kills - o.targeted.length} + ${targetedKills}`),
      info('rows', totals.rows),
      eq0('double charges', totals.doubleCharges),
      eq0('rows without a final result after restart', totals.rowsWithoutResult),
      eq0('charges with no result row', totals.chargesWithoutResult),
      eq0('result rows disagreeing with the ledger', totals.mismatches),
      eq0('summaries whose spend differs from the ledger', totals.spendMismatches),
      eq0('completed key/card rows missing a delivered code', totals.keyRowsMissingCodes),
      eq0('review rows the ledger shows completed', totals.reviewButCompleted),
      eq0('targeted crash points not reached', o.targeted.length - targetedKills),
      eq0('integrity_check failures after a kill', integrityFailures),
      atMost('extra submit calls per kill', extraPerKill, 32, ' (max in flight)'),
      eq0('intent records missing after a kill at intent-committed', intentMissing),
      info('rows left in review', totals.review),
    ],
  };
}

export const TARGETED = [
  'intent-committed:1', 'intent-committed:7', 'response-received:1', 'response-received:5',
  'before-final-commit:1', 'before-final-commit:4', 'result-file-half-written:1',
];

export const sigkillLoop: Scenario = {
  name: 'sigkill',
  title: 'SIGKILL loop (random + targeted kills)',
  async run(ctx) {
    const o = ctx.quick
      ? { rows: 150, kills: 12, minMs: 350, maxMs: 1500, targeted: ['intent-committed:3', 'response-received:3', 'before-final-commit:2', 'result-file-half-written:1'] }
      : { rows: 500, kills: 55, minMs: 350, maxMs: 1800, targeted: TARGETED };
    return (await killLoop(ctx, o)).figures;
  },
};


/** Every CSV the daemon took (jobs/<batch>/<name>.csv) with its result file and row count. */
export function inputsOf(w: World): { path: string; inputRows: number }[] {
  return readdirSync(w.home.jobs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.csv'))
    .map((e) => ({ path: join(w.home.outbox, e.name.replace(/\.csv$/, '.result.csv')), inputRows: dataRows(readFileSync(join(e.parentPath, e.name), 'utf8')) }));
}
