/**
 * 13. Takeover (issue 32 item 5, docs/standby.md): a warm standby on Litestream finishes what a
 * dead primary started.
 *
 * The primary home runs `topup daemon` with TOPUP_REPLICA (Litestream as its child, replicating the
 * store to a folder) and works through a batch held to a slow rate. Mid-batch the primary daemon
 * and its litestream are killed with SIGKILL at the same instant (a machine that dies). A second
 * home on the same machine runs `topup takeover --from <replica>` (the fence moves to it, the store
 * is restored from the replica) and `topup daemon --once`, which reconciles first and finishes the
 * batch. Then the old primary is started again, with a new file in its inbox: the fence must stop
 * it before it sends anything.
 *
 * Judged against the sandbox's own ledger: 0 bought twice, 0 rows without a final result (the
 * standby's result file reports every row), and:
 *  - recovery point: the store changes lost, in seconds: the newest row change in the dead
 *    primary's store (still on this disk) minus the newest in the restored store, when the
 *    restored store lacks any row change the primary had (else 0); target ≤ 1 s;
 *  - recovery time: from the kill to the first POST /orders the sandbox receives from the
 *    standby (the first after the takeover command finished: a request the dead primary had on
 *    the wire may arrive after the kill); target ≤ 60 s (the takeover command and the daemon's
 *    start and reconcile included).
 * Bounded: every wait has a timeout, every process is killed at the end.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, tempHome } from '../../test/e2e/harness.js';
import { registerIdentity } from '../../src/kernel/identity.js';
import {
  atMost, callsOf, dataRows, eq0, info, integrityCheck, judge, ledgerFigures, ledgerOf, makeBatch, resultFiles, runOnce, sleep, startDaemon, tail, waitUntil, world,
  type Figure, type Scenario, type World,
} from '../lib.js';
import { spawn } from 'node:child_process';

/** The newest row change a store holds, and each row's (state, updated_at). */
function storeFacts(dbPath: string): { newest: number; rows: Map<string, string> } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  registerIdentity(db);
  try {
    const rows = db.prepare('SELECT batch_id, idx, state, updated_at FROM rows').all() as { batch_id: string; idx: number; state: string; updated_at: number }[];
    let newest = 0;
    const byKey = new Map<string, string>();
    for (const r of rows) {
      newest = Math.max(newest, r.updated_at);
      byKey.set(`${r.batch_id}:${r.idx}`, `${r.state}@${r.updated_at}`);
    }
    return { newest, rows: byKey };
  } finally {
    db.close();
  }
}

