/**
 * What must hold after every simulated run, judged against the model API's ledger (the truth of
 * what was charged), the store and the result files. Each is one of the invariants of
 * src/store/invariants.ts, seen from outside:
 *
 *  1. no purchase bought twice: the orders charged (and not refunded) for one purchase of the
 *     files are never more than the times it was ordered on purpose (a drop, plus `submit --again`
 *     and `retry --repeats`);
 *  2. every charge belongs to exactly one row: an order the model made for a trxid this home sent is
 *     held by that trxid's row, or that row is in review (a person decides); never a row that says
 *     refused, pending, skipped or invalid;
 *  3. no row holds an order its sends did not make unless it says so: a row holding a foreign order
 *     (the panel's, another shop's) is flagged (its note names the replay), and never a key/card row;
 *  4. codes never on two rows, and every code on a row is its order's;
 *  5. result files = store = ledger: one result row per input line; status, order id and codes as
 *     stored; a placed row's end (completed, cancelled, refunded) as the model's;
 *  6. summary spend = ledger: the batch summary's spentUsd is what the model charged its rows;
 *  7. every row final (the run ended with no batch unfinished: a stall otherwise), and no process
 *     died of an error;
 *  8. one order, one row: no order held by two rows, whatever the letter case of its id (the
 *     unique index sees only one spelling; an operator's typed id is another);
 *  9. a batch is retried once: no two live retry batches of one batch.
 *
 * With two supplier accounts (issue 22), every check above reads the ledger of the account the
 * row is on, and four more hold against BOTH ledgers:
 *
 * 10. one purchase, one account, one charge: every order of either ledger made for a trxid of ours
 *     maps to exactly one row, by the account it was made on and its trxid (a row's trxids on the
 *     accounts it left included), and what a row holds is an order of the account it says;
 * 11. a moved row proves its move: its trxid differs from every trxid it had on the accounts it
 *     left, and none of those accounts has an order under that trxid (nothing was created there);
 * 12. a row `processing`, `unseen`, `completed` or `cancelled` has its order in the ledger of its own
 *     account (covered by 3–5, which look there and nowhere else);
 * 13. the result files show each row's account (`account`) and the accounts that refused it
 *     (`refusedBy`), and a row pinned by the file's `account` column is on that account.
 *
 * With a shop placing orders through the order API (issue 23, sim/shop.ts), against what the shop
 * was told, the store and the ledger (1 counts an API order's trxid as its purchase, in any letter
 * case: no trxid bought twice, whatever the spelling):
 *
 * 14. an acceptance answered `accepted` (202) or `same` (200) has exactly one row with that trxid
 *     (in any letter case, the trxids it left on other accounts included), an API order's, in an API
 *     batch of the day it was stored on, stored before that batch finished; it is never lost by a
 *     later crash (the store at the end has it);
 * 15. `same` answers only the body the order was stored with (its cells, read back field by field),
 *     one trxid never got `accepted`/`same` for two bodies, and the stored body sent again is never
 *     refused (409) — a shop reads a refusal of its own order as "not placed";
 * 16. every API order ended (or is in review) by the schedule's end, like a file's row; every day's
 *     API batch whose day is over (its minute of grace included) and whose orders ended is done,
 *     finished no earlier than its day's end (unless an operator cancelled it: 36), with a result
 *     file of one row per order;
 * 17. order_events of every API order: ids in order, no two equal statuses in a row, first
 *     `accepted`, last the public status of its state now, and every public status it was seen in
 *     (sampled after every event of the run) among them in the order seen: no change without its event;
 * 18. an acceptance refused (402, 409, 422, 503) stored nothing: a trxid that was only ever refused
 *     (never accepted, never left without an answer) has no API row;
 * 19. the desk answers every acceptance that reaches a living process: a stable refusal or the
 *     order, never an internal error (a 500: the shop cannot tell whether it was stored).
 * 36. a day's API batch an operator cancelled (`api-cancel`): no order is stored into it after the
 *     cancel; its unsent orders end `skipped` (public `rejected`) with TOPUP_CANCELLED, keeping the
 *     trxid the shop knows them by; and it is finished once its sent orders end,
 *     before its day is over if they end first (engine/stages/finishing.ts, docs/order-api.md).
 * 25. every money cell (amountUsd, refunded, refundedUsd, the summary's counts and lists, a
 *     batch's progress, what each row has charged): sim/money-invariants.ts.
 * 27. no row bought above its maxPriceUsd, on any account (a moved row's cap moves with it):
 *     sim/money-invariants.ts checkPriceCaps.
 *
 * With the operator's `topup run-covered` (issue 30):
 *
 * 26. a row skipped as not covered by the balance (TOPUP_NOT_COVERED) is in a batch the operator
 *     asked to run the part the balance covers, and holds no order (the word is never taken for a
 *     batch nobody asked about).
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import type { Config } from '../src/config/config.js';
import type { Runtime } from '../src/runtime.js';
import type { Row } from '../src/store/rows.js';
import { ownTrxid } from '../src/store/row-record.js';
import { CANCELLED_CODE } from '../src/store/rows.js';
import { outboxPaths } from '../src/outbox/paths.js';
import type { ModelApi, ModelOrder } from './model.js';
import type { SimRow } from './schedule.js';
import type { OrderInput } from '../src/orders/types.js';
import { publicStatus } from '../src/orders/types.js';
import { apiBatchClosesAt } from '../src/orders/api-batch.js';
import { canonicalBody } from './shop.js';
import { trxidAsGiven, trxidKey } from '../src/kernel/identity.js';
import { DERIVED_TRXID } from '../src/dispatch/order-match.js';
import { checkBalanceRefusals, checkMoneyCells, checkPriceCaps } from './money-invariants.js';
import { checkPlayerChecks, type CheckWorld } from './check-invariants.js';

/** One acceptance the shop sent (sim/shop.ts) and what it was told. */
export interface ShopAttempt {
  trxid: string;
  body: OrderInput;
  /** canonicalBody(body): the body's identity as the shop sees it. */
  canon: string;
  /** Sim ms it was sent; the daemon it went to (null: none was up). */
  at: number;
  to: string | null;
  /** The schedule's call it belongs to, and which send of its body it is (1: the first). */
  call: number;
  tries: number;
  answer:
    | { kind: 'accepted' | 'same'; batchId: string; trxid: string; status: string }
    | { kind: 'refused'; status: number; code: string }
    | { kind: 'none'; why: string }
    | { kind: 'error'; message: string }
    | null;
  cancelTimeout?: () => void;
}

export interface ShopRecord {
  attempts: ShopAttempt[];
  /** `batch:idx` of each API order → the public statuses it was seen in after each event, distinct consecutive. */
  seen: Map<string, string[]>;
  /** The schedule steps the wall clock (wall times stored around a step do not compare). */
  wallSteps: boolean;
  /** Days' API batches an operator cancelled (`api-cancel`): batch id → when (wall, and sim mono). */
  cancelled: Map<string, { wall: number; mono: number }>;
  /** The wall clock when the run ended. */
  endWall: number;
  /** How far the wall clock stepped back in all (clock-step actions): wall times stored around a step compare only within it. */
  stepsBackMs: number;
}

/** A file as it was dropped or submitted: its rows (line n is rows[n - 2]). */
export interface Drop {
  name: string;
  file: number;
  rows: SimRow[];
  /** The purchase each row is (line n is keys[n - 2]): the same in an edited copy of the file. */
  keys: string[];
  /** Ordered again on purpose (`submit --again`). */
  again: boolean;
  /** Given to `topup submit` (not dropped into the inbox); with the edit it was made with (`restore`: the operator gives it again as it was). */
  submitted?: boolean;
  edit?: string;
}

export interface Judgement {
  ok: boolean;
  violations: string[];
  figures: {
    batches: number;
    rows: number;
    placed: number;
    review: number;
    modelOrders: number;
    engineOrders: number;
    invariantsChecked: number;
    /** Rows that moved to another account (failover). */
    moved: number;
    /** Rows by final state. */
    states: Record<string, number>;
    /** API orders stored, days' API batches, those done. */
    apiRows: number;
    apiBatches: number;
    apiBatchesDone: number;
  };
}

/**
 * The account names a finished batch's rows had when its result file was written, per result
 * version (run-schedule.ts keeps them before each start that renames an account): a file handed
 * out is never rewritten, so it keeps the names it was written with (docs/accounts.md).
 */
