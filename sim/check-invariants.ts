/**
 * The player checks' invariants (issue 31, the `checks` class of sim/world.ts), judged against the
 * model's checks' ledger (model.ts ModelApi.checks, checkTrxids, postedTrxids), its orders, the
 * store's player_check_calls and the batches' summaries:
 *
 * 30. no order is ever placed for a player whose check says not found (a ghost of a checked line),
 *     unless every row of that player says `sendWithoutCheck`; and a player whose rows all say so
 *     is never checked (the column means "no check", not "check and ignore");
 * 31. a check never places an order: no POST /orders carries a trxid of the check space, every
 *     check carries one, no check's trxid is any order's (in any letter case, at any account of
 *     the run), no two checks share one, and the store never holds a check's trxid on a row;
 * 32. the checks' charges appear in the money the reseller sees, to the cent: every check that
 *     reached the supplier is in player_check_calls (recorded before it left, so a kill cannot
 *     lose one: `unrecorded` counts those that are not, each a failure), one the supplier charged
 *     at that price; a check whose answer settled the player (found, not found) is one the
 *     supplier ran; a 429 or a refusal is counted at 0 (the supplier did not run it), an answer
 *     lost at the tariff (it may have run); each summary's `playerChecks` is its batch's calls and
 *     their cost.
 *
 * Kept apart from sim/invariants.ts (called from judge()).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Runtime } from '../src/runtime.js';
import type { Batch } from '../src/store/batches.js';
import type { Row } from '../src/store/rows.js';
import { outboxPaths } from '../src/outbox/paths.js';
import { CHECK_TRXID_PREFIX, trxidKey } from '../src/kernel/identity.js';
import { checkKindOf, ghostKey, type ModelApi } from './model.js';

export interface CheckWorld {
  /** TOPUP_PLAYER_CHECKS of the run. */
  lines: 'all' | 'pubg' | 'mobilelegends';
  /** ghostKey of the players whose every row says `sendWithoutCheck`. */
  overrideOnly: ReadonlySet<string>;
  /** The supplier's tariff, micros (TOPUP_PLAYER_CHECK_PRICE_USD of the run). */
  priceMicros: number;
  /** Owners (process ids) killed during the run: a check they sent may be charged and never recorded. */
  killed: ReadonlySet<string>;
}

export interface CheckCtx {
  rt: Runtime;
  rows: Row[];
  batches: Batch[];
  apis: ModelApi[];
  world: CheckWorld | undefined;
  check: (ok: boolean, message: () => string) => void;
  where: (r: Row) => string;
  /** Figures for the run's report: checks charged and never recorded (their process killed first). */
  unrecorded?: { n: number };
}

const usd = (micros: number): string => (micros / 1e6).toFixed(2);
const cents = (micros: number): number => Math.round(micros / 10_000);