function cli(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`topup ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${out.slice(-2000)}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

export const takeover: Scenario = {
  name: 'takeover',
  title: 'Takeover: primary killed mid-batch, a standby restored from the Litestream replica finishes',
  async run(ctx) {
    const rows = ctx.quick ? 150 : 400;
    const replica = mkdtempSync(join(tmpdir(), 'topup-replica-'));
    ctx.defer(() => rmSync(replica, { recursive: true, force: true }));
    // The binary: the package's, or TOPUP_LITESTREAM_BIN handed through (standby/litestream.ts).
    const bin = process.env.TOPUP_LITESTREAM_BIN ? { TOPUP_LITESTREAM_BIN: process.env.TOPUP_LITESTREAM_BIN } : {};
    // 40 orders a second: the batch takes several seconds, so the kill lands mid-batch.
    const w = await world(ctx, { limits: '40/1s,2400/1m', env: { TOPUP_REPLICA: replica, ...bin } });
    const standbyHome = tempHome('topup-standby-');
    if (process.env.TORTURE_KEEP === '1') ctx.log(`standby home kept: ${standbyHome.dir}`);
    else ctx.defer(() => standbyHome.remove());
    const standby: World = {
      ...w,
      home: standbyHome,
      logFile: join(standbyHome.dir, 'daemon.log'),
      env: (extra = {}) => ({ ...w.env(), TOPUP_HOME: standbyHome.dir, ...extra }),
    };

    const text = makeBatch(ctx.rand, { rows, keys: 0.1 });
    w.home.drop('standby.csv', text);
    const primary = startDaemon(w, ctx);
    const killAfter = Math.floor(rows * (0.3 + ctx.rand() * 0.3));
    await waitUntil(`${killAfter} orders bought by the primary`, async () => (await ledgerOf(w.sb)).orders.length >= killAfter, 90_000, 50);
    // The machine dies: the daemon and its litestream at the same instant.
    const lsPid = Number(readFileSync(join(w.home.dir, '.topup-litestream.pid'), 'utf8').trim());
    const killAt = Date.now();
    primary.child.kill('SIGKILL');
    try {
      process.kill(lsPid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await primary.exited;
    const boughtAtKill = (await ledgerOf(w.sb)).orders.length;
    ctx.log(`killed the primary after ${boughtAtKill} of ${rows} orders`);

    const took = await cli(['takeover', '--from', replica, '--json'], standby.env(), 60_000);
    if (took.code !== 0) throw new Error(`topup takeover exited ${took.code}:\n${took.out.slice(-3000)}`);
    const outcome = JSON.parse(took.out.slice(took.out.indexOf('{'))) as { restoreMs: number; open: number; fence: { epoch: number } | null };
    const takeoverDoneAt = Date.now();

    // Recovery point: what the restored store lacks of the dead primary's.
    const before = storeFacts(join(w.home.jobs, 'topup.db'));
    const after = storeFacts(join(standbyHome.jobs, 'topup.db'));
    let behind = 0;
    for (const [k, v] of before.rows) if (after.rows.get(k) !== v) behind++;
    const rpoS = behind === 0 ? 0 : Math.max(0, before.newest - after.newest) / 1000;
    const integrity = integrityCheck(join(standbyHome.jobs, 'topup.db'));

    const r = await runOnce(standby, ctx, 180_000);
    if (r.code !== 0) throw new Error(`the standby's daemon --once exited ${r.code}; log tail:\n${tail(standby.logFile, 40)}`);
    const calls = await callsOf(w.sb);
    // The standby cannot send before its takeover is done; a request the primary had on the wire
    // when it died can reach the sandbox after the kill, so the kill is not the bound to look from.
    const firstSend = calls.find((c) => c.method === 'POST' && c.route === 'POST /orders' && c.t > takeoverDoneAt);
    const rtoS = firstSend ? (firstSend.t - killAt) / 1000 : Number.NaN;

    // The old primary comes back with new work: the fence must stop it before any send.
    const ledgerBefore = (await ledgerOf(w.sb)).orders.length;
    w.home.drop('after-takeover.csv', makeBatch(ctx.rand, { rows: 5 }));
    const back = await runOnce(w, ctx, 60_000);
    const ledgerAfter = (await ledgerOf(w.sb)).orders.length;
    const fencedLog = tail(w.logFile, 20);

    const ledger = await ledgerOf(w.sb);
    const results = resultFiles(standbyHome).filter((p) => p.includes('standby'));
    const v = judge(results.length === 1 ? [{ path: results[0]!, inputRows: dataRows(text) }] : [{ path: null, inputRows: dataRows(text) }], 0, ledger);
    const figures: Figure[] = [
      info('rows', rows),
      info('orders bought by the primary before the kill', boughtAtKill),
      info('rows the restored store had to look up', outcome.open),
      info('litestream restore (ms)', outcome.restoreMs),
      info('kill → takeover done (s)', Math.round((takeoverDoneAt - killAt) / 100) / 10),
      info('row changes the restored store lacked', behind),
      ...ledgerFigures(v),
      eq0('integrity_check failures of the restored store', integrity === 'ok' ? 0 : 1),
      atMost('recovery point: seconds of store changes lost', Math.round(rpoS * 1000) / 1000, 1, ' s'),
      atMost('recovery time: kill → first send on the standby (s)', Number.isNaN(rtoS) ? 999 : Math.round(rtoS * 10) / 10, 60, ' s'),
      eq0('sends by the old primary after the takeover', ledgerAfter - ledgerBefore),
      eq0('old primary not stopped by the fence (exit ≠ 5)', back.code === 5 && /taken over/.test(fencedLog) ? 0 : 1),
    ];
    if (!existsSync(join(standbyHome.jobs, 'topup.db'))) throw new Error('the standby has no store');
    await sleep(0);
    return figures;
  },
};