export type WrittenAs = Map<string, { version: number; rows: Map<number, { account: string; movedFrom: string[] }> }>;

interface Ctx {
  home: string;
  config: Config;
  observer: Runtime;
  /** Every account's model API, the first account's first. */
  apis: ModelApi[];
  /** The model API of the account a row names (with its trxid: the one that trxid was sent to, whatever the account is called now). */
  apiOf: (account: string, trxid?: string | null) => ModelApi;
  /** The account name an order of a model API was sent as (config edits rename and re-point accounts). */
  accountOf?: (m: ModelApi, trxid: string | null) => string;
  /** Whether two account names in the store name one account (a rename keeps the endpoint and key). */
  sameAccount?: (a: string, b: string) => boolean;
  /** Invariant 13: the names each finished batch's rows had when its result file was written. */
  writtenAs?: WrittenAs;
  /** Batches stored while accounts.toml named one account: their `account` column pins nothing (docs/accounts.md). */
  unpinnedBatches?: ReadonlySet<string>;
  /** Every model API each trxid (in any letter case) was POSTed to (invariant 24). */
  sentTo?: Map<string, Set<ModelApi>>;
  /** Purchases another key of ours at the same supplier placed first (issue 29): charges of the purchase whose trxid they hold. */
  siblings?: { trxid: string; orderId: string; micros: number }[];
  /** Violations of invariants 20 and 21, found while the run went (run-schedule.ts samples them). */
  liveness?: string[];
  drops: Drop[];
  failures: string[];
  stall: string | null;
  /** Batches the operator asked to run the covered part of (topup run-covered). */
  runCovered?: ReadonlySet<string>;
  /** The shop's acceptances (issue 23), when the schedule has a shop. */
  shop?: ShopRecord;
  /** Invariant 37: the processes killed or stopped during the run (their answers may be unread). */
  interrupted?: ReadonlySet<string>;
  /** Invariant 37: the schedule steps the wall clock (a lease lost to a step leaves an answer unapplied). */
  clockSteps?: boolean;
  /**
   * Invariant 29: when the run ended with rows in review, the daemons ran on (run-schedule.ts
   * REVIEW_WATCH_MS); per model API (by index), the orders a reader could find the whole time:
   * `i:<id>` by id, `h:<id>` by id and in history with its trxid (ModelApi.visibleNow).
   */
  reviewWatch?: Map<string, Set<string>> | null;
  /** `late-lines`: lines the run wrote into each batch's claimed file, and the players of those lines (invariant 35). */
  lateWritten?: ReadonlyMap<string, number>;
  latePlayers?: ReadonlySet<string>;
  /** Issue 31: the run's player checks (absent: TOPUP_PLAYER_CHECKS off). */
  checkWorld?: CheckWorld;
  /** Figures: checks charged and never recorded, their sender killed first (invariant 32 counts them). */
  unrecordedChecks?: { n: number };
  /** `restore` (issue 32, sim/restore.ts): an older copy of the store was restored during the run (invariant 38). */
  restore?: RestoreJudged;
  /** Invariant 41: moves to review a process wrote while not holding the batch's lease (run-schedule.ts looks around each). */
  staleReviews?: readonly string[];
  /** Invariant 42: the operator's `topup review resolve` of each review row, and the row just after it. */
  resolves?: readonly ResolveSeen[];
}

/** One `topup review resolve` of the simulated operator (run-schedule.ts) and what it left (invariant 42). */
export interface ResolveSeen {
  batchId: string;
  line: number;
  /** `--not-charged`; `--charged` with the order the panel shows under the row's trxid; `forced`: a slip, another row's order with `--force`. */
  kind: 'not-charged' | 'charged' | 'forced';
  /** The refusal's message, or null when the command took it. */
  refused: string | null;
  stateAfter: string;
  resolvedAfter: boolean;
  /** A refused one: whether the command asked the API anything, and whether another row holds the order typed (absent: not looked at). */
  askedApi?: boolean;
  heldElsewhere?: boolean;
}

/** What invariant 38 reads of a restore (sim/restore.ts RestoreRecord, and what the home shows at the end). */
export interface RestoreJudged {
  /** Sim ms the copy was put back. */
  restoredAt: number;
  /** Per model API (by index in `apis`): orders its ledger held when the copy was taken, and when the store was restored. */
  ordersAtBackup: number[];
  ordersAtRestore: number[];
  /** The store still carries "copy, not yet reconciled" at the end. */
  pending: boolean;
  /** Restore reports written (outbox/reports/restore-*.json), and whether any names a batch folder for a person (an orphan it would not order blind). */
  reports: number;
  orphansForPerson: string[];
  /** The text of outbox/'s result files: a batch the copy lacks that finished before the restore has its orders there (claim/orphans.ts 'finished'). */
  inOutbox: string;
  /** Figures, filled by judge: orders made between the copy and the restore that no row holds, left to a person by the report. */
  leftToPerson?: number;
}

const usd = (micros: number): number => Math.round(micros / 10_000) / 100;
/** What an order cost in the end: its price, unless refunded. */
const netMicros = (o: ModelOrder): number => (o.status === 'cancelled' && o.refunded ? o.amountMicros - (o.refundMicros ?? o.amountMicros) : o.amountMicros);