export function checkPlayerChecks(c: CheckCtx): void {
  const { check, apis } = c;
  // 31 holds in every run, checks on or off: a check's trxid and an order's never meet.
  const orderTrxids = new Map<string, string>();
  for (const m of apis) for (const t of m.postedTrxids) orderTrxids.set(trxidKey(t), t);
  for (const m of apis) {
    for (const t of m.postedTrxids) check(!t.startsWith(CHECK_TRXID_PREFIX), () => `POST /orders at account ${m.account.name} carried ${JSON.stringify(t)}, a trxid of the player checks' space: a check was sent as an order (31)`);
  }
  const checkSeen = new Map<string, number>();
  for (const m of apis) {
    for (const t of m.checkTrxids) {
      check(t.startsWith(CHECK_TRXID_PREFIX), () => `a player check at account ${m.account.name} carried ${JSON.stringify(t)}, outside the checks' space (${CHECK_TRXID_PREFIX}…) (31)`);
      const k = trxidKey(t);
      const o = orderTrxids.get(k);
      check(o === undefined, () => `a player check's trxid ${JSON.stringify(t)} is also an order's (${JSON.stringify(o)}): a check and an order collide (31)`);
      checkSeen.set(k, (checkSeen.get(k) ?? 0) + 1);
    }
  }
  for (const [k, n] of checkSeen) check(n === 1, () => `${n} player checks carried the trxid ${k}: each check has a trxid of its own (31)`);
  const rowTrxids = new Set(c.rows.filter((r) => r.trxid !== null).map((r) => trxidKey(r.trxid!)));
  const calls = c.rt.db.prepare('SELECT trxid, kind, player, account, batch_id AS batchId, outcome, said, price_usd AS priceUsd FROM player_check_calls').all() as { trxid: string; kind: string; player: string; account: string; batchId: string | null; outcome: string; said: string | null; priceUsd: number }[];
  for (const call of calls) check(!rowTrxids.has(trxidKey(call.trxid)), () => `the store holds the check trxid ${call.trxid} on a row too (31)`);

  const w = c.world;
  if (!w) {
    for (const m of apis) check(m.checks.length === 0, () => `account ${m.account.name} was sent ${m.checks.length} player checks while TOPUP_PLAYER_CHECKS is off`);
    return;
  }
  const checked = (kind: 'pubg' | 'ml'): boolean => w.lines === 'all' || (w.lines === 'pubg' ? kind === 'pubg' : kind === 'ml');

  // 30. no order for a player the check says does not exist, unless its rows say send without a check.
  for (const m of apis) {
    for (const o of m.orders) {
      if (o.origin !== 'engine' || o.userId === undefined) continue;
      const kind = checkKindOf(o.pack.slug);
      if (kind === null || !checked(kind) || m.playerExists(kind, o.userId, o.zoneId)) continue;
      const key = ghostKey(kind, o.userId, o.zoneId);
      const holder = c.rows.find((r) => r.orderId !== null && r.orderId === o.orderId && r.trxid !== null && o.trxid !== null && trxidKey(r.trxid) === trxidKey(o.trxid));
      check(w.overrideOnly.has(key), () => `order ${o.orderId} at account ${m.account.name} (${usd(o.amountMicros)} USD, trxid ${o.trxid}) was placed for player ${o.userId}${o.zoneId ? ` zone ${o.zoneId}` : ''}, whom the supplier's check says does not exist, and no row of that player says sendWithoutCheck${holder ? `: ${c.where(holder)}` : ''} (30)`);
    }
    for (const ch of m.checks) {
      if (ch.player === '') continue;
      const key = ghostKey(ch.kind, ch.player, ch.zone);
      check(!w.overrideOnly.has(key), () => `a player check (${ch.trxid}) was sent for player ${ch.player} at ${(ch.at / 1000).toFixed(1)} s, whose every row says sendWithoutCheck (30)`);
    }
  }

  // 32. the checks' money, to the cent.
  const byTrxid = new Map(calls.map((x) => [x.trxid, x]));
  let unrecorded = 0;
  for (const m of apis) {
    for (const ch of m.checks) {
      if (ch.trxid === '') continue;
      const call = byTrxid.get(ch.trxid);
      // Every check that reached the supplier is recorded: the home writes its record before the
      // request leaves (store/player-checks.ts begin), so a kill after it leaves "sent", never nothing.
      if (call === undefined) {
        unrecorded++;
        check(false, () => `the player check ${ch.trxid} reached the supplier (player ${ch.player}, ${ch.answer}${ch.ran ? `, charged ${usd(ch.chargedMicros)} USD` : ''}, sent by ${ch.owner ?? '?'}${ch.owner !== undefined && w.killed.has(ch.owner) ? ', killed later' : ''}), and the home recorded it nowhere: a charge the reseller may never see (32)`);
        continue;
      }
      if (ch.ran) check(cents(Math.round(call.priceUsd * 1e6)) === cents(ch.chargedMicros), () => `the player check ${ch.trxid} is recorded at ${call.priceUsd} USD; the supplier charged ${usd(ch.chargedMicros)} USD (32)`);
      else check(!['found', 'not-found'].includes(call.outcome), () => `the player check ${ch.trxid} is recorded ${call.outcome}, an answer only a check that ran can give, while the supplier never ran it (${ch.answer}) (32)`);
      // Not run: a 429 or a refusal says so and costs nothing; an answer lost says nothing, so it may have been charged (the tariff).
      // Its answer never recorded (its sender killed after it left: `sent`, or marked in doubt for that by a later ask): the home
      // never heard the refusal, so the tariff is the safe count.
      const unheard = call.outcome === 'sent' || (call.outcome === 'in-doubt' && (call.said ?? '').startsWith('sent at '));
      const notRun = unheard ? w.priceMicros : ch.answer === 'rate-limited' || ch.answer === 'refused' ? 0 : ch.answer === 'lost' ? w.priceMicros : undefined;
      if (!ch.ran && notRun !== undefined) check(cents(Math.round(call.priceUsd * 1e6)) === cents(notRun), () => `the player check ${ch.trxid} (not run: ${ch.answer}) is recorded at ${call.priceUsd} USD, not at ${usd(notRun)} USD (32: only what may have been charged is counted)`);
    }
  }
  if (c.unrecorded) c.unrecorded.n += unrecorded;
  for (const call of calls) {
    const ran = apis.some((m) => m.checks.some((ch) => ch.trxid === call.trxid));
    check(ran || !['found', 'not-found'].includes(call.outcome), () => `the store records a player check ${call.trxid} answered ${call.outcome}, which reached no supplier (32)`);
  }
  for (const b of c.batches) {
    if (b.state !== 'done' && b.state !== 'duplicate') continue;
    const paths = outboxPaths(c.rt, b);
    if (!existsSync(paths.summaryFile)) continue;
    const s = JSON.parse(readFileSync(paths.summaryFile, 'utf8')) as { playerChecks?: { calls: number; costUsd: number; notFoundRows: number } };
    const mine = calls.filter((x) => x.batchId === b.id);
    const cost = mine.reduce((n, x) => n + Math.round(x.priceUsd * 100), 0);
    const got = s.playerChecks ?? { calls: 0, costUsd: 0, notFoundRows: 0 };
    check(got.calls === mine.length && Math.round(got.costUsd * 100) === cost, () => `batch ${b.id} (${b.sourceName}): the summary says ${got.calls} player checks costing ${got.costUsd} USD; the store recorded ${mine.length} for it costing ${cost / 100} USD (32)`);
    const nf = c.rows.filter((r) => r.batchId === b.id && r.rejectCode === 'TOPUP_PLAYER_NOT_FOUND').length;
    check(got.notFoundRows === nf, () => `batch ${b.id} (${b.sourceName}): the summary says ${got.notFoundRows} rows' players not found; the store holds ${nf} (32)`);
  }
}
