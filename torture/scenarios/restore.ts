/**
 * 13. Restore (issue 32 item 5): a batch and a stream of API orders, with backups every two
 * seconds (`topup backup` beside the running daemon, as the schedule takes them); a SIGKILL; a
 * backup restored (`topup restore`) — round one the OLDEST of that round's copies, then
 * successively newer ones, so the copies restored are of different ages; the same file dropped
 * again and every shop order that got no answer sent again; the daemon restarted (the
 * reconcile-first start) and run until every row and order has ended. Three rounds (quick: three
 * as well, with fewer rows), each with its own file and orders, on the same home.
 *
 * Judged against the sandbox's ledger and the store: no trxid bought twice (any letter case);
 * every file row and every order the shop got a 202/200 for is in the store exactly once, at an
 * end, and bought exactly when the store says so; every file row reported in a result file; rows
 * needing a person counted (listed in the log); integrity_check of every restored store.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { registerIdentity, foldTrxid } from '../../src/kernel/identity.js';
import { runCli } from '../../test/e2e/harness.js';
import {
  atLeast, eq0, info, integrityCheck, ledgerOf, sleep, startDaemon, waitUntil, world,
  type Daemon, type Figure, type Scenario, type ScenarioCtx, type World,
} from '../lib.js';

const TOKEN = 'torture-restore-token-0123456789abcdef';
const FINAL_ROW = ['completed', 'cancelled', 'rejected', 'invalid', 'skipped', 'review'];

interface StoreRow { batch_id: string; state: string; trxid: string | null; api: number; batch_state: string }

function storeRows(w: World): StoreRow[] {
  const db = new Database(join(w.home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  registerIdentity(db);
  try {
    return db.prepare(`SELECT r.batch_id, r.state, r.trxid, r.api_body_hash IS NOT NULL AS api, b.state AS batch_state
      FROM rows r JOIN batches b ON b.id = r.batch_id`).all() as StoreRow[];
  } finally {
    db.close();
  }
}

function consoleUrl(log: string, from: number): string | undefined {
  if (!existsSync(log)) return undefined;
  return /console: open (http:\/\/[^\s"]+\/) in a browser/.exec(readFileSync(log, 'utf8').slice(from))?.[1]?.replace(/\/$/, '');
}

async function post(url: string, body: Record<string, unknown>): Promise<number | null> {
  try {
    const res = await fetch(`${url}/api/v1/orders`, {
      method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(3_000),
    });
    await res.text();
    return res.status;
  } catch {
    return null; // no answer: the daemon was killed under it, or it timed out
  }
}

async function started(w: World, ctx: ScenarioCtx): Promise<{ d: Daemon; url: string }> {
  const from = existsSync(w.logFile) ? readFileSync(w.logFile, 'utf8').length : 0;
  const d = startDaemon(w, ctx);
  let url: string | undefined;
  await waitUntil('the daemon console', () => (url = consoleUrl(w.logFile, from)) !== undefined, 30_000, 50);
  return { d, url: url! };
}

function fileOf(round: number, rows: number): { text: string; trxids: string[] } {
  const trxids = Array.from({ length: rows }, (_, i) => `R${round}-F${String(i).padStart(3, '0')}`);
  const lines = ['pid,userId,trxid', ...trxids.map((t, i) => `PUBG-60,${5_100_000_000 + round * 1000 + i},${t}`)];
  return { text: `${lines.join('\n')}\n`, trxids };
}

export const restore: Scenario = {
  name: 'restore',
  title: 'backups under load, SIGKILL, an older copy restored, files re-dropped, shop orders resent (x3)',
  async run(ctx) {
    const rounds = 3;
    const fileRows = ctx.quick ? 60 : 100;
    // Slow enough that the kill finds the batch and the orders half done: 10 orders a second at most.
    const w = await world(ctx, { limits: '10/1s,2000/1m', sandboxArgs: ['--processing-share', '0.3', '--processing-ms', '200-1500'], env: { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' } });
    const env = w.env();
    const backupsDir = join(w.home.dir, 'backups');
    const fileTrxids: string[] = [];
    const accepted = new Set<string>();
    let unanswered = 0;
    let resentUnanswered = 0;
    let integrityFailures = 0;
    let needsPerson = 0;
    const restoredAges: number[] = [];
    const backupMs: number[] = [];

    for (let round = 1; round <= rounds; round++) {
      const { d, url } = await started(w, ctx);
      const file = fileOf(round, fileRows);
      fileTrxids.push(...file.trxids);
      w.home.drop(`round-${round}.csv`, file.text);
      // The shop's orders: one every ~150 ms until the kill, each remembered with its answer.
      const orders: { trxid: string; body: Record<string, unknown>; status: number | null }[] = [];
      let shopping = true;
      const shop = (async () => {
        for (let i = 0; shopping; i++) {
          const body = { trxid: `R${round}-API-${String(i).padStart(3, '0')}`, pid: 'PUBG-60', userId: String(5_200_000_000 + round * 1000 + i), queue: true };
          const o = { trxid: body.trxid, body, status: null as number | null };
          orders.push(o);
          void post(url, body).then((s) => { o.status = s; });
          await sleep(150);
        }
      })();
      // Backups one after the other (a second apart, each a `topup backup` run) while both run; the kill after the third.
      const copies: { path: string; at: number }[] = [];
      for (let b = 0; b < 3; b++) {
        await sleep(1_000);
        const t0 = Date.now();
        const r = await runCli(['backup', '--to', backupsDir, '--json'], env);
        if (r.code !== 0) throw new Error(`topup backup failed: ${r.stderr}`);
        backupMs.push(Date.now() - t0);
        copies.push({ path: (JSON.parse(r.stdout) as { path: string }).path, at: Date.now() });
      }
      await sleep(700);
      await d.kill();
      shopping = false;
      await shop;
      await sleep(300);
      // Round 1 restores the oldest copy of the round, round 2 the second, round 3 the third.
      const pick = copies[round - 1]!;
      restoredAges.push(Math.round((Date.now() - pick.at) / 100) / 10);
      const r = await runCli(['restore', pick.path], env);
      if (r.code !== 0) throw new Error(`topup restore failed: ${r.stderr}${r.stdout}`);
      if (integrityCheck(join(w.home.jobs, 'topup.db')) !== 'ok') integrityFailures++;
      for (const o of orders) if (o.status === 202 || o.status === 200) accepted.add(o.trxid);
      const lost = orders.filter((o) => o.status === null);
      unanswered += lost.length;

      // Restarted: the same file dropped again, the unanswered orders sent again.
      const again = await started(w, ctx);
      w.home.drop(`round-${round}.csv`, file.text);
      for (const o of lost) {
        const s = await post(again.url, o.body);
        if (s === 202 || s === 200) {
          accepted.add(o.trxid);
          resentUnanswered++;
        } else ctx.log(`resent ${o.trxid}: ${s}`);
      }
      await waitUntil(`round ${round}: every row and order at an end`, () => {
        const rows = storeRows(w);
        return rows.length > 0 && rows.every((x) => FINAL_ROW.includes(x.state)) && rows.filter((x) => x.api === 0 && x.batch_state !== 'duplicate').length >= fileTrxids.length;
      }, 120_000, 250);
      const report = readdirSync(join(w.home.outbox, 'reports')).filter((f) => f.startsWith('restore-')).sort().pop();
      if (report) {
        const rep = JSON.parse(readFileSync(join(w.home.outbox, 'reports', report), 'utf8')) as { needsPerson: { trxid: string | null; why: string }[]; settled: unknown[]; lookedUp: number; apiOrders: { recovered: string[] } | null };
        needsPerson += rep.needsPerson.length;
        for (const p of rep.needsPerson) ctx.log(`round ${round}: needs a person: ${p.trxid ?? ''} ${p.why}`);
        ctx.log(`round ${round}: restored a copy ${restoredAges[round - 1]} s old; looked up ${rep.lookedUp}, settled ${rep.settled.length}, API orders recovered from the journal ${rep.apiOrders?.recovered.length ?? 0}`);
      }
      await again.d.kill();
    }

    // The verdict.
    const ledger = await ledgerOf(w.sb);
    const byFold = new Map<string, number>();
    // A real-world supplier also holds an order placed on its website (no trxid): no row of ours is it.
    for (const o of ledger.orders) if (o.source !== 'manual') byFold.set(foldTrxid(o.trxid), (byFold.get(foldTrxid(o.trxid)) ?? 0) + 1);
    const boughtTwice = [...byFold.values()].filter((n) => n > 1).length;
    const rows = storeRows(w).filter((x) => x.batch_state !== 'duplicate');
    const inStore = new Map<string, StoreRow[]>();
    for (const x of rows) if (x.trxid !== null) inStore.set(foldTrxid(x.trxid), [...(inStore.get(foldTrxid(x.trxid)) ?? []), x]);
    const expected = [...fileTrxids, ...accepted];
    const notOnce = expected.filter((t) => (inStore.get(foldTrxid(t))?.length ?? 0) !== 1);
    const notEnded = expected.filter((t) => !FINAL_ROW.includes(inStore.get(foldTrxid(t))?.[0]?.state ?? ''));
    // Bought exactly when the store says completed (or cancelled after an order): the ledger and the store agree.
    const disagree = expected.filter((t) => {
      const st = inStore.get(foldTrxid(t))?.[0]?.state;
      const bought = byFold.has(foldTrxid(t));
      return st === 'completed' ? !bought : st === 'rejected' || st === 'invalid' || st === 'skipped' ? bought : false;
    });
    const boughtUnknown = [...byFold.keys()].filter((t) => !inStore.has(t)).length;
    // Every file row in a result file (outbox/*.result.csv).
    const results = readdirSync(w.home.outbox).filter((f) => f.endsWith('.result.csv')).map((f) => readFileSync(join(w.home.outbox, f), 'utf8')).join('\n');
    const unreported = fileTrxids.filter((t) => !results.includes(`,${t},`) && !results.includes(`,${t}\n`) && !results.includes(`${t},`)).length;
    for (const t of [...notOnce, ...notEnded, ...disagree].slice(0, 10)) ctx.log(`not as expected: ${t}: ${JSON.stringify(inStore.get(foldTrxid(t)) ?? null)} ledger ${byFold.get(foldTrxid(t)) ?? 0}`);
    const figures: Figure[] = [
      info('restores (copies of different ages, s)', restoredAges.join(', ')),
      atLeast('restores', restoredAges.length, 3),
      info('file rows / orders accepted (202/200)', `${fileTrxids.length} / ${accepted.size}`),
      info('shop orders unanswered at a kill, resent', `${unanswered} / ${resentUnanswered}`),
      eq0('trxids bought twice (ledger)', boughtTwice),
      eq0('file rows and accepted orders not in the store exactly once', notOnce.length),
      eq0('file rows and accepted orders not at an end', notEnded.length),
      eq0('store and ledger disagree', disagree.length),
      eq0('ledger orders the store does not know', boughtUnknown),
      eq0('file rows in no result file', unreported),
      eq0('integrity_check failures of a restored store', integrityFailures),
      info('rows needing a person (restore reports)', needsPerson),
      info('topup backup under load, longest run (ms, with the CLI start)', Math.max(...backupMs)),
    ];
    return figures;
  },
};