export function judge(c: Ctx): Judgement {
  const v: string[] = [...c.failures];
  let checked = 0;
  const check = (ok: boolean, message: () => string): void => {
    checked++;
    if (!ok) v.push(message());
  };
  if (c.stall) v.push(`STALL: ${c.stall}`);
  // 20, 21 (and 39, 40): liveness, sampled during the run.
  for (const l of c.liveness ?? []) check(false, () => l);
  // 41. Only the lease holder moves a row to review.
  for (const l of c.staleReviews ?? []) check(false, () => l);
  // 42. A valid resolve takes effect: `--not-charged` of a row waiting for review (it reads nothing,
  // so nothing but another process settling the row first may refuse it) leaves the row resolved or
  // out of review; a `--charged` the command took leaves it resolved. docs/review.md: the row is
  // settled and its batch reopened in one transaction. A `--charged` naming the order the panel
  // shows under the row's trxid may be refused for what the API says of that order (unknown,
  // another purchase) or cannot say, or because another row holds it (docs/review.md); refused
  // without asking the API, and held by no other row, it was refused as a request (the ninth turn:
  // the operator now meets charged rows as often as the others).
  for (const r of c.resolves ?? []) {
    if (r.kind === 'forced') continue;
    const stuck = r.stateAfter === 'review' && !r.resolvedAfter;
    const unasked = r.kind === 'charged' && r.refused !== null && r.askedApi === false && r.heldElsewhere === false;
    check(!(stuck && (r.kind === 'not-charged' || r.refused === null || unasked)), () =>
      `RESOLVE TAKES EFFECT (42): the operator's topup review resolve ${r.kind === 'not-charged' ? '--not-charged' : '--charged'} of line ${r.line} of batch ${r.batchId} ${r.refused === null ? 'was taken' : `was refused ("${r.refused.slice(0, 200)}")`}, and the row is still in review, unresolved`);
  }
  const rt = c.observer;
  const two = c.apis.length > 1;
  const sameAccount = c.sameAccount ?? ((a: string, b: string) => a === b);
  const writtenNames: WrittenAs = c.writtenAs ?? new Map();
  const batches = rt.batches.list();
  const rows: Row[] = batches.flatMap((b) => [...rt.rows.iterate(b.id)]);
  /**
   * An order's place: the account it was made on and its trxid. The account is its model API (the
   * host: an endpoint and key), never its name: a config edit renames an account and the store's
   * rows follow the new name (store/account-identity.ts), while an order was sent under the old one.
   */
  const placeAt = (m: ModelApi, trxid: string): string => `${c.apis.indexOf(m)}\u0000${trxidKey(trxid)}`;
  const at = (account: string, trxid: string): string => placeAt(c.apiOf(account, trxid), trxid);
  const byTrxid = new Map(rows.filter((r) => r.trxid !== null).map((r) => [at(r.account, r.trxid!), r]));
  /** Trxids rows had on accounts they left (failover): an order there is an order for that row. */
  const left = new Map<string, Row>();
  for (const r of rows) for (const m of r.moves) left.set(at(m.from, m.trxid), r);
  const where = (r: Row): string => `row ${r.line} of batch ${r.batchId} (${batches.find((b) => b.id === r.batchId)?.sourceName}, ${two ? `account ${r.account}, ` : ''}trxid ${r.trxid}, ${r.state})`;
  const engineOrders = c.apis.flatMap((m) => m.orders.filter((x) => x.origin === 'engine').map((o) => ({ o, m, account: c.accountOf ? c.accountOf(m, o.trxid) : m.account.name })));
  /** The row an order was made for (by its account and trxid), and whether under a trxid the row left. */
  const rowOf = (o: ModelOrder, m: ModelApi): { r: Row; leftHere: boolean } | undefined => {
    if (o.trxid === null) return undefined;
    const r = byTrxid.get(placeAt(m, o.trxid));
    if (r) return { r, leftHere: false };
    const l = left.get(placeAt(m, o.trxid));
    return l ? { r: l, leftHere: true } : undefined;
  };

  // 10, 11: two accounts: each place (account, trxid) is one row's, and a row that moved left nothing behind.
  if (two) {
    // The rows that ever had each place (their trxid now, and those they left).
    const hadPlace = new Map<string, Row[]>();
    for (const r of rows) {
      const places = [...(r.trxid !== null ? [at(r.account, r.trxid)] : []), ...r.moves.map((m) => at(m.from, m.trxid))];
      for (const p of places) hadPlace.set(p, [...(hadPlace.get(p) ?? []), r]);
    }
    for (const { o, m, account } of engineOrders) {
      if (o.trxid === null) continue;
      const had = hadPlace.get(placeAt(m, o.trxid)) ?? [];
      check(had.length <= 1, () => `order ${o.orderId} at account ${account} (trxid ${o.trxid}) maps to ${had.length} rows: ${had.map(where).join(' and ')}`);
    }
    for (const r of rows) {
      for (const [i, m] of r.moves.entries()) {
        const after = [r.trxid, ...r.moves.slice(i + 1).map((x) => x.trxid)].filter((t): t is string => t !== null);
        check(after.every((t) => trxidKey(t) !== trxidKey(m.trxid)), () => `${where(r)} moved from account ${m.from} keeping its trxid ${m.trxid} (moves: ${JSON.stringify(r.moves)})`);
        // By the account, not its name: a renamed account is the account it was (sameAccount).
        check(!sameAccount(m.from, r.account) && r.moves.filter((x) => sameAccount(x.from, m.from)).length === 1, () => `${where(r)} came back to an account it left, ${m.from} (moves: ${JSON.stringify(r.moves)})`);
        // An order of the engine's only: a foreign order (the panel's, before the run) under a trxid the file reuses is not one.
        const found = c.apiOf(m.from, m.trxid).byTrxid(m.trxid);
        const there = found?.origin === 'engine' ? found : undefined;
        const taker = byTrxid.get(at(m.from, m.trxid));
        check(there === undefined, () =>
          taker
            ? `${where(r)} moved from account ${m.from} (${m.why}) leaving its trxid ${m.trxid} there; ${where(taker)} took that trxid later and bought order ${there!.orderId} (${there!.status}, ${usd(there!.amountMicros)} USD) under it at ${m.from}`
            : `${where(r)} moved from account ${m.from} (${m.why}), where order ${there!.orderId} (${there!.status}, ${usd(there!.amountMicros)} USD) had been made under its trxid ${m.trxid}: something was created on the account it left`);
      }
    }
  }

  // 2. every charge made for a trxid of ours is held by its row, or its row is in review.
  /**
   * 38 (`restore`): an order made after the copy was taken and before the restore, whose row the
   * copy lacks and nothing brought back, may be held by no row only when a restore report names a
   * batch folder it would not order blind (claim/orphans.ts: a `submit --again` or retry batch, a
   * `topup submit`, a changed file: docs/backup.md, "never sent blind") — a person was told.
   */
  const leftToPerson = (o: ModelOrder, m: ModelApi): boolean => {
    const rs = c.restore;
    if (!rs) return false;
    const i = m.orders.indexOf(o);
    const k = c.apis.indexOf(m);
    if (i < (rs.ordersAtBackup[k] ?? 0) || i >= (rs.ordersAtRestore[k] ?? 0)) return false;
    // Or recorded outside the store: its batch finished before the restore and its result file
    // (outbox/) names the order (claim/orphans.ts leaves such a folder as 'finished'). Not yet
    // counted by 1 and 38 as a charge of its purchase (docs/simulator.md, Limits).
    return rs.orphansForPerson.length > 0 || rs.inOutbox.includes(o.orderId);
  };
  /**
   * 38 (`restore`): an API order accepted again from the journal after the restore is placed anew
   * (the journal keeps its body, not the account it was on), so its row may sit on another account
   * than the one that bought it before the restore. That row in review, naming the order's account
   * as the one it could have been bought on (ops/restore-reconcile.ts: "cannot be looked up at
   * main"), holds the charge for a person as 2 asks: never sent, the operator told where to look.
   */
  const reviewNaming = (o: ModelOrder, account: string): boolean => {
    if (!c.restore || o.trxid === null) return false;
    const k = trxidKey(o.trxid);
    // Under its own trxid, or under one a move to that account gives (`<first trxid>-<account>`,
    // a number after it): a file claimed again from jobs/ after the restore has its rows back on
    // the account the file gave them, while their purchases were made after a failover.
    const mine = (r: Row): boolean => {
      const root = trxidKey(r.moves[0]?.trxid ?? r.trxid!);
      const moved = trxidKey(`${root}-${account}`);
      return k === trxidKey(r.trxid!) || (k.startsWith(moved) && /^\d*$/.test(k.slice(moved.length)));
    };
    // Its error names the account (cannot be looked up there) or the order itself (bought there
    // already, under its trxid or a moved one).
    const id = new RegExp(`(^|[^A-Za-z0-9])${o.orderId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9])`);
    const names = (r: Row): boolean => (r.error ?? '').includes(`at ${account} (`) || (r.error ?? '').includes(`, ${account} (`) || id.test(r.error ?? '');
    return rows.some((r) => r.trxid !== null && r.state === 'review' && r.resolution === null && names(r) && mine(r));
  };
  for (const { o, m, account } of engineOrders) {
    const found = rowOf(o, m);
    if (found === undefined && reviewNaming(o, account)) continue;
    if (found === undefined && leftToPerson(o, m)) {
      c.restore!.leftToPerson = (c.restore!.leftToPerson ?? 0) + 1;
      continue;
    }
    check(found !== undefined, () => `order ${o.orderId}${two ? ` at account ${account}` : ''} was made for trxid ${o.trxid}, which no row holds${c.restore ? ` (${m.orders.indexOf(o) < (c.restore.ordersAtRestore[c.apis.indexOf(m)] ?? 0) ? 'made before the restore: the restored home lost it (38)' : 'made after the restore'})` : ''}`);
    if (!found) continue;
    const r = found.r;
    // An order under a trxid the row left was already reported (11); its charge counts below (1).
    if (found.leftHere) continue;
    const held = r.orderId === o.orderId && ['processing', 'unseen', 'completed', 'cancelled'].includes(r.state);
    const inReview = r.state === 'review' && r.resolution === null;
    // Issue 29, seventh turn (`failed-record`, sim/phrases.ts): a refusal the supplier kept as a
    // failed order, cancelled at once with nothing charged, named beside `orderCreated: false`,
    // is no charge: a row refused by it may end refused holding no order (never moved: 11).
    const noCharge = o.failedRecord === true && r.orderId === null;
    check(held || inReview || noCharge || (r.state === 'review' && r.orderId === o.orderId) || (r.resolution === 'charged' && r.orderId === o.orderId), () =>
      `order ${o.orderId} (${o.status}, ${usd(o.amountMicros)} USD${o.refunded ? ', refunded' : ''}) was made for ${where(r)}, which ${r.orderId ? `holds ${r.orderId}` : 'holds no order'}: a charge read as ${r.state}`);
  }

  // 3, 4, 5 (store against ledger): what each row holds is its order's truth.
  const codeOwner = new Map<string, string>();
  for (const r of rows) {
    if (r.orderId === null) continue;
    const o = c.apiOf(r.account, r.trxid).byId(r.orderId);
    check(o !== undefined, () => {
      const elsewhere = c.apis.filter((m) => m.account.name !== r.account && m.byId(r.orderId!) !== undefined).map((m) => m.account.name);
      return `${where(r)} holds order ${r.orderId}, which the API${two ? ` of account ${r.account}` : ''} never made${elsewhere.length > 0 ? ` (account ${elsewhere.join(', ')} has an order of that id)` : ''}`;
    });
    if (!o) continue;
    if (o.origin === 'foreign') {
      check(r.note !== null && r.request?.quantity === undefined, () =>
        `${where(r)} holds order ${o.orderId}, made before the run (${o.trxid === null ? 'no trxid' : `trxid ${o.trxid}`}) and not by its sends, ${r.request?.quantity !== undefined ? 'on a key/card row' : 'without saying so'}`);
      // Issue 29: a foreign order taken for a row is the row's purchase in every field it names (an
      // order under a reused trxid for another player, zone or quantity is someone else's).
      const req = r.request as { userId?: string; zoneId?: string; quantity?: number } | null;
      const off = [
        o.userId !== undefined && req?.userId !== undefined && o.userId.trim() !== req.userId.trim() ? `player ${o.userId} (the row's ${req.userId})` : '',
        o.zoneId !== undefined && req?.zoneId !== undefined && o.zoneId.trim() !== req.zoneId.trim() ? `zone ${o.zoneId} (the row's ${req.zoneId})` : '',
      ].filter((x) => x !== '');
      check(off.length === 0, () => `${where(r)} holds order ${o.orderId}, made before the run under its trxid for another purchase: ${off.join(', ')}`);
    } else {
      check(o.trxid !== null && r.trxid !== null && trxidKey(o.trxid) === trxidKey(r.trxid), () => `${where(r)} holds order ${o.orderId}, which was made for trxid ${o.trxid}`);
    }
    if (r.state === 'completed' || r.state === 'cancelled') {
      // A completed order refunded later (issue 29) was completed when the row ended: the row may say so.
      check(o.status === r.state || (r.state === 'completed' && o.refundForm === 'after-completed'), () => `${where(r)} says ${r.state}; the API's order ${o.orderId} is ${o.status}`);
      // A refund the supplier reported is the row's; one left out, late or partial may not be known (22 judges the money).
      // A completed order reversed later is shown in full (status `refunded` or `cancelled`, `refunded` true,
      // model.ts orderBody): a row that read it cancelled read the refund with it (seed 102, found/refund-after-completed-read-cancelled).
      const stated = (o.refundForm ?? 'reported') === 'reported' || o.refundForm === 'after-completed';
      if (r.state === 'cancelled' && stated) check((r.refunded === true) === o.refunded, () => `${where(r)}: refunded ${r.refunded}, the API's order ${o.refunded}`);
      if (r.state === 'cancelled' && !stated) check(r.refunded !== true || o.refundForm === 'late', () => `${where(r)}: refunded ${r.refunded}, while the API ${o.refundForm === 'partial' ? `refunded only ${usd(o.refundMicros ?? 0)} of ${usd(o.amountMicros)} USD` : 'never said so'}`);
    }
    for (const code of r.codes) {
      check(o.codes.includes(code), () => `${where(r)} shows code ${code}, which is not its order ${o.orderId}'s`);
      const prev = codeOwner.get(code);
      check(prev === undefined, () => `code ${code} is on two rows: ${prev} and ${where(r)}`);
      codeOwner.set(code, where(r));
    }
    if (r.state === 'completed' && o.pack.card && r.codes.length === 0) {
      check(r.note?.startsWith('CODES MISSING') === true || (r.note ?? '').includes('CODES MISSING'), () => `${where(r)} completed a key/card order without codes and without saying so`);
    }
  }

  // 8. one order, one row, in any letter case (per account: two accounts may number orders alike).
  const orderHolder = new Map<string, string>();
  for (const r of rows) {
    if (r.orderId === null) continue;
    const k = `${r.account}\u0000${r.orderId.trim().toLowerCase()}`;
    const prev = orderHolder.get(k);
    check(prev === undefined, () => `order ${r.orderId} is held by two rows: ${prev} and ${where(r)}`);
    orderHolder.set(k, where(r));
  }
  // 26. run-covered: rows skipped as not covered only where the operator asked, never sent, holding nothing.
  for (const r of rows) {
    if (r.state !== 'skipped' || r.rejectCode !== 'TOPUP_NOT_COVERED') continue;
    const b = batches.find((x) => x.id === r.batchId);
    check(b !== undefined && b.runCovered && (c.runCovered === undefined || c.runCovered.has(b.id)), () => `${where(r)}: skipped as not covered, but nobody asked to run its batch's covered part`);
    check(r.orderId === null, () => `${where(r)}: skipped as not covered, yet holds order ${r.orderId}`);
  }
  // 9. a batch is retried once.
  const retries = new Map<string, string[]>();
  for (const b of batches) if (b.retryOf !== null && b.state !== 'failed') retries.set(b.retryOf, [...(retries.get(b.retryOf) ?? []), b.id]);
  for (const [of, ids] of retries) check(ids.length === 1, () => `batch ${of} was retried ${ids.length} times: ${ids.join(', ')}`);

  // 1. no purchase bought twice.
  const purchaseOf = (r: Row, depth = 0): { key: string; onPurpose: boolean } | undefined => {
    const b = batches.find((x) => x.id === r.batchId);
    if (!b || depth > 5) return undefined;
    // An API order is the purchase its trxid names (the first it had, before any move), in any letter case.
    if (b.apiDay !== null && r.trxid !== null) return { key: `api:${trxidKey((r.moves[0]?.trxid ?? r.trxid))}`, onPurpose: false };
    const retry = /\.retry-(b\d{6}-[0-9a-f]{6})\.csv$/.exec(b.sourceName);
    if (retry) {
      const col = (b.header ?? []).findIndex((h) => h === 'retryOfLine');
      const line = Number(r.cells[col]);
      const old = rt.rows.byLine(retry[1]!, line);
      const p = old ? purchaseOf(old, depth + 1) : undefined;
      // A retry of the repeats buys on purpose; an ordinary retry tries the same purchase again.
      return p && { key: p.key, onPurpose: b.retryOf === null };
    }
    const d = c.drops.find((x) => x.name === b.sourceName);
    const key = d?.keys[r.line - 2];
    if (!d || key === undefined) return undefined;
    return { key, onPurpose: d.again || b.contentHash.includes(':again:') };
  };
  // Ordered once per row a file has for it (equal rows share a key), plus once per row ordered again on purpose.
  const written = new Map<string, number>();
  for (const d of c.drops) {
    const n = new Map<string, number>();
    for (const k of d.keys) n.set(k, (n.get(k) ?? 0) + 1);
    for (const [k, m] of n) written.set(k, Math.max(written.get(k) ?? 0, m));
  }
  const intended = new Map<string, number>();
  const charged = new Map<string, ModelOrder[]>();
  const seenPurchase = new Set<string>();
  for (const r of rows) {
    const p = purchaseOf(r);
    if (!p) continue;
    if (!seenPurchase.has(p.key)) {
      seenPurchase.add(p.key);
      intended.set(p.key, written.get(p.key) ?? 1);
    }
    if (p.onPurpose && r.request !== null) intended.set(p.key, (intended.get(p.key) ?? 1) + 1);
  }
  // Both ledgers: a purchase charged on two accounts (or twice on one) is bought twice.
  for (const { o, m } of engineOrders.filter((x) => netMicros(x.o) > 0)) {
    const r = rowOf(o, m)?.r;
    const p = r ? purchaseOf(r) : undefined;
    if (!p) continue;
    charged.set(p.key, [...(charged.get(p.key) ?? []), o]);
  }
  // Issue 29: a purchase another key of ours at the same supplier placed first is charged there.
  for (const sib of c.siblings ?? []) {
    // Counted only where a send of ours met it: the supplier holding it took a trxid this home
    // sent as the sibling's, by the supplier's own comparison (ModelApi.siblingMet: it answered
    // FORBIDDEN, whether or not that answer arrived), so the home was told the trxid is held and
    // every later charge of the purchase is one too many (a row moved or bought again after it).
    // Never by this home's fold: with a supplier comparing exactly, `shop-5` sent while the sibling
    // holds `SHOP-5` is answered as a new purchase (seed 101, worker seed 103, and
    // test/sim/found/sibling-other-spelling-exact.json), the home's store holds no `SHOP-5` to
    // refuse it by, and no client of this key can see another key's orders: a purchase two homes
    // of one reseller each place under their own spelling is not a defect one home can prevent
    // (docs/simulator.md, Limits). A defect this home could prevent still counts: a `shop-5` sent
    // after its own `SHOP-5` was refused FORBIDDEN meets the sibling on that first send.
    if (!c.apis.some((m) => m.siblingMet.has(sib.orderId))) continue;
    const r = rows.find((x) => (x.trxid !== null && trxidKey(x.trxid) === trxidKey(sib.trxid)) || x.moves.some((m) => trxidKey(m.trxid) === trxidKey(sib.trxid)) || x.cells.some((cell) => trxidKey(cell) === trxidKey(sib.trxid)));
    const p = r ? purchaseOf(r) : undefined;
    if (!p) continue;
    const fake = { orderId: sib.orderId, trxid: sib.trxid } as ModelOrder;
    charged.set(p.key, [...(charged.get(p.key) ?? []), fake]);
  }
  // 38. A restore buys nothing again (issue 32, docs/backup.md): a purchase the ledgers charged
  // before the store was restored is never charged again after it beyond the times it was ordered
  // (1's count: rows written alike, and what was ordered again on purpose after it, `submit
  // --again`, `retry --repeats`); 1 across the restore, said with the charges on each side of it: a row the copy has as unsent, in flight or in
  // doubt is settled from the supplier (or sent to review), and a file dropped again after the
  // restore meets its purchases as replays or lookups, never as new charges. And the reconcile
  // finished (the copy's marker is gone) and said what it did (a report in outbox/reports/).
  if (c.restore) {
    const rs = c.restore;
    const before = (o: ModelOrder, m: ModelApi): boolean => m.orders.indexOf(o) < (rs.ordersAtRestore[c.apis.indexOf(m)] ?? 0);
    const byKey = new Map<string, { o: ModelOrder; m: ModelApi; onPurpose: boolean }[]>();
    for (const { o, m } of engineOrders.filter((x) => netMicros(x.o) > 0)) {
      const r = rowOf(o, m)?.r;
      const p = r ? purchaseOf(r) : undefined;
      if (!p) continue;
      byKey.set(p.key, [...(byKey.get(p.key) ?? []), { o, m, onPurpose: p.onPurpose }]);
    }
    for (const [key, xs] of byKey) {
      const old = xs.filter((x) => before(x.o, x.m));
      const again = xs.filter((x) => !before(x.o, x.m) && !x.onPurpose);
      // Rows written alike are one purchase bought as many times as written (1's `intended`): one
      // of two equal rows may rightly be bought after the restore, the other before it.
      check(old.length === 0 || again.length === 0 || old.length + again.length <= (intended.get(key) ?? 1), () =>
        `purchase ${key} was bought before the restore (${old.map((x) => `${x.o.orderId} for ${x.o.trxid} at ${c.accountOf ? c.accountOf(x.m, x.o.trxid) : x.m.account.name}`).join(', ')}) and again after it (${again.map((x) => `${x.o.orderId} for ${x.o.trxid} at ${c.accountOf ? c.accountOf(x.m, x.o.trxid) : x.m.account.name}`).join(', ')}): a row bought after the copy was taken must be settled from the supplier or sent to review, never bought again (38)`);
    }
    check(!rs.pending, () => 'the restored store still says "copy, not yet reconciled" at the end of the run: the reconcile-first start never finished (38)');
    check(rs.reports > 0, () => 'the store was restored, yet no restore report was written (outbox/reports/restore-*.json): the operator is not told what was settled and what needs a person (38)');
  }
  for (const [key, orders] of charged) {
    const want = intended.get(key) ?? 1;
    check(orders.length <= want, () => `purchase ${key} was bought ${orders.length} times (${orders.map((o) => `${o.orderId} for ${o.trxid}${two ? ` at ${engineOrders.find((x) => x.o === o)?.account ?? 'another key of ours'}` : ''}`).join(', ')}), ordered ${want} time(s) on purpose`);
  }

  // 23. one trxid, in any letter case, is one purchase: never two charges under spellings of one trxid
  // (the docs: a trxid is looked up in any letter case; a supplier may compare them exactly).
  const byFold = new Map<string, typeof engineOrders>();
  for (const x of engineOrders) {
    if (x.o.trxid === null || netMicros(x.o) === 0) continue;
    const k = trxidKey(x.o.trxid);
    byFold.set(k, [...(byFold.get(k) ?? []), x]);
  }
  for (const [k, xs] of byFold) {
    const spellings = new Set(xs.map((x) => x.o.trxid));
    check(xs.length <= 1 || spellings.size <= 1, () => `trxid ${JSON.stringify(k)} was charged ${xs.length} times under ${spellings.size} spellings: ${xs.map((x) => `${x.o.orderId} for ${JSON.stringify(x.o.trxid)} at ${x.account}`).join(', ')}`);
  }

  // 24. one trxid, one endpoint: an account re-pointed in accounts.toml must not carry a row in
  // doubt to another supplier. The engine's rule (store/rows.ts, the send's identity guard): a row
  // sent before to another identity is sent only while `pending`, i.e. proven nothing created. So a
  // trxid may reach a second host only after every send of it elsewhere was refused plainly, with
  // nothing under it, its answer delivered (the posts invariant 37 reads); a send to another host
  // after any other answer (lost, cut, something created) is the violation. Unlike 37, a process
  // stopped after the answer reached it is not held against the send: a config edit stops the
  // daemon that read the refusal (seed 301 of simulate-c: refused at the re-pointed host, stopped,
  // sent at the host put back); had it died before recording the answer, the row would be in doubt
  // and the store's identity guard would refuse the send, and either way nothing was made there.
  for (const [t, ms] of c.sentTo ?? []) {
    if (ms.size <= 1) continue;
    const posts = [...ms].flatMap((m) => m.posts.filter((p) => trxidKey(p.trxid) === t).map((p) => ({ m, p }))).sort((a, b) => a.p.at - b.p.at);
    const unsure = (p: (typeof posts)[number]['p']): boolean => !(p.nothing && p.delivered);
    const carried = posts.some((x, i) => unsure(x.p) && posts.slice(i + 1).some((y) => y.m !== x.m));
    check(!carried, () => `trxid ${JSON.stringify(t)} was sent to ${ms.size} supplier hosts (${[...ms].map((m) => m.account.name).join(', ')}): ${[...ms].map((m) => { const o = m.byTrxid(t); return o ? `${m.account.name} made ${o.orderId} (${o.status})` : `${m.account.name} made nothing`; }).join('; ')}` + ` [posts: ${posts.map((x) => `${x.m.account.name}@${x.p.at} nothing=${x.p.nothing} delivered=${x.p.delivered} owner=${x.p.owner}`).join('; ')}]`);
  }

  // 5, 6: result files and summaries of every finished batch.
  let rowNetCents = 0;
  for (const b of batches) {
    if (b.state !== 'done' && b.state !== 'duplicate') continue;
    const paths = outboxPaths(rt, b);
    const brows = rows.filter((r) => r.batchId === b.id);
    check(existsSync(paths.resultFile), () => `batch ${b.id} (${b.sourceName}) finished without ${paths.resultFile}`);
    if (existsSync(paths.resultFile)) {
      const text = readFileSync(paths.resultFile, 'utf8').replace(/^\ufeff/, '');
      const delimiter = b.dialect.delimiter;
      const table = parse(text, { delimiter, relax_column_count: true, skip_empty_lines: true }) as string[][];
      const header = table[0] ?? [];
      // Our columns come after the file's; one whose name the file uses already is `result_<name>` (an `account` pin column).
      const col = (name: string): number => {
        const i = header.lastIndexOf(`result_${name}`);
        return i >= 0 ? i : header.lastIndexOf(name);
      };
      const data = table.slice(1);
      // Lines written into the claimed file after it was read (`late-lines`) add a `skipped` result row each (35: money-invariants.ts).
      const written = c.lateWritten?.get(b.id) ?? 0;
      const late = data.length - brows.length;
      check(data.length === brows.length || (written > 0 && late === written), () => `batch ${b.id} (${b.sourceName}): ${brows.length} rows stored, ${data.length} result rows${written > 0 ? ` (${written} lines written into its file after the claim)` : ''}`);
      const drop = c.drops.find((d) => d.name === b.sourceName);
      rowNetCents = 0;
      if (drop) check(data.length === drop.rows.length + Math.max(0, late), () => `batch ${b.id} (${b.sourceName}): ${drop.rows.length} input lines, ${data.length} result rows`);
      for (const [i, r] of brows.entries()) {
        const cells = data[i];
        if (!cells) continue;
        check(cells[col('status')] === r.state, () => `${where(r)}: the result file says ${cells[col('status')]}`);
        // A row skipped as a repeat names the purchase it repeats (issue 30: its trxid and order id
        // cells, outbox/results.ts): then the order must be one a row of this home holds, under the
        // trxid the result names.
        const namedOrder = cells[col('orderId')] ?? '';
        const repeatNames = r.state === 'skipped' && r.orderId === null && namedOrder !== ''
          && rows.some((o) => o.orderId === namedOrder && o.trxid !== null && trxidKey(ownTrxid(o) ?? '') === trxidKey(cells[col('trxid')] ?? ''));
        check(namedOrder === (r.orderId ?? '') || repeatNames, () => `${where(r)}: the result file says order ${cells[col('orderId')]}`);
        // 22. money to the cent against the ledger: never less than the ledger's net charge, and equal to it
        // when the supplier reported the refund (left out, late or partial: the engine may read it charged).
        if (r.orderId !== null && (r.state === 'completed' || r.state === 'cancelled')) {
          const o = c.apiOf(r.account, r.trxid).byId(r.orderId);
          const net = Math.round(Number((cells[col('netUsd')] ?? 'NaN').replace(',', '.')) * 100); // a file written with ';' has decimal commas
          rowNetCents += Number.isFinite(net) ? net : 0;
          if (o) {
            const ledgerNet = Math.round((o.amountMicros - (o.refunded ? (o.refundMicros ?? o.amountMicros) : 0)) / 10_000);
            const amount = Math.round(o.amountMicros / 10_000);
            const reported = (o.refundForm ?? 'reported') === 'reported';
            check(Number.isFinite(net) && net >= ledgerNet, () => `${where(r)}: the result says it cost ${cells[col('netUsd')]} USD; the API charged ${ledgerNet / 100} USD net for ${o.orderId} (${o.refunded ? `refunded ${usd(o.refundMicros ?? o.amountMicros)} USD, ${o.refundForm ?? 'reported'}` : 'not refunded'}): a charge reported as less`);
            check(reported ? net === ledgerNet : net === ledgerNet || net === amount, () => `${where(r)}: the result says it cost ${cells[col('netUsd')]} USD; the API charged ${ledgerNet / 100} USD net for ${o.orderId} (price ${amount / 100}${o.refunded ? `, refunded ${usd(o.refundMicros ?? o.amountMicros)} USD, ${o.refundForm ?? 'reported'}` : ''})`);
          }
        }
        const codes = (cells[col('codes')] ?? '').split(' ').filter((x) => x !== '').map((x) => x.replace(/^'/, ''));
        check(JSON.stringify(codes) === JSON.stringify(r.codes), () => `${where(r)}: the result file shows codes ${codes.join(' ')}, the store ${r.codes.join(' ')}`);
        if (two && r.request !== null) {
          // 13. the row's account, and who refused it before it moved, each named as the store named
          // it when this file was written: a rename later takes the row to the new name, and the file
          // handed out keeps the old one (docs/accounts.md).
          const then = writtenNames.get(b.id)?.version === b.resultVersion ? writtenNames.get(b.id)!.rows.get(r.idx) : undefined;
          const account = then?.account ?? r.account;
          const movedFrom = then?.movedFrom ?? r.moves.map((m) => m.from);
          const ac = col('account');
          check(ac >= 0 && cells[ac] === account, () => `${where(r)}: the result file says account ${ac >= 0 ? JSON.stringify(cells[ac]) : '(no account column)'}${then ? ` (when it was written, the row was on ${JSON.stringify(account)})` : ''}`);
          const rb = col('refusedBy');
          check(rb >= 0 && r.moves.every((m, i) => (cells[rb] ?? '').includes(movedFrom[i] ?? m.from) && (cells[rb] ?? '').includes(m.trxid)) && (r.moves.length > 0) === ((cells[rb] ?? '') !== ''), () =>
            `${where(r)}: the result file's refusedBy ${rb >= 0 ? JSON.stringify(cells[rb]) : '(no column)'} does not name the accounts it left (${JSON.stringify(r.moves)}${then ? `; named ${JSON.stringify(movedFrom)} when it was written` : ''})`);
        }
        if (two && drop && header.includes('result_account') && !c.unpinnedBatches?.has(b.id)) {
          // A row the file pins to an account is on it (or not placed at all), under whatever name a rename gave it since.
          const pinned = (cells[header.indexOf('account')] ?? '').trim();
          check(pinned === '' || r.request === null || sameAccount(r.account, pinned), () => `${where(r)}: the file pins it to account ${pinned}`);
        }
      }
    }
    if (existsSync(paths.summaryFile)) {
      const summary = JSON.parse(readFileSync(paths.summaryFile, 'utf8')) as { spentUsd: number };
      let truth = 0;
      let allReported = true;
      for (const r of brows) {
        if (r.orderId === null || (r.state !== 'completed' && r.state !== 'cancelled')) continue;
        const o = c.apiOf(r.account, r.trxid).byId(r.orderId);
        if (o) truth += o.amountMicros - (o.refunded ? (o.refundMicros ?? o.amountMicros) : 0);
        if (o && (o.refundForm ?? 'reported') !== 'reported') allReported = false;
      }
      const spent = Math.round(summary.spentUsd * 100);
      const ledger = Math.round(truth / 10_000);
      // 6 and 22: the summary adds up the result's rows to the cent; it equals the ledger when every
      // refund was reported, and is never below it.
      if (existsSync(paths.resultFile)) check(spent === rowNetCents, () => `batch ${b.id} (${b.sourceName}): the summary says ${summary.spentUsd} USD spent; its result rows add up to ${rowNetCents / 100} USD`);
      check(allReported ? spent === ledger : spent >= ledger, () => `batch ${b.id} (${b.sourceName}): the summary says ${summary.spentUsd} USD spent; the API charged its rows ${ledger / 100} USD net${allReported ? '' : ' (some refunds not reported: never less)'}`);
    }
  }

  // 25. every money cell against the ledger (sim/money-invariants.ts).
  checkMoneyCells({ rt, rows, batches, apiOf: c.apiOf, check, where, ...(c.lateWritten ? { lateWritten: c.lateWritten } : {}) });
  // 35. a line written into a claimed file is never ordered.
  if (c.latePlayers && c.latePlayers.size > 0) {
    for (const m of c.apis) {
      for (const o of m.orders) {
        if (o.origin === 'engine' && o.userId !== undefined && c.latePlayers.has(o.userId.trim())) check(false, () => `order ${o.orderId} (trxid ${o.trxid}) was placed for player ${o.userId}, of a line written into a file after it was claimed: never read, never to be ordered (35)`);
      }
    }
  }
  // 27. no row bought above its maxPriceUsd, on any account.
  checkPriceCaps({ rt, rows, batches, apiOf: c.apiOf, check, where });
  checkBalanceRefusals({ rt, rows, batches, apiOf: c.apiOf, check, where, apis: c.apis });
  // 30, 31, 32: player checks (issue 31).
  checkPlayerChecks({ rt, rows, batches, apis: c.apis, world: c.checkWorld, check, where, ...(c.unrecordedChecks ? { unrecorded: c.unrecordedChecks } : {}) });

  // 29. A review row is only undecided: the review recheck (poll/review-recheck.ts, every 15
  // minutes in its first day) settles it once the supplier shows its order. After the watch, no row
  // is still in review whose order (made by our sends, under the row's own trxid, held by no other
  // row) the supplier showed the whole time: by its id, when the row knows it, or in history with
  // its trxid, for a trxid this home derived (a trxid the file gave needs a proof of origin the
  // recheck may rightly not have: dispatch/order-match.ts mustProve).
  if (c.reviewWatch) {
    for (const r of rows) {
      if (r.state !== 'review' || r.trxid === null) continue;
      const m = c.apiOf(r.account, r.trxid);
      const seen = c.reviewWatch.get(String(c.apis.indexOf(m)));
      const o = m.byTrxid(r.trxid);
      if (!seen || !o || o.origin !== 'engine' || o.status === 'processing') continue;
      if (rows.some((x) => x !== r && x.orderId !== null && x.orderId.toLowerCase() === o.orderId.toLowerCase())) continue;
      const byId = r.orderId !== null && r.orderId.toLowerCase() === o.orderId.toLowerCase() && (seen.has(`i:${o.orderId}`) || seen.has(`h:${o.orderId}`));
      const inHistory = r.orderId === null && DERIVED_TRXID.test(r.trxid) && seen.has(`h:${o.orderId}`);
      check(!byId && !inHistory, () => `${where(r)}: still in review after the review recheck's rounds, while the supplier showed its order ${o.orderId} (${o.status}) ${byId ? 'by its id' : 'in history under its trxid'} the whole time (29)`);
    }
  }
  // 37. Review is for doubt: a row ends in review only if some send of its trxid left the supplier's
  // answer unknown to the engine (lost, cut, an error page, an in-flight lock, an answer naming an
  // order, or an answer its process did not live to read). A row every send of which the supplier
  // refused plainly, with nothing under its trxid (docs/real-suppliers.md: refused, nothing
  // created: rejected; a balance refusal is held; maintenance waits), each answer read by a
  // process that went on (never killed, stopped, or stopped past its lease by `stall`), cannot have been charged: a person asked to
  // decide is asked for nothing. Not judged in a schedule whose wall clock steps (a lease lost
  // to a step leaves an answer unapplied) or for a row that moved between accounts.
  if (c.interrupted) {
    for (const r of rows) {
      // (Nor after a restore: the reconcile sends a row to review when an account cannot say where it was bought, sent or not: docs/backup.md.)
      if (r.state !== 'review' || r.trxid === null || r.moves.length > 0 || c.clockSteps || c.restore) continue;
      const m = c.apiOf(r.account, r.trxid);
      const key = m.foldKey(r.trxid);
      const posts = m.posts.filter((p) => p.key === key);
      if (posts.length === 0 || m.byTrxid(r.trxid) !== undefined) continue;
      const plain = posts.every((p) => p.nothing && p.delivered && !c.interrupted!.has(p.owner));
      check(!plain, () => `${where(r)}: in review, though the supplier refused each of its ${posts.length} send(s) plainly with nothing under its trxid, every answer read by a process that went on: nothing can have been charged, and review asks a person for nothing (37)`);
    }
  }
  if (c.shop) checkShop(c.shop, rows, batches, rt, check, where, c.restore);
  const apiBatches = batches.filter((b) => b.apiDay !== null);

  return {
    ok: v.length === 0,
    violations: v,
    figures: {
      batches: batches.length,
      rows: rows.length,
      placed: rows.filter((r) => r.orderId !== null).length,
      review: rows.filter((r) => r.state === 'review').length,
      modelOrders: c.apis.reduce((n, m) => n + m.orders.length, 0),
      engineOrders: engineOrders.length,
      moved: rows.filter((r) => r.moves.length > 0).length,
      invariantsChecked: checked,
      states: rows.reduce<Record<string, number>>((m, r) => ((m[r.state] = (m[r.state] ?? 0) + 1), m), {}),
      apiRows: rows.filter((r) => apiBatches.some((b) => b.id === r.batchId)).length,
      apiBatches: apiBatches.length,
      apiBatchesDone: apiBatches.filter((b) => b.state === 'done').length,
    },
  };
}

const LIVE = ['pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen'];

/** The value a body gives a field of the API batch's cells, as the desk stores it ('' when absent). */
function cellOf(body: OrderInput, column: string): string {
  const v = (body as unknown as Record<string, unknown>)[column];
  if (v === undefined) return '';
  if (column === 'meta') return canonicalBody({ meta: v } as unknown as OrderInput);
  // A trxid as given: white space around it is not part of it (kernel/identity.ts trxidAsGiven;
  // the desk stores " X-API-3" with a no-break space first as X-API-3, and that is the body it
  // holds). Fresh seed 20261131 (unicode, schedule 79) read the sent spelling as another body.
  if (column === 'trxid') return trxidAsGiven(String(v));
  return String(v);
}

/** 14–19: the order API's rules, against what the shop was told, the store and order_events. */
function checkShop(
  shop: ShopRecord,
  rows: Row[],
  batches: ReturnType<Runtime['batches']['list']>,
  rt: Runtime,
  check: (ok: boolean, message: () => string) => void,
  where: (r: Row) => string,
  restore?: RestoreJudged,
): void {
  const batchOf = new Map(batches.map((b) => [b.id, b]));
  const isApi = (r: Row): boolean => batchOf.get(r.batchId)?.apiDay != null;
  const extra = new Map((rt.db.prepare('SELECT batch_id, idx, api_body_hash, created_at FROM rows WHERE api_body_hash IS NOT NULL').all() as { batch_id: string; idx: number; api_body_hash: string; created_at: number | null }[]).map((x) => [`${x.batch_id}:${x.idx}`, x]));
  /** Every row holding a trxid, by it in lower case: its trxid now and every trxid it left on another account. */
  const holders = new Map<string, Row[]>();
  for (const r of rows) {
    const ts = new Set([...(r.trxid !== null ? [r.trxid] : []), ...r.moves.map((m) => m.trxid)].map((t) => trxidKey(t)));
    for (const t of ts) holders.set(t, [...(holders.get(t) ?? []), r]);
  }
  const storedBody = (r: Row): string => {
    const b = batchOf.get(r.batchId)!;
    return JSON.stringify((b.header ?? []).map((col, i) => (col === 'meta' && r.cells[i] ? canonicalBody({ meta: JSON.parse(r.cells[i]!) } as unknown as OrderInput) : (r.cells[i] ?? ''))));
  };
  const bodyAsStored = (r: Row, body: OrderInput): string => {
    const b = batchOf.get(r.batchId)!;
    return JSON.stringify((b.header ?? []).map((col) => cellOf(body, col)));
  };
  const told = (a: ShopAttempt): string => `the acceptance of ${a.trxid} sent at ${(a.at / 1000).toFixed(3)} s to ${a.to ?? 'nobody'} (try ${a.tries}, body ${a.canon})`;

  const byTrxid = new Map<string, ShopAttempt[]>();
  for (const a of shop.attempts) byTrxid.set(trxidKey(a.trxid), [...(byTrxid.get(trxidKey(a.trxid)) ?? []), a]);

  for (const [t, as] of byTrxid) {
    const hs = holders.get(t) ?? [];
    const apiHolders = hs.filter(isApi);
    const placed = as.filter((a) => a.answer?.kind === 'accepted' || a.answer?.kind === 'same');
    // 14. one row, an API order's, in an API batch of its day, stored before that batch finished.
    if (placed.length > 0) {
      check(hs.length === 1 && apiHolders.length === 1, () => `${told(placed[0]!)} was answered ${placed[0]!.answer!.kind}; rows holding ${t} in any letter case: ${hs.length === 0 ? 'none (the order was lost)' : hs.map(where).join(' and ')}`);
    }
    for (const r of apiHolders) {
      const b = batchOf.get(r.batchId)!;
      const x = extra.get(`${r.batchId}:${r.idx}`);
      const created = x?.created_at ?? null;
      // Its own day's batch; or, after the wall clock stepped back across midnight, a later day's
      // (orders never go back into a day whose batch may be finished: store/batches.ts apiBatch).
      const day = created === null ? null : new Date(created).toISOString().slice(0, 10);
      const own = day === null ? undefined : batches.find((x) => x.apiDay === day);
      // (Whether that batch was finished before this order came cannot be told from wall times across
      // a clock step; a done batch stays done, so one still open is the one the order belonged in.)
      const ownClosed = own === undefined || own.state !== 'open';
      check(day !== null && b.apiDay !== null && (day === b.apiDay || (day < b.apiDay && ownClosed)), () => `${where(r)}: an API order stored at ${created === null ? '(no time)' : new Date(created).toISOString()} in the batch of ${b.apiDay}${own ? ` while its day's batch ${own.id} was ${own.state}` : ''}`);
      check(created === null || b.finishedAt === null || created <= b.finishedAt + shop.stepsBackMs, () => `${where(r)}: an API order stored at ${new Date(created!).toISOString()} in a batch finished at ${new Date(b.finishedAt!).toISOString()}`);
    }
    // 15. `same` only for the stored body; one body placed per trxid; the stored body is never refused.
    const row = apiHolders[0];
    if (row) {
      const stored = storedBody(row);
      for (const a of placed) {
        check(bodyAsStored(row, a.body) === stored, () => `${told(a)} was answered ${a.answer!.kind}; the order stored under ${row.trxid} has another body: ${stored}`);
      }
      // The stored body's first send that could have stored it (answered or not, but not refused):
      // a 409 to a send before it was no answer about the shop's order, which did not exist yet.
      // (Seed 513121147: a file row held SHOP-3, so the desk refused the shop's SHOP-3 409 TRXID_USED,
      // rightly, the file row having come first; the file's batch was cancelled before sending,
      // which frees the trxid, and the shop's next send of SHOP-3 was stored. The refusal was the
      // door deciding for whichever came second, not the shop's own order answered as not placed.)
      const storedFrom = Math.min(...as.filter((a) => a.answer?.kind !== 'refused' && bodyAsStored(row, a.body) === stored).map((a) => a.at));
      for (const a of as) {
        const ans = a.answer;
        if (ans?.kind !== 'refused' || bodyAsStored(row, a.body) !== stored || a.at < storedFrom) continue;
        check(ans.status !== 409, () => `${told(a)} is the body ${where(row)} was stored with, and was refused ${ans.status} ${ans.code}: the shop reads its own order as not placed`);
      }
    }
    const bodies = new Set(placed.map((a) => a.canon));
    check(bodies.size <= 1, () => `trxid ${t} was answered accepted/same for ${bodies.size} different bodies: ${[...bodies].join(' | ')}`);
    // 18. only refused (never accepted, never left without an answer): nothing stored.
    const onlyRefused = as.every((a) => a.answer?.kind === 'refused');
    if (onlyRefused) check(apiHolders.length === 0, () => `trxid ${t} was only ever refused (${as.map((a) => (a.answer?.kind === 'refused' ? `${a.answer.status} ${a.answer.code}` : '?')).join(', ')}), yet ${where(apiHolders[0]!)} holds it`);
  }
  // 19. no internal errors.
  for (const a of shop.attempts) {
    if (a.answer?.kind === 'error') check(false, () => `${told(a)} was answered 500: ${a.answer!.kind === 'error' ? a.answer!.message : ''}`);
  }

  // 16. every API order ended; every day's batch whose day is over and whose orders ended is done, not before its day's end, with its result.
  for (const r of rows.filter(isApi)) {
    check(!LIVE.includes(r.state), () => `${where(r)}: an API order still ${r.state} at the end`);
  }
  for (const b of batches) {
    if (b.apiDay === null) continue;
    const closes = apiBatchClosesAt(b)!;
    const brows = rows.filter((r) => r.batchId === b.id);
    if (shop.endWall >= closes && !brows.some((r) => LIVE.includes(r.state))) {
      check(b.state === 'done', () => `the API batch ${b.id} of ${b.apiDay}: its day is over and its ${brows.length} orders ended, yet it is ${b.state}`);
    }
    // A cancelled day's batch takes no order any more: it is finished once its sent orders end, its
    // day over or not (engine/stages/finishing.ts, docs/order-api.md; invariant 36 judges it).
    if (b.finishedAt !== null && !shop.cancelled.has(b.id)) {
      check(b.finishedAt + shop.stepsBackMs >= closes, () => `the API batch ${b.id} of ${b.apiDay} was finished at ${new Date(b.finishedAt!).toISOString()}, while its day still took orders (until ${new Date(closes).toISOString()})`);
    }
    if (b.state === 'done') {
      const file = outboxPaths(rt, b).resultFile;
      const n = existsSync(file) ? (parse(readFileSync(file, 'utf8').replace(/^\ufeff/, ''), { delimiter: b.dialect.delimiter, relax_column_count: true, skip_empty_lines: true }) as string[][]).length - 1 : -1;
      check(n === brows.length, () => `the API batch ${b.id} of ${b.apiDay} is done with ${n < 0 ? 'no result file' : `${n} result rows`} for ${brows.length} orders`);
    }
  }

  // 36. a cancelled day's API batch (api-cancel): no order stored into it after the cancel; its
  // unsent orders end rejected (skipped, TOPUP_CANCELLED) under the trxid the shop knows, with
  // nothing bought under it; and it is finished (done, with its result file) once its sent orders
  // end, whether or not its day is over (16 checks the file).
  for (const [id, at] of shop.cancelled) {
    const b = batchOf.get(id);
    if (!b) continue;
    const brows = rows.filter((r) => r.batchId === id);
    for (const r of brows) {
      const created = extra.get(`${r.batchId}:${r.idx}`)?.created_at ?? null;
      // Except an order the shop was promised (202) before the cancel and before a restore lost it:
      // the journal's recovery takes it back into the cancelled batch (orders/desk.ts), or its
      // purchase, if made, would be held by no row (seed 20261127 #184 drawn on 60e2d0f).
      const recovered = restore !== undefined && r.trxid !== null && shop.attempts.some((a) =>
        (a.answer?.kind === 'accepted' || a.answer?.kind === 'same') && trxidKey(a.trxid) === trxidKey(r.trxid!) && a.at < at.mono && a.at < restore.restoredAt);
      check(created === null || created <= at.wall || recovered, () => `${where(r)}: stored into the API batch ${id} at ${new Date(created!).toISOString()}, after an operator cancelled it at ${new Date(at.wall).toISOString()} (36)`);
      // (A row sent once and turned away with nothing made, maintenance say, is unsent again: the
      // cancel skips it too. That nothing was bought under its trxid is invariant 1's and 12's.)
      if (r.state === 'skipped') {
        check(r.rejectCode === CANCELLED_CODE && r.trxid !== null, () => `${where(r)}: an API order skipped by the cancel of ${id} with code ${r.rejectCode ?? 'none'}, trxid ${r.trxid ?? 'none'}: the shop knows it by its trxid, and it must say it was cancelled before it was bought (36)`);
      }
    }
    const live = brows.filter((r) => LIVE.includes(r.state));
    // Finished once its last order ended (or at the cancel), not held open for its day: within a
    // minute (a lease holder's step, a restart), on a wall clock that never stepped.
    if (b.finishedAt !== null && !shop.wallSteps) {
      const ended = Math.max(at.wall, ...brows.map((r) => r.updatedAt));
      check(b.finishedAt <= ended + 60_000, () => `the API batch ${id} of ${b.apiDay}, cancelled at ${new Date(at.wall).toISOString()}, its last order ended at ${new Date(ended).toISOString()}, was finished only at ${new Date(b.finishedAt!).toISOString()}: a cancelled day's batch takes no order and is finished once its sent orders end, not at its day's end (36)`);
    }
    check(live.length > 0 || b.finishedAt !== null, () => `the API batch ${id} of ${b.apiDay}, cancelled at ${new Date(at.wall).toISOString()}, has no live order at the end yet is ${b.state}, unfinished: a cancelled day's batch is finished once its sent orders end (36)`);
  }

  // 17. order_events: exactly the statuses each order went through.
  const events = rt.db.prepare('SELECT id, batch_id, idx, status, row_state FROM order_events ORDER BY id').all() as { id: number; batch_id: string; idx: number; status: string; row_state: string }[];
  const evBy = new Map<string, typeof events>();
  for (const e of events) evBy.set(`${e.batch_id}:${e.idx}`, [...(evBy.get(`${e.batch_id}:${e.idx}`) ?? []), e]);
  for (const r of rows.filter((x) => extra.has(`${x.batchId}:${x.idx}`))) {
    const k = `${r.batchId}:${r.idx}`;
    const ev = evBy.get(k) ?? [];
    const st = ev.map((e) => e.status);
    const show = (): string => `${where(r)}: order_events ${st.join(' → ') || '(none)'}; seen ${(shop.seen.get(k) ?? []).join(' → ')}`;
    check(st[0] === 'accepted', () => `${show()}: the first is not accepted`);
    const now = publicStatus(r.state, r.firstSentAt !== null);
    check(st.at(-1) === now, () => `${show()}: the last is not its status now (${now})`);
    check(st.every((x, i) => i === 0 || x !== st[i - 1]), () => `${show()}: a status repeated without a change`);
    // A pending row is `accepted` or, sent before, `sent` (migration 25): the event does not record which.
    check(ev.every((e) => publicStatus(e.row_state as Row['state'], false) === e.status || publicStatus(e.row_state as Row['state'], true) === e.status), () => `${show()}: an event whose status is not its row state's`);
    // Every status seen, in the order seen, is among the events (a subsequence).
    check(subsequence(shop.seen.get(k) ?? [], st), () => `${show()}: a status it was seen in has no event`);
  }
  for (const e of events) check(extra.has(`${e.batch_id}:${e.idx}`), () => `order_events ${e.id} (${e.status}) belongs to no API order (${e.batch_id}:${e.idx})`);
}

/** Is `xs` a subsequence of `ys` (every x in ys, in order)? */
function subsequence(xs: readonly string[], ys: readonly string[]): boolean {
  let j = 0;
  for (const x of xs) {
    while (j < ys.length && ys[j] !== x) j++;
    if (j >= ys.length) return false;
    j++;
  }
  return true;
}
