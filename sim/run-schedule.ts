/**
 * One simulated run: a home on disk (tmpfs where there is one), its SQLite store, the whole
 * engine (src/engine/runner.ts: intake → store → fund → dispatch → poll → outbox) in one or two
 * daemon processes and the submit and command processes the schedule starts, all in this Node
 * process, all on the simulator's clock, entropy and wire to the model API (model.ts). Crashes drop
 * a process at whatever await it is parked on; a new one starts on the same database file.
 *
 * After the run, invariants.ts judges the store, the result files and the model's ledger.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { LIVE_STATES } from '../src/store/row-states.js';
import { foldTrxid, trxidKey } from '../src/kernel/identity.js';
import { editClass, has, hashOf, LIVENESS_BOUND_MS, neverClearing, SIM_REVIEW_AFTER_MS, type ConfigEdit } from './world.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { pino } from 'pino';
import { loadConfig, type Config } from '../src/config/config.js';
import { ErrorCode } from '../src/kernel/errors.js';
import { seededEntropy } from '../src/kernel/entropy.js';
import { silentLogger, type Logger } from '../src/kernel/log.js';
import { AccountsRepointedError, openRuntime, type Runtime } from '../src/runtime.js';
import { openDb } from '../src/store/db.js';
import type { Statement } from 'better-sqlite3';
import { Runner } from '../src/engine/runner.js';
import { ORDERING_BATCH_STATES, type BatchState } from '../src/store/batch-states.js';
import { claimFile } from '../src/claim/claim.js';
import { createRetryBatch } from '../src/ops/retry.js';
import { requestCancel } from '../src/ops/cancel.js';
import { requestRunCovered } from '../src/ops/run-covered.js';
import { resolveReview } from '../src/ops/review.js';
import { createOrderDesk } from '../src/orders/desk.js';
import { API_DAY_GRACE_MS, apiBatchOpenForOrders } from '../src/orders/api-batch.js';
import { publicStatus, type AcceptOutcome, type OrderDesk, type OrderInput } from '../src/orders/types.js';
import type { RowState } from '../src/store/row-states.js';
import { ACCOUNT_A, checkKindOf, DEAR_PACK_A, ghostKey, LINES_OF_B, ModelApi, PACKS, PACKS_B, PID_AT_B, SIM_KEY, SIM_KEY_B, type ModelAccount } from './model.js';
import { rowIdOf } from './schedule.js';
import { quiesce, SimScheduler } from './scheduler.js';
import { simTransport, type Exchange } from './transport.js';
import type { Action, Edit, Schedule, SimFile, SimRow } from './schedule.js';
import { judge, type Drop, type Judgement, type ResolveSeen, type RestoreJudged, type ShopAttempt, type WrittenAs } from './invariants.js';
import type { Row } from '../src/store/rows.js';
import { canonicalBody, MAX_TRIES, SHOP_TIMEOUT_MS, shopBody, shopTrxid } from './shop.js';
import { reconcilePending, restoreCopy, restoreReports, takeCopy, type RestoreRecord } from './restore.js';
import { adoptOrphans } from '../src/claim/orphans.js';
import { noteOrphansForRestore } from '../src/ops/restore-reconcile.js';
import { hasClaimLookups, orderLookups } from '../src/store/backup.js';
import { recoverFromJournal } from '../src/orders/journal.js';

export interface RunOptions {
  /** Keep the home after the run (for a failing seed). */
  keep?: boolean;
  /** Log every process's lines to stderr, prefixed with the simulated time. */
  verbose?: boolean;
  /** Simulated time after which unfinished work is a stall. */
  horizonMs?: number;
  /** Event budget: a run that needs more is a stall (a loop that never ends). */
  maxEvents?: number;
}

export interface RunOutcome extends Judgement {
  events: number;
  simMs: number;
  processes: number;
  crashes: number;
  home: string | null;
  trace: string[];
  /** What happened in the run, counted (the simulator's coverage figures add these up). */
  behaviours: Record<string, number>;
  /** Corpus variants the model answered with. */
  variants: string[];
}

interface Proc {
  id: string;
  kind: 'daemon' | 'submit' | 'command';
  slot: number;
  rt: Runtime;
  runner: Runner | null;
  /** A daemon's order desk (issue 23): the HTTP layer's entry, on the daemon's runtime. */
  desk?: OrderDesk;
  /** Stopped gracefully (SIGTERM): its listener is closed, its acceptances in flight are answered before its store closes. */
  stopping?: boolean;
  accepting?: Set<Promise<unknown>>;
  alive: boolean;
  done: Promise<void>;
}

/** accounts.toml as the operator has it now (issue 29: edited between restarts). */
interface AccountsFile {
  accounts: { name: string; host: 0 | 1 }[];
  routing: 'cheapest' | 'priority' | 'spread';
  maxQueueDelayMs: number;
  /** TOPUP_RATE_LIMITS. */
  limits: string;
}

/** accounts.toml after one edit (world.ts ConfigEdit). */
function applyEdit(f: AccountsFile, e: ConfigEdit): AccountsFile {
  const accounts = f.accounts.map((a) => ({ ...a }));
  switch (e.op) {
    case 'rename': {
      const a = accounts.find((x) => x.host === e.account);
      if (a) a.name = `${a.name}-renamed`;
      return { ...f, accounts };
    }
    case 'remove': return accounts.length > 1 ? { ...f, accounts: accounts.filter((x) => x.host !== e.account) } : f;
    // The names stay, the hosts (URL and key) are swapped: `second` now reaches the first host.
    case 'repoint': return { ...f, accounts: accounts.map((a) => ({ ...a, host: (1 - a.host) as 0 | 1 })) };
    case 'reorder': return { ...f, accounts: accounts.reverse() };
    case 'routing': return { ...f, routing: e.routing };
    case 'max-queue-delay': return { ...f, maxQueueDelayMs: e.ms };
    case 'limits': return { ...f, limits: e.limits };
  }
}

const API_URL = 'http://api.sim.invalid';
/** The second account's host (schedules with two accounts). */
const API_URL_B = 'http://api-b.sim.invalid';
/** The accounts' names in accounts.toml (two accounts); one account is `default`. */
const NAMES = ['main', 'second'] as const;
/** As daemon.ts: the inbox is listed again this often. */
const SWEEP_EVERY_MS = 15_000;
const HOME_ROOT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
/** Liveness (invariants 20, 21): how often the rows are looked at, and how long a live row may go without a stated reason. */
const LIVE_SAMPLE_MS = 5_000;
const TOLD_AFTER_MS = 5 * 60_000;
/** Invariant 29: how long the daemons run on after the schedule when rows are in review (the recheck comes every 15 minutes: two rounds, so one failed read is not a verdict). */
const REVIEW_WATCH_MS = 32 * 60_000;
/** A row whose order may exist and is not known: it must end or reach review within LIVENESS_BOUND_MS. */
const DOUBT_STATES: readonly string[] = ['sending', 'resending', 'verifying', 'searching', 'unseen'];
/** The stall bound's review (dispatch/stall.ts stallBound: 3 × R + 5 request timeouts): a row in doubt this long goes to review without a history check (39 judges rows short of it). */
const REVIEW_BY_MS = 3 * SIM_REVIEW_AFTER_MS + 5 * 15_000;
/**
 * Invariant 40: once the only other daemon of the home is gone for good, the one left ends the
 * restored store's reconcile (and so sends) within this much simulated time, unless a read it needs
 * failed meanwhile: its retry (RETRY_MS, 15 s) takes the dead daemon's batches, then every account's
 * history is read (paged) and the rows settled.
 */
const EVERY_DAEMON_SENDS_MS = 20 * 60_000;
/** States that say nothing of why a row waits: a row in them for TOLD_AFTER_MS needs a stated reason (21). */
const TOLD_STATES: readonly string[] = ['pending', 'sending'];

/**
 * A store with every migration applied, made once per simulator process: each schedule's home
 * starts from a copy of it instead of running the migrations (the profile: creating the schema
 * took ~5% of a schedule's time, its statements' compilation more). openDb still runs on the copy
 * as on any home (its version read, the fold's build checked), so nothing the engine does at a
 * start is skipped but the CREATE statements the copy already holds.
 */
let templateDb: string | undefined;
function migratedTemplate(): string {
  // Made again if it went (another run cleaning /dev/shm must not end this one).
  if (templateDb && existsSync(templateDb)) return templateDb;
  const dir = mkdtempSync(join(HOME_ROOT, 'topup-sim-template-'));
  const path = join(dir, 'topup.db');
  // Closing the only connection checkpoints the write-ahead log into the file and removes it.
  openDb(path).close();
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  templateDb = path;
  return path;
}

export async function runSchedule(s: Schedule, opts: RunOptions = {}): Promise<RunOutcome> {
  const home = mkdtempSync(join(HOME_ROOT, 'topup-sim-'));
  for (const d of ['inbox', 'jobs', 'outbox']) mkdirSync(join(home, d), { mode: 0o700 });
  // The path config.ts gives the store (jobs/topup.db); 0600 as openDb creates it.
  copyFileSync(migratedTemplate(), join(home, 'jobs', 'topup.db'));
  chmodSync(join(home, 'jobs', 'topup.db'), 0o600);
  const sim = new SimScheduler(seededEntropy(s.seed), (opts as { fullTrace?: boolean }).fullTrace ? 10_000_000 : 400);
  // A shop's schedule may start before UTC midnight: its orders go to two days' batches.
  if (s.shop && s.shop.beforeMidnightMs > 0) sim.startAt(sim.epoch + 86_400_000 - s.shop.beforeMidnightMs);
  const two = s.second;
  // One model API per account: its own host, key, ledger, balance, stock, catalog and faults.
  const modelAccount = (i: 0 | 1): ModelAccount => {
    const base: ModelAccount = i === 0 ? { ...ACCOUNT_A, name: two ? NAMES[0] : 'default' } : { name: NAMES[1], key: SIM_KEY_B, packs: PACKS_B, lines: LINES_OF_B, idPrefix: two?.sameIds ? 'M' : 'N', refusePid: null, keyRevoked: null };
    // `plain-refusals` (the sixth turn): in a one-account schedule too, a pack the catalog lists refused
    // from a drawn time (the row ends rejected: no other account sells it); real-world suppliers
    // may say so in an HTTP 200 with success:false (docs/real-suppliers.md: refused, nothing created).
    const here = !two && has(s.world, 'plain-refusals') ? s.world?.withdrawnHere : undefined;
    const w = two?.refusePid ?? (here ? { account: 0 as const, pack: here.pack, error: here.error, fromMs: here.fromMs } : undefined);
    const asOk = has(s.world, 'plain-refusals') && s.world?.withdrawnHere?.asOk === true && s.api.style === 'real-world';
    const k = two?.keyRevoked;
    return {
      ...base,
      refusePid: w && w.account === i ? { pid: i === 0 ? w.pack : PID_AT_B[w.pack]!, error: w.error, fromMs: w.fromMs, ...(asOk ? { asOk } : {}) } : null,
      keyRevoked: k && k.account === i ? [k.fromMs, k.toMs] : null,
    };
  };
  const api = new ModelApi(sim, s.api, s.seed, modelAccount(0));
  const apis: ModelApi[] = [api];
  for (const f of s.foreign) api.seedForeign(f);
  for (const t of s.forbidden) api.forbidden.add(t.toLowerCase());
  const w = s.world;
  // Issue 29: rows whose own trxid another key of ours at this supplier placed first (403 FORBIDDEN
  // here: "ours, placed earlier"), and rows with a foreign order under their trxid that differs from
  // them in exactly one field (another player, zone or quantity).
  const siblings: { trxid: string; orderId: string; micros: number }[] = [];
  for (const f of s.files) {
    if (!f.trxidColumn) continue;
    for (const r of f.rows) {
      const id = rowIdOf(r.trxid);
      if (id === undefined || r.trxid === undefined || !api.account.packs.some((p) => p.id === r.pid)) continue;
      // A row's own trxid (SHOP-<id>, or with `unicode` any prefix: schedule.ts), not a reused
      // foreign or forbidden one: so a sibling's purchase is drawn under non-ASCII trxids too, where
      // the supplier's fold (`fold`: exact, ASCII only, every case) decides what a FORBIDDEN meets.
      const own = !/^(OLD-[0-3]|OTHER-[01])$/.test(r.trxid);
      if (has(w, 'sibling') && own && w!.sibling.includes(id % 6) && api.byTrxid(r.trxid) === undefined) {
        api.seedSibling({ pid: r.pid, trxid: r.trxid, ...(r.userId !== undefined ? { userId: r.userId } : {}), ...(r.zoneId !== undefined ? { zoneId: r.zoneId } : {}), ...(r.quantity !== undefined ? { quantity: r.quantity } : {}) });
        const o = [...api.sibling.values()].at(-1)!;
        siblings.push({ trxid: r.trxid, orderId: o.orderId, micros: o.amountMicros });
      } else if (has(w, 'twins') && r.trxid.startsWith('SHOP-') && w!.twins.includes(id % 6) && api.byTrxid(r.trxid) === undefined) {
        const bump = (x: string): string => x.slice(0, -1) + String((Number(x.at(-1)) + 1) % 10);
        const twin = r.quantity !== undefined ? { quantity: r.quantity + 1 } : r.zoneId !== undefined ? { userId: r.userId!, zoneId: bump(r.zoneId) } : { userId: bump(r.userId ?? '5123400000') };
        api.seedForeign({ pid: r.pid, trxid: r.trxid, ...twin, agoMs: 600_000 });
      }
    }
  }
  // `old-foreign` (issue 29's third turn): yesterday (20 h before the run) the panel or another shop
  // bought every other top-up row's very pack for its very player, without a trxid.
  if (has(w, 'old-foreign')) {
    s.files.forEach((f, fi) => f.rows.forEach((r, ri) => {
      if (r.userId === undefined || (fi + ri) % 2 !== 0 || !api.account.packs.some((p) => p.id === r.pid)) return;
      api.seedForeign({ pid: r.pid, trxid: null, userId: r.userId, ...(r.zoneId !== undefined ? { zoneId: r.zoneId } : {}), agoMs: 20 * 3_600_000 });
    }));
  }
  if (two) {
    const b = new ModelApi(sim, two.api, s.seed, modelAccount(1));
    apis.push(b);
    if (two.sameSupplier) {
      api.peer = b;
      b.peer = api;
      // One supplier: another API user's trxids are another user's at both accounts.
      for (const t of s.forbidden) b.forbidden.add(t.toLowerCase());
    }
    mkdirSync(join(home, 'keys'), { mode: 0o700 });
    writeFileSync(join(home, 'keys', 'main.key'), `${SIM_KEY}\n`, { mode: 0o600 });
    writeFileSync(join(home, 'keys', 'second.key'), `${SIM_KEY_B}\n`, { mode: 0o600 });
  }
  // Issue 31 (`checks`): the players that do not exist, at every account of the run (one game,
  // one set of players); and the players whose every row says send without a check.
  const checkWorld = has(w, 'checks') && w!.checks ? w!.checks : undefined;
  const overrideOnly = new Set<string>();
  if (checkWorld) {
    const plain = new Set<string>();
    for (const f of s.files) {
      for (const r of f.rows) {
        const pack = [...PACKS, DEAR_PACK_A].find((p) => p.id === r.pid);
        const kind = pack ? checkKindOf(pack.slug) : null;
        if (kind === null || r.userId === undefined) continue;
        const key = ghostKey(kind, r.userId, r.zoneId);
        if (r.ghost) for (const m of apis) m.ghosts.add(key);
        if (r.noCheck) overrideOnly.add(key);
        else plain.add(key);
      }
    }
    for (const k of plain) overrideOnly.delete(k);
  }
  // accounts.toml as a reseller writes it, keys in files of their own (0600), read and validated by
  // loadConfig like any home's (config/accounts.ts). Issue 29: the operator edits it between
  // restarts (world.ts ConfigEdit): `accounts` lists each account's name and the host it reaches
  // (its URL and key: host 0 is the first model API, host 1 the second).
  const original: AccountsFile = { accounts: [{ name: NAMES[0], host: 0 }, { name: NAMES[1], host: 1 }], routing: two?.routing ?? 'cheapest', maxQueueDelayMs: two?.maxQueueDelayMs ?? 30_000, limits: '40/1s,200/1m' };
  let accountsFile: AccountsFile = original;
  /** The observer's store connection, once it is open (config edits look at the store through it). */
  let observerRt: Runtime | undefined;
  /** Every name an account was ever given, to its model API (renames add names). */
  const nameModel = new Map<string, ModelApi>();
  /**
   * Batches stored while accounts.toml named one account (config-rename removed the other): the
   * file's `account` column is read as a pin only in a home with several accounts (docs/accounts.md,
   * claim/placement.ts), so those rows are not pinned. Found by the batches that appeared between
   * the edit that left one account and the one that put two back (or the run's end).
   */
  const unpinnedBatches = new Set<string>();
  let oneAccountFrom: Set<string> | null = null;
  const batchIds = (): Set<string> => new Set(observerRt ? (observerRt.db.prepare('SELECT id FROM batches').all() as { id: string }[]).map((b) => b.id) : []);
  const oneAccountEnds = (): void => {
    if (!oneAccountFrom) return;
    for (const id of batchIds()) if (!oneAccountFrom.has(id)) unpinnedBatches.add(id);
    oneAccountFrom = null;
  };
  const oneAccountPeriods = (before: AccountsFile, after: AccountsFile): void => {
    if (before.accounts.length > 1 && after.accounts.length < 2) oneAccountFrom = batchIds();
    else if (before.accounts.length < 2 && after.accounts.length > 1) oneAccountEnds();
  };
  /** Every host each name was ever given to (a re-point gives one name two). */
  const nameHosts = new Map<string, Set<number>>();
  const writeAccounts = (f: AccountsFile): void => {
    if (two) oneAccountPeriods(accountsFile, f);
    accountsFile = f;
    for (const a of f.accounts) if (!nameModel.has(a.name)) nameModel.set(a.name, apis[a.host]!);
    for (const a of f.accounts) nameHosts.set(a.name, new Set([...(nameHosts.get(a.name) ?? []), a.host]));
    if (!two) return;
    writeFileSync(
      join(home, 'accounts.toml'),
      [
        `routing = "${f.routing}"`,
        `max_queue_delay = "${f.maxQueueDelayMs / 1000}s"`,
        '',
        ...f.accounts.flatMap((a) => ['[[account]]', `name = "${a.name}"`, `url = "${a.host === 0 ? API_URL : API_URL_B}"`, `key_file = "keys/${a.host === 0 ? 'main' : 'second'}.key"`, '']),
      ].join('\n'),
      { mode: 0o600 },
    );
  };
  if (!two) nameModel.set('default', api);
  writeAccounts(original);
  /** The model API of an account (by its name in the store), and of a URL's host. */
  /**
   * Where each trxid was sent, under which account name (issue 29: names and hosts change with
   * config edits). The model API a row's trxid reached is the one that judges it.
   */
  const sentAs = new Map<string, Set<ModelApi>>();
  const sentTo = new Map<string, Set<ModelApi>>();
  const sentNames = new Map<string, Set<string>>();
  const onPost = (m: ModelApi, trxid: string): void => {
    const name = two ? (accountsFile.accounts.find((a) => apis[a.host] === m)?.name ?? m.account.name) : 'default';
    const k = `${name}\u0000${trxidKey(trxid)}`;
    sentAs.set(k, new Set([...(sentAs.get(k) ?? []), m]));
    sentTo.set(trxidKey(trxid), new Set([...(sentTo.get(trxidKey(trxid)) ?? []), m]));
    const mk = `${apis.indexOf(m)}\u0000${trxidKey(trxid)}`;
    sentNames.set(mk, new Set([...(sentNames.get(mk) ?? []), name]));
  };
  const apiOf = (account: string, trxid?: string | null): ModelApi => {
    const sent = trxid ? sentAs.get(`${account}\u0000${trxidKey(trxid)}`) : undefined;
    if (sent && sent.size === 1) return [...sent][0]!;
    return nameModel.get(account) ?? apis.find((m) => m.account.name === account) ?? api;
  };
  /** The account name an order of this model API was sent as (the model's own name unless a config edit renamed or re-pointed it). */
  const accountOf = (m: ModelApi, trxid: string | null): string => {
    const names = trxid === null ? undefined : sentNames.get(`${apis.indexOf(m)}\u0000${trxidKey(trxid)}`);
    return names && names.size === 1 ? [...names][0]! : m.account.name;
  };
  /**
   * Whether two names in the store name one account: the same name, or (a rename: the same endpoint
   * and key under a new name) two names each only ever given to one and the same host. A name a
   * re-point gave two hosts is judged by its name alone.
   */
  const sameAccount = (a: string, b: string): boolean => {
    if (a === b) return true;
    const ha = nameHosts.get(a);
    const hb = nameHosts.get(b);
    return ha !== undefined && hb !== undefined && ha.size === 1 && hb.size === 1 && [...ha][0] === [...hb][0];
  };
  const apiAt = (url: URL): ModelApi => (two && url.host === new URL(API_URL_B).host ? apis[1]! : api);
  const configNow = (): Config => loadConfig({
    TOPUP_HOME: home,
    ...(two ? {} : { TOPUP_API_URL: API_URL, TOPUP_API_KEY: SIM_KEY }),
    TOPUP_POLL_INTERVAL_MS: '5000',
    TOPUP_REQUEST_TIMEOUT_MS: '15000',
    TOPUP_REVIEW_AFTER_MS: String(SIM_REVIEW_AFTER_MS),
    TOPUP_RETRY_AFTER_MAX_MS: '60000',
    TOPUP_RATE_LIMITS: accountsFile.limits,
    TOPUP_PARTIAL_RESULT_MS: '3600000',
    TOPUP_LOG_LEVEL: 'silent',
    // Issue 31: player checks on for the drawn lines, priced at the supplier's tariff.
    ...(checkWorld ? { TOPUP_PLAYER_CHECKS: checkWorld.lines, TOPUP_PLAYER_CHECK_PRICE_USD: String(checkWorld.priceUsd) } : {}),
  });
  /** The configuration processes start with: read again after every config edit (issue 29). */
  let config = configNow();
  const dead = new Set<string>();
  const procs: Proc[] = [];
  const failures: string[] = [];
  const drops: Drop[] = [];
  /** Batches `topup run-covered` was asked for (invariant 26). */
  const runCovered = new Set<string>();
  let pendingOps = 0;
  let counter = 0;
  let crashes = 0;
  const actionsLeft = { n: s.actions.length };

  const logger = (owner: string): Logger => (opts.verbose ? verboseLogger(owner, sim) : silentLogger());
  /** Every exchange with a model API (39 reads the history answers, 40 the failed reads), pruned by the sampler. */
  let exchanges: Exchange[] = [];
  /** Invariant 41: moves to review written by a process that did not hold its batch's lease. */
  const staleReviews: string[] = [];
  /** Requests each process sent (invariant 42: whether a refused resolve asked the API at all). */
  const asked = new Map<string, number>();
  /**
   * `stall` (world.ts, the ninth turn): the daemon sending the drawn request is stopped for the
   * drawn time right after it leaves (SimScheduler.pause), while another daemon lives to take its
   * batches once its leases lapse.
   */
  const stallOn = has(w, 'stall') && w?.stall !== undefined ? w.stall : null;
  const stallStats = { seen: 0, stops: 0, resumedAfterTake: 0 };
  /** Daemons stopped past their lease: the answer they waited for reaches a process that may no longer apply it (invariant 37 reads them as interrupted). */
  const stalledOwners = new Set<string>();
  const kindOf = (x: Exchange): 'history' | 'order' | 'post' | null =>
    x.method === 'POST' && x.path.endsWith('/orders') ? 'post' : x.method !== 'GET' ? null : x.path.endsWith('/history') ? 'history' : /\/orders\/[^/]+$/.test(x.path) ? 'order' : null;
  const onExchange = (owner: string) => (x: Exchange): void => {
    exchanges.push(x);
    asked.set(owner, (asked.get(owner) ?? 0) + 1);
    if (stallOn === null || !owner.includes(':daemon') || kindOf(x) !== stallOn.on) return;
    if (!procs.some((p) => p.alive && p.kind === 'daemon' && p.id !== owner && !p.stopping && !sim.paused(p.id))) return;
    if (stallStats.seen++ !== stallOn.nth) return;
    stallStats.stops++;
    stalledOwners.add(owner);
    sim.pause(owner, stallOn.ms);
  };
  const open = (owner: string): Runtime => {
    const rt = openRuntime(config, logger(owner), API_URL, {
      clock: sim.clockFor(owner),
      entropy: seededEntropy(s.seed + ++counter * 7919),
      transport: simTransport(sim, apiAt, owner, seededEntropy(s.seed + counter * 104_729), onPost, onExchange(owner)),
      owner,
      ownerIsDead: (o) => dead.has(o),
    });
    // 41. Only the lease holder moves a row to review (store/rows.ts: "Only by the lease holder"; a
    // process that lost the batch must not write over the new owner's outcome). Looked at around
    // each move the engine makes: which process holds the batch, and until when, just before it
    // (one thread, a synchronous store: nothing else writes in between).
    const leaseOf = rt.db.prepare('SELECT owner, lease_until AS until FROM batches WHERE id = ?');
    const judged = (name: string, batchId: string, idx: number, actor: { now: number }, move: () => boolean): boolean => {
      const lease = leaseOf.get(batchId) as { owner: string | null; until: number | null } | undefined;
      const moved = move();
      if (moved && !(lease && lease.owner === owner && (lease.until ?? 0) > actor.now)) {
        staleReviews.push(`REVIEW BY THE LEASE HOLDER (41): ${owner} moved row ${idx} of batch ${batchId} to review (${name}) at ${(sim.mono / 1000).toFixed(1)} s while the batch was held by ${lease?.owner ?? 'nobody'}${lease?.until != null ? ` until ${new Date(lease.until).toISOString()} (its clock: ${new Date(actor.now).toISOString()})` : ''}`);
      }
      return moved;
    };
    // `stall` (world.ts): a stopped daemon may resume just after another process took one of its batches.
    const resumeAfterTakeMs = stallOn?.resumeAfterTakeMs;
    if (resumeAfterTakeMs != null) {
      const acquire = rt.batches.acquire.bind(rt.batches);
      Object.assign(rt.batches, {
        acquire: (...a: Parameters<typeof acquire>): boolean => {
          const before = (leaseOf.get(a[0]) as { owner: string | null } | undefined)?.owner ?? null;
          const took = acquire(...a);
          if (took && before !== null && before !== owner && sim.paused(before)) {
            stallStats.resumedAfterTake++;
            sim.resume(before, resumeAfterTakeMs);
          }
          return took;
        },
      });
    }
    const toReview = rt.rows.toReview.bind(rt.rows);
    const restoredUnknown = rt.rows.restoredUnknown.bind(rt.rows);
    Object.assign(rt.rows, {
      toReview: (...a: Parameters<typeof toReview>): boolean => judged(a[0], a[1], a[2], a[3], () => toReview(...a)),
      restoredUnknown: (...a: Parameters<typeof restoredUnknown>): boolean => judged('restored-unknown', a[0], a[1], a[2], () => restoredUnknown(...a)),
    });
    return rt;
  };
  const editStats = { edits: 0, refused: 0, renames: 0 };
  /** accounts.toml as it was when a process last started on it (the one the store's unsettled rows agree with). */
  let lastStarted: AccountsFile = original;
  /**
   * Invariant 13: a result file names each account as the store named it when the file was
   * written (a file handed out is never rewritten; a rename takes the rows to the new name at the
   * next start: store/account-identity.ts). Before a start on an accounts file whose names differ
   * from the last start's (the start that renames), the names of every finished batch's rows are
   * kept, per result version: the first kept for a version is the one its file was written with.
   */
  const writtenAs: WrittenAs = new Map();
  const keepWrittenNames = (): void => {
    if (!observerRt) return;
    const db = observerRt.db;
    const done = db.prepare(`SELECT id, result_version AS v FROM batches WHERE state IN ('done', 'duplicate')`).all() as { id: string; v: number }[];
    const rowsOf = db.prepare('SELECT idx, account, moves_json AS moves FROM rows WHERE batch_id = ?');
    for (const b of done) {
      if (writtenAs.get(b.id)?.version === b.v) continue;
      const names = new Map<number, { account: string; movedFrom: string[] }>();
      for (const r of rowsOf.all(b.id) as { idx: number; account: string; moves: string | null }[]) {
        names.set(r.idx, { account: r.account, movedFrom: r.moves ? (JSON.parse(r.moves) as { from: string }[]).map((m) => m.from) : [] });
      }
      writtenAs.set(b.id, { version: b.v, rows: names });
    }
  };
  const namesOf = (f: AccountsFile): string => f.accounts.map((a) => `${a.name}@${a.host}`).sort().join(',');
  const runtime = (owner: string): Runtime => {
    if (two && namesOf(accountsFile) !== namesOf(lastStarted)) keepWrittenNames();
    try {
      const rt = open(owner);
      lastStarted = accountsFile;
      return rt;
    } catch (err) {
      // Issue 29: the start refuses an accounts.toml that re-points an account holding unsettled
      // rows. That is the product's answer, not a failure of the run: the operator reads it and,
      // the hosts here being other supplier accounts (never `accounts confirm`), points the file
      // back to what the processes last ran on, and starts again.
      if (!two || !(err instanceof AccountsRepointedError) || accountsFile === lastStarted) throw err;
      editStats.refused++;
      writeAccounts(lastStarted);
      config = configNow();
      return open(owner);
    }
  };

  /** The run is over: processes are being stopped, none is started again. */
  let ending = false;
  /**
   * `restore` (sim/restore.ts): while the operator restores an older copy, no daemon starts (the
   * restarts of earlier crashes and stops wait: every slot is started after the restore); once it
   * is restored, every daemon start does what daemon.ts does before its runner: batch folders the
   * store does not know are adopted (claim/orphans.ts), and the reconcile accepts the journal's API
   * orders again. Other schedules start daemons as before.
   */
  let restoring = false;
  let restored = false;
  const restoreOn = has(s.world, 'restore') && s.world?.restore !== undefined;
  /**
   * `restore` with two daemons (invariant 40; issue 32: a second daemon that stops retrying must not
   * leave rows unsent when the first is gone): in one schedule in two, chosen by a hash of the seed
   * (no draw taken: every other draw stays), the host of the daemon holding the restored home's
   * batches is gone for good a few seconds after the restart: it is killed and never started again.
   */
  const goneDraw = restoreOn && s.daemons > 1 && hashOf(`gone:${s.seed}`) % 2 === 0;
  const goneSlots = new Set<number>();
  let goneAt: number | null = null;
  const startDaemon = (slot: number): void => {
    if (ending || restoring || goneSlots.has(slot)) return;
    const owner = `sim:${++counter}:daemon${slot}`;
    const rt = runtime(owner);
    let deskForJournal: OrderDesk | undefined;
    const runner = new Runner(rt, restoreOn ? { recoverJournal: async () => (deskForJournal ? recoverFromJournal(rt, deskForJournal) : null) } : {});
    const p: Proc = { id: owner, kind: 'daemon', slot, rt, runner, alive: true, done: Promise.resolve() };
    if (s.shop) p.desk = createOrderDesk(rt, () => runner.wake());
    deskForJournal = p.desk;
    procs.push(p);
    // The daemon's start-up sweep of the inbox, and the periodic one (daemon.ts sweepInbox) that
    // offers again a file whose claim did not happen (a crash between its record and its move).
    const sweep = (): void => {
      if (!p.alive) return;
      for (const f of inboxFiles(config)) runner.offerFile(f);
      sim.at(SWEEP_EVERY_MS, owner, `${owner} sweeps the inbox`, sweep);
    };
    sim.at(0, owner, `${owner} sweeps the inbox`, sweep);
    const adopted = restored
      ? adoptOrphans(rt)
          .then((orphans) => noteOrphansForRestore(rt.meta, orphans))
          .catch((err: unknown) => failures.push(`${owner}: batch folders the store does not know could not be looked at: ${(err as Error)?.message ?? String(err)}`))
      : null;
    p.done = (adopted ? adopted.then(() => runner.run()) : runner.run()).then(
      () => void (p.alive = false),
      (err: unknown) => {
        if (p.alive) failures.push(`${owner} stopped with an error: ${(err as Error)?.stack ?? String(err)}`);
        p.alive = false;
      },
    );
  };

  /** Who waits for a process to end, however it ends: its own return, or a kill (whose chains never resume). */
  const deathWaiters = new Map<Proc, (() => void)[]>();
  const killed = new Set<Proc>();
  const ended = (p: Proc): Promise<void> => Promise.race([p.done, new Promise<void>((res) => {
    if (!p.alive) res();
    else deathWaiters.set(p, [...(deathWaiters.get(p) ?? []), res]);
  })]);
  const kill = (p: Proc, ownerDead: boolean): void => {
    if (!p.alive) return;
    p.alive = false;
    killed.add(p);
    for (const res of deathWaiters.get(p) ?? []) res();
    deathWaiters.delete(p);
    crashes++;
    sim.drop(p.id);
    if (ownerDead) dead.add(p.id);
    try {
      p.rt.db.close();
    } catch {
      // An open statement: the connection stays as a dead process's would, holding no transaction.
    }
  };

  /** A command process (retry, cancel, resolve): its own owner, run to its end. */
  const command = (what: string, fn: (rt: Runtime) => Promise<void>): void => {
    const owner = `sim:${++counter}:${what}`;
    const rt = runtime(owner);
    pendingOps++;
    const p: Proc = { id: owner, kind: 'command', slot: -1, rt, runner: null, alive: true, done: Promise.resolve() };
    procs.push(p);
    p.done = fn(rt)
      .catch((err: unknown) => {
        // Refusals a person would read (nothing to retry, not finished yet) are part of the game.
        const e = err as { code?: string; message?: string };
        if (e.code !== ErrorCode.Usage && e.code !== ErrorCode.NotFound) failures.push(`${what} failed: ${(err as Error)?.stack ?? String(err)}`);
      })
      .finally(async () => {
        p.alive = false;
        await rt.close().catch(() => {});
        pendingOps--;
      });
  };

  const dropFile = (a: Extract<Action, { kind: 'drop' }>): void => {
    const file = s.files[a.file % s.files.length]!;
    const { rows, keys, header, cells } = edited(file, a.file % s.files.length, a.edit, two);
    const name = `f${a.file % s.files.length}-${drops.length}.csv`;
    const tmp = join(home, `.${name}.writing`);
    writeFileSync(tmp, (file.delimiter === ';' ? '\ufeff' : '') + stringify([header, ...cells], { delimiter: file.delimiter, record_delimiter: 'windows' }));
    const path = join(config.inboxDir, name);
    renameSync(tmp, path);
    drops.push({ name, file: a.file % s.files.length, rows, keys, again: false, edit: a.edit });
    // Each daemon's watcher sees the file on its own event: two claims never race on real I/O
    // inside one event (that would make the run depend on the disk, not the seed).
    for (const p of procs) if (p.alive && p.kind === 'daemon') sim.at(1 + procs.indexOf(p), p.id, `${p.id} sees ${name}`, () => p.runner!.offerFile(path));
  };

  const submit = (a: Extract<Action, { kind: 'submit' }>): void => {
    const file = s.files[a.file % s.files.length]!;
    const { rows, keys, header, cells } = edited(file, a.file % s.files.length, a.edit ?? 'none', two);
    const name = `f${a.file % s.files.length}-${drops.length}.csv`;
    const path = join(home, name);
    writeFileSync(path, stringify([header, ...cells], { delimiter: file.delimiter }));
    drops.push({ name, file: a.file % s.files.length, rows, keys, again: a.again, submitted: true, edit: a.edit ?? 'none' });
    const owner = `sim:${++counter}:submit`;
    const rt = runtime(owner);
    pendingOps++;
    const p: Proc = { id: owner, kind: 'submit', slot: -1, rt, runner: null, alive: true, done: Promise.resolve() };
    procs.push(p);
    p.done = (async () => {
      const batch = await claimFile(rt, path, { origin: 'submit', own: true, move: false, again: a.again });
      // As `topup submit` (commands/foreground.ts runBatchInForeground): its reconcile after a
      // restore, if it is the first process to start, accepts the order API's journal again. The
      // model's submit ran without it (seed 20261127 #103 drawn on 60e2d0f: a submit reconciled the
      // restored copy first, API-6 and API-7 were never taken back, their purchases held by no row).
      let desk: OrderDesk | undefined;
      p.runner = new Runner(rt, { once: true, onlyBatch: batch.id, ...(restoreOn ? { recoverJournal: () => recoverFromJournal(rt, (desk ??= createOrderDesk(rt, () => p.runner?.wake()))) } : {}) });
      await p.runner.run();
    })()
      .catch((err: unknown) => {
        if (p.alive) failures.push(`${owner} failed: ${(err as Error)?.stack ?? String(err)}`);
      })
      .finally(async () => {
        const wasAlive = p.alive;
        p.alive = false;
        if (!wasAlive) return; // killed: already counted out, and its connection is closed
        await rt.close().catch(() => {});
        pendingOps--;
      });
  };

  const newestBatchOf = (rt: Runtime, fileIdx: number, finished: boolean, states?: readonly BatchState[]): string | undefined => {
    const names = new Set(drops.filter((d) => d.file === fileIdx).map((d) => d.name));
    return rt.batches.list().find((b) => names.has(b.sourceName) && (b.finishedAt !== null) === finished && (states === undefined || states.includes(b.state)))?.id;
  };

  /** Every trxid a review row's reason names: its own, those it had on accounts it left, each written in its error, and `<trxid>-<account>` for every account name the run used. */
  const namedTrxids = (r: Row): string[] => {
    const roots = [r.trxid!, ...r.moves.map((m) => m.trxid)];
    const out = new Set<string>(roots);
    const folded = roots.map((t) => foldTrxid(t));
    for (const [token] of (r.error ?? '').matchAll(/[^\s,;:()'"]+/g)) {
      const t = token.replace(/[.)]+$/, '');
      const ft = foldTrxid(t);
      if (folded.some((f) => ft === f || ft.startsWith(`${f}-`))) out.add(t);
    }
    for (const root of roots) for (const name of nameModel.keys()) out.add(`${root}-${name}`);
    return [...out];
  };
  /** Invariant 42: each `topup review resolve` the operator gave, and the row just after it. */
  const resolves: ResolveSeen[] = [];
  const resolveSeen = (rt: Runtime, r: Row, kind: ResolveSeen['kind'], refused: string | null, extra: Pick<ResolveSeen, 'askedApi' | 'heldElsewhere'> = {}): ResolveSeen => {
    const after = rt.rows.get(r.batchId, r.idx);
    return { batchId: r.batchId, line: r.line, kind, refused, stateAfter: after?.state ?? 'gone', resolvedAfter: after?.resolution != null, ...extra };
  };
  /** Rows not ended yet (LIVE_STATES): each ends or, in doubt, reaches review within the liveness bound. */
  const liveRows = (): number => (observerRt ? (observerRt.db.prepare(`SELECT count(*) FROM rows WHERE state IN (${LIVE_STATES.map((x) => `'${x}'`).join(', ')})`).pluck().get() as number) : 0);
  /**
   * The operator's `topup review resolve` comes at a drawn 5-15 simulated minutes; rows in doubt
   * reach review 10-14 minutes in (LIVENESS_BOUND_MS), so an operator who came once, early, met
   * none (the eighth turn: `resolve-refused` not found in 150 schedules). A person whose files are
   * not done watches the console's review list: while no row waits for review and some row is
   * live, the operator looks again every 30 s (up to the liveness bound and 5 minutes more), and
   * settles the rows in review at the first look that finds any (one pass: the rows that reach
   * review later are left to the review recheck, which invariant 29 judges).
   */
  const RESOLVE_LOOK_MS = 30_000;
  const resolveWaits = { n: 0 };
  const watchForReview = (a: Extract<Action, { kind: 'resolve' }>): void => {
    let waited = 0;
    const look = (): void => {
      const waiting = observerRt ? observerRt.rows.reviewRows({ limit: 1 }).length : 0;
      if (!ending && waiting === 0 && waited < LIVENESS_BOUND_MS + 5 * 60_000 && liveRows() > 0) {
        if (waited === 0) {
          actionsLeft.n++;
          resolveWaits.n++;
        }
        waited += RESOLVE_LOOK_MS;
        sim.at(RESOLVE_LOOK_MS, null, 'the operator looks at the review list again', look);
        return;
      }
      if (waited > 0) actionsLeft.n--;
      if (!ending) resolveNow(a);
    };
    look();
  };

  /** Whether another row than `r` holds this order id at its account (`topup review resolve --charged` refuses it, --force or not). */
  const heldByOther = (rt: Runtime, id: string | undefined, r: Row): boolean => {
    const h = id === undefined ? undefined : rt.rows.placedBy(id.trim(), r.account);
    return h !== undefined && !(h.batchId === r.batchId && h.idx === r.idx);
  };
  /** The operator settles every review row by what the supplier's panel shows (the model's truth). */
  const resolveNow = (a: Extract<Action, { kind: 'resolve' }>): void =>
    command('resolve', async (rt) => {
      for (const r of rt.rows.reviewRows()) {
        if (r.trxid === null) continue;
        // The operator looks the trxid up in the supplier's panel: an order this row's sends made.
        const panel = apiOf(r.account);
        const o = panel.byTrxid(r.trxid);
        const ours = o !== undefined && o.origin === 'engine';
        // A careful person also looks up every other trxid the review names, at every account
        // (after a restore: `<trxid>-main`, "check … for trxid X and X-<account>"): an order of
        // ours under one of them means the row may be charged, so it is never resolved "not
        // charged" (that would let `topup retry` buy it again); the person leaves it for the
        // one who can tell which purchase it is. Seed 3 #31 of the restore class: the operator
        // had looked only at the row's own trxid.
        const elsewhere = ours ? undefined : namedTrxids(r).flatMap((t) => apis.map((m) => m.byTrxid(t)).filter((x) => x !== undefined && x.origin === 'engine'))[0];
        if (elsewhere) continue;
        // A slip of the eye: the panel's line above, an order another row holds (forced past the check).
        // (Held on this row's account: an id another account's row holds is another order there.)
        const other = a.slip === 'other' ? panel.orders.find((x) => x.origin === 'engine' && x !== o && rt.rows.placedBy(x.orderId, r.account) !== undefined) : undefined;
        const typed = other ? other.orderId.toLowerCase() : ours && a.slip === 'case' ? o.orderId.toLowerCase() : o?.orderId;
        const kind = other ? 'forced' : ours ? 'charged' : 'not-charged';
        let refused: string | null = null;
        const askedBefore = asked.get(rt.owner) ?? 0;
        try {
          await resolveReview(rt, { batchId: r.batchId, line: r.line, by: 'sim-operator', ...(other ? { chargedOrderId: typed!, force: true } : ours ? { chargedOrderId: typed! } : { notCharged: true }) });
        } catch (err) {
          refused = (err as Error)?.message ?? String(err);
          // Invariant 42: a --charged of the panel's own order may be refused for what the API says
          // of it (or cannot say), or for another row holding it; never without asking the API.
          const extra = { askedApi: (asked.get(rt.owner) ?? 0) > askedBefore, heldElsewhere: heldByOther(rt, typed, r) };
          // A refusal of a slip is the point; the operator goes on to the next row.
          if ((err as { code?: string }).code !== ErrorCode.Usage || !other) {
            resolves.push(resolveSeen(rt, r, kind, refused, extra));
            throw err;
          }
        }
        resolves.push(resolveSeen(rt, r, kind, refused));
      }
    });

  const act = (a: Action): void => {
    switch (a.kind) {
      case 'drop': return dropFile(a);
      case 'submit': return submit(a);
      case 'retry': {
        const retry = (): void =>
          command('retry', async (rt) => {
            const id = newestBatchOf(rt, a.file % s.files.length, true);
            if (id) await createRetryBatch(rt, id, { repeats: a.repeats });
          });
        retry();
        if (a.twice) retry();
        return;
      }
      case 'cancel':
        return command('cancel', async (rt) => {
          // The newest batch of the file still ordering (a copy of a file already taken orders nothing: `topup cancel` refuses it).
          const id = newestBatchOf(rt, a.file % s.files.length, false, ORDERING_BATCH_STATES);
          if (id) requestCancel(rt, id);
        });
      case 'run-covered':
        return command('run-covered', async (rt) => {
          // The operator acts on a batch the console shows waiting for balance: this file's, else any.
          const waiting = rt.batches.list().filter((b) => b.waitReason === 'balance' && b.finishedAt === null);
          const names = new Set(drops.filter((d) => d.file === a.file % s.files.length).map((d) => d.name));
          const id = (waiting.find((b) => names.has(b.sourceName)) ?? waiting[0])?.id ?? newestBatchOf(rt, a.file % s.files.length, false, ORDERING_BATCH_STATES);
          if (!id) return;
          try {
            requestRunCovered(rt, id);
            runCovered.add(id);
          } catch (err) {
            // Not waiting for balance (or no longer): the command refuses, as it should.
            if ((err as { code?: string }).code !== ErrorCode.Usage) throw err;
          }
        });
      case 'resolve':
        return watchForReview(a);
      case 'crash': {
        const live = procs.filter((p) => p.alive && p.kind !== 'command');
        const p = live[a.proc % Math.max(1, live.length)];
        if (!p) return;
        kill(p, a.dead);
        if (p.kind === 'daemon') restart(p);
        // A killed submit never ends its own chain: it is no longer pending.
        if (p.kind === 'submit') pendingOps--;
        return;
      }
      case 'stop': {
        const p = procs.filter((x) => x.alive && x.kind === 'daemon')[a.proc % s.daemons];
        if (!p) return;
        p.stopping = true;
        p.runner!.stop();
        void p.done.then(async () => {
          await Promise.allSettled([...(p.accepting ?? [])]);
          await p.rt.close().catch(() => {});
          sim.at(s.restartMs, null, `restart daemon ${p.slot}`, () => startDaemon(p.slot));
        });
        return;
      }
      case 'top-up': return apis.forEach((m) => m.topUp(a.usd));
      case 'clock-step': return sim.stepWall(a.ms);
    }
  };

  const restart = (p: Proc): void => void sim.at(s.restartMs, null, `restart daemon ${p.slot}`, () => startDaemon(p.slot));

  // ── The shop (issue 23, sim/shop.ts): orders through the order desk of whichever daemon is up. ──
  const shop = s.shop;
  const attempts: ShopAttempt[] = [];
  /** Outstanding: calls not made yet, attempts not answered, resends not sent yet. */
  let shopLeft = 0;
  const shopRand = seededEntropy((s.seed ^ 0x5109) + 3);
  const shopStats = { together: 0, cuts: 0 };
  const fileTrxid = (f: number, r: number): string | undefined => {
    const file = s.files[f % s.files.length]!;
    return file.trxidColumn ? file.rows[r % file.rows.length]!.trxid : undefined;
  };
  const answerOf = (o: AcceptOutcome): NonNullable<ShopAttempt['answer']> =>
    o.kind === 'refused' ? { kind: 'refused', status: o.status, code: o.code } : { kind: o.kind, batchId: o.order.batchId, trxid: o.order.trxid, status: o.order.status };
  /** Issue 29 (`unicode`): the shop's own trxids from the whole of Unicode, one of them not well-formed text (a lone surrogate: valid JSON). */
  const worldTrxid = (o: { trxid: object }, t: string): string => {
    if (!has(w, 'unicode') || !('own' in o.trxid)) return t;
    const own = (o.trxid as { own: number }).own;
    return own === 7 ? `LS-\ud800${own}` : `${w!.trxidPrefixes[own % w!.trxidPrefixes.length]}-API-${own}`;
  };
  const sendOrders = (orders: { trxid: string; body: OrderInput }[], tries: number, call: number): void => {
    const lat = (): number => 1 + Math.floor(shopRand.random() * 30);
    const mine = orders.map((o) => {
      const a: ShopAttempt = { trxid: o.trxid, body: o.body, canon: canonicalBody(o.body), at: sim.mono, to: null, call, tries, answer: null };
      attempts.push(a);
      shopLeft++;
      return a;
    });
    const settle = (a: ShopAttempt, answer: NonNullable<ShopAttempt['answer']>): void => {
      if (a.answer !== null) return;
      a.answer = answer;
      shopLeft--;
      // No answer (or a 500): the shop cannot know whether the order is stored, and sends the same body again.
      if ((answer.kind === 'none' || answer.kind === 'error') && a.tries < MAX_TRIES) {
        shopLeft++;
        sim.at(shop!.resendAfterMs, null, `shop resends ${a.trxid}`, () => {
          shopLeft--;
          sendOrders([{ trxid: a.trxid, body: a.body }], a.tries + 1, a.call);
        });
      }
    };
    const daemons = procs.filter((p) => p.alive && !p.stopping && p.kind === 'daemon' && p.desk);
    if (daemons.length === 0) {
      for (const a of mine) settle(a, { kind: 'none', why: 'no daemon listening' });
      return;
    }
    // Concurrent requests are spread over the daemons up (two processes may accept one trxid at once).
    const groups = new Map<Proc, ShopAttempt[]>();
    for (const a of mine) {
      const p = daemons[Math.floor(shopRand.random() * daemons.length)]!;
      a.to = p.id;
      groups.set(p, [...(groups.get(p) ?? []), a]);
    }
    for (const a of mine) {
      const cancel = sim.at(SHOP_TIMEOUT_MS, null, `the shop's timeout for ${a.trxid}`, () => settle(a, { kind: 'none', why: 'timeout (the daemon died, or no answer in 30 s)' }));
      a.cancelTimeout = cancel;
    }
    for (const [p, xs] of groups) {
      if (xs.length > 1) shopStats.together++;
      // The requests reach the process together (one event: one group commit); a dead process takes none.
      sim.at(lat(), p.id, `${xs.length} order request(s) reach ${p.id}`, () => {
        for (const a of xs) {
          // Its listener closed meanwhile (a graceful stop): the connection is refused.
          if (p.stopping) {
            a.cancelTimeout?.();
            settle(a, { kind: 'none', why: 'connection refused (the daemon is stopping)' });
            continue;
          }
          const accepting = p.desk!.accept(a.body);
          (p.accepting ??= new Set()).add(accepting);
          void accepting.finally(() => p.accepting!.delete(accepting)).catch(() => {});
          accepting.then(
            (out) => void sim.at(lat(), p.id, `${out.kind} for ${a.trxid} reaches the shop`, () => (a.cancelTimeout?.(), settle(a, answerOf(out)))),
            (err: unknown) => void sim.at(lat(), p.id, `500 for ${a.trxid} reaches the shop`, () => (a.cancelTimeout?.(), settle(a, { kind: 'error', message: (err as Error)?.message ?? String(err) }))),
          );
        }
      });
    }
  };
  if (shop) {
    shopLeft += shop.calls.length;
    shop.calls.forEach((c, i) =>
      sim.at(c.at, null, `shop call ${i} (${c.orders.length} order(s))`, () => {
        shopLeft--;
        sendOrders(c.orders.map((o) => {
          const trxid = worldTrxid(o, shopTrxid(o, fileTrxid));
          return { trxid, body: shopBody(o, trxid, two !== undefined) };
        }), 1, i);
      }),
    );
    // A daemon dies while the acceptances of a call are in flight (before their commit, or after it, before the answer).
    for (const cut of shop.cuts) {
      const i = cut.call % shop.calls.length;
      sim.at(shop.calls[i]!.at + cut.afterMs, null, `crash during shop call ${i}`, () => {
        const to = attempts.find((a) => a.call === i)?.to;
        const p = procs.find((x) => x.id === to && x.alive);
        if (!p) return;
        shopStats.cuts++;
        kill(p, cut.dead);
        restart(p);
      });
    }
  }
  // `api-cancel` (the sixth turn): the operator cancels the day's API batch (`topup cancel`, the
  // console) while the shop may still be ordering. Invariant 36 judges what follows; invariant 16
  // lets a cancelled batch finish before its day's end (engine/stages/finishing.ts, order-api.md).
  const apiCancels = new Map<string, { wall: number; mono: number }>();
  if (shop && has(w, 'api-cancel') && w!.apiCancel) {
    actionsLeft.n++;
    const ac = w!.apiCancel;
    const call = ac.afterCall ? shop.calls[ac.afterCall.call % shop.calls.length] : undefined;
    sim.at(call && ac.afterCall ? call.at + 31 + ac.afterCall.ms : ac.at, null, "cancel of the day's API batch", () => {
      actionsLeft.n--;
      command('cancel-api', async (rt) => {
        const b = rt.batches.list().find((x) => x.apiDay !== null && x.finishedAt === null && ORDERING_BATCH_STATES.includes(x.state));
        if (!b) return;
        const out = requestCancel(rt, b.id);
        if (out.kind === 'requested' && !apiCancels.has(b.id)) apiCancels.set(b.id, { wall: rt.clock.now(), mono: sim.mono });
      });
    });
  }
  /** Every public status each API order was seen in, in order (distinct consecutive), sampled after every event. */
  const seenStatus = new Map<string, string[]>();
  let secondDayWhileLive = 0;
  // Speed (docs/simulator.md): the statements are prepared once, and the rows are read again only
  // when another connection committed since the last sample (PRAGMA data_version; the observer
  // writes no row): an unchanged store gives the statuses already seen, so nothing is lost.
  // Per connection: the observer's runtime is opened anew after a restore (the `restore` class).
  let apiOrderReads: { db: Runtime['db']; version: Statement; rows: Statement; seen: unknown } | undefined;
  const sampleApiOrders = (rt: Runtime): void => {
    if (!shop) return;
    if (apiOrderReads?.db !== rt.db) apiOrderReads = { db: rt.db, version: rt.db.prepare('PRAGMA data_version').pluck(), rows: rt.db.prepare('SELECT batch_id, idx, state, first_sent_at FROM rows WHERE api_body_hash IS NOT NULL'), seen: undefined };
    const version = apiOrderReads.version.get();
    if (version === apiOrderReads.seen) return;
    apiOrderReads.seen = version;
    const rows = apiOrderReads.rows.all() as { batch_id: string; idx: number; state: RowState; first_sent_at: number | null }[];
    const batchesBefore = new Set([...seenStatus.keys()].map((k) => k.split(':')[0]));
    for (const r of rows) {
      const k = `${r.batch_id}:${r.idx}`;
      const seq = seenStatus.get(k) ?? [];
      // As the order API shows it: a pending order that was sent before stays `sent` (migration 25).
      const st = publicStatus(r.state, r.first_sent_at !== null);
      if (seq.at(-1) !== st) seq.push(st);
      seenStatus.set(k, seq);
    }
    // A second day's batch made while the first still has live orders.
    const fresh = rows.filter((r) => batchesBefore.size > 0 && !batchesBefore.has(r.batch_id));
    if (fresh.length > 0 && rows.some((r) => batchesBefore.has(r.batch_id) && !['completed', 'cancelled', 'rejected', 'review'].includes(publicStatus(r.state)))) secondDayWhileLive++;
  };

  // Issue 29: config edits between restarts. Every daemon is stopped (gracefully), accounts.toml
  // (and TOPUP_RATE_LIMITS) edited, and the daemons started again on the edited file; later the
  // operator puts the file back as it was, the same way.
  const restartAllWith = (what: string, change: () => void): void => {
    const live = procs.filter((p) => p.alive && p.kind === 'daemon' && !p.stopping);
    for (const p of live) {
      p.stopping = true;
      p.runner!.stop();
    }
    // A daemon killed while it drains (a crash at the edit's instant) never ends its own chain:
    // waiting for it alone left the edit, and the run, waiting for ever (fresh seed 7301).
    void Promise.all(live.map((p) => ended(p).then(async () => {
      await Promise.allSettled([...(p.accepting ?? [])]);
      // A killed process's connection is closed as a dead process's is (kill): nothing more of it runs.
      if (!killed.has(p)) await p.rt.close().catch(() => {});
    }))).then(() => {
      try {
        change();
        config = configNow();
      } catch (err) {
        failures.push(`${what}: the edited configuration was refused: ${(err as Error).message}`);
      }
      editStats.edits++;
      sim.at(s.restartMs, null, `start the daemons after ${what}`, () => {
        actionsLeft.n--;
        for (let slot = 0; slot < s.daemons; slot++) if (!procs.some((p) => p.alive && p.kind === 'daemon' && p.slot === slot && !p.stopping)) startDaemon(slot);
      });
    });
  };
  if (two && w) {
    for (const e of w.edits.filter((x) => has(w, editClass(x.edit)))) {
      actionsLeft.n += 2;
      sim.at(e.at, null, `config edit: ${e.edit.op}`, () => restartAllWith(`config edit ${JSON.stringify(e.edit)}`, () => {
        if (e.edit.op === 'rename') editStats.renames++;
        writeAccounts(applyEdit(accountsFile, e.edit));
      }));
      sim.at(e.at + e.backAfterMs, null, `config edit put back: ${e.edit.op}`, () => restartAllWith(`accounts.toml put back after ${e.edit.op}`, () => writeAccounts(original)));
    }
  }

  // `late-lines` (the fifth turn): an operator or a spreadsheet writes into a file after it was
  // claimed (a writer that kept its handle across the claim: outbox/late-lines.ts): lines appended,
  // a line rewritten, or both. Its mtime is set into the past (the real clock's), so the result
  // does not wait for a writer that is done. Invariant 35: those lines are never ordered, and the
  // result and summary account for every one of them.
  const lateWritten = new Map<string, number>();
  const lateAt = new Map<string, Set<number>>();
  const latePlayers = new Set<string>();
  let lateSeq = 0;
  if (has(w, 'late-lines')) {
    for (const lw of w!.lateWrites ?? []) {
      // The writer comes back to a file whose rows were read (an `open` batch): from the drawn time
      // (folded into the first half minute, when the drops begin), at the first second it finds one
      // (up to six minutes later).
      let tries = 0;
      const write = (): void => {
        if (!observerRt) return;
        const open = observerRt.batches.unfinished().filter((b) => b.apiDay === null && b.state === 'open' && existsSync(join(home, b.jobFile)) && join(home, b.jobFile).startsWith(config.jobsDir)).reverse();
        const b = open[lw.nth % Math.max(1, open.length)];
        if (!b) {
          if (++tries <= 360) sim.at(1_000, null, 'a writer looks for a claimed file again', write);
          return;
        }
        const path = join(home, b.jobFile);
        const text = readFileSync(path, 'utf8');
        const eol = text.includes('\r\n') ? '\r\n' : '\n';
        const lines = text.split(eol);
        while (lines.length > 0 && lines.at(-1) === '') lines.pop();
        const header = lines[0] ?? '';
        const delimiter = header.split(';').length > header.split(',').length ? ';' : ',';
        const width = header.split(delimiter).length;
        // Written under the file's own header (a numbering column may come first: its cell is the line's number).
        const names = header.replace(/^\ufeff/, '').split(delimiter);
        const line = (player: string): string => names.map((n, i) => (n === 'pid' ? 'PUBG-60' : n === 'userId' ? player : i === 0 && numberings.has(n) ? String(lines.length) : '')).concat(Array.from({ length: Math.max(0, width - names.length) }, () => '')).join(delimiter);
        // The lines no stored row stands for as it was read, by line number: a line rewritten twice,
        // or an appended line rewritten, is one line (outbox/late-lines.ts gives each one result row).
        const lateLines = lateAt.get(b.id) ?? new Set<number>();
        lateAt.set(b.id, lateLines);
        if ((lw.how === 'rewrite' || lw.how === 'both') && lines.length > 1) {
          const player = String(5_177_000_000 + ++lateSeq);
          lines[lines.length - 1] = line(player);
          latePlayers.add(player);
          lateLines.add(lines.length);
        }
        if (lw.how === 'append' || lw.how === 'both') {
          for (let i = 0; i < 2; i++) {
            const player = String(5_188_000_000 + ++lateSeq);
            lines.push(line(player));
            latePlayers.add(player);
            lateLines.add(lines.length);
          }
        }
        const n = lateLines.size;
        writeFileSync(path, `${lines.join(eol)}${eol}`);
        // Written a while ago (the writer is done): the result need not wait for it to hold still.
        const past = new Date(Date.now() - 3_600_000);
        utimesSync(path, past, past);
        lateWritten.set(b.id, n);
      };
      sim.at(1_000 + (lw.at % 30_000), null, `lines written into a claimed file (${lw.how})`, write);
    }
  }

  for (let slot = 0; slot < s.daemons; slot++) startDaemon(slot);
  for (const a of s.actions) {
    sim.at(a.at, null, `action ${a.kind}${'file' in a ? ` file ${a.file}` : ''}`, () => {
      actionsLeft.n--;
      act(a);
    });
  }

  // An observer of the store, as an operator's `topup status` would be.
  let observer = runtime('sim:observer');
  observerRt = observer;

  // Invariants 20 and 21 (issue 29), sampled every LIVE_SAMPLE_MS of simulated time: a row in
  // doubt reaches an end or review within LIVENESS_BOUND_MS while its batch waits for nothing it
  // names, and a live row is never left without a reason (its error, its batch's wait) for longer
  // than TOLD_AFTER_MS.
  let liveQuery = observer.db.prepare(`SELECT r.batch_id AS batch, r.idx, r.line, r.state, r.error, r.account, r.trxid, b.wait_reason AS wait, b.source_name AS src FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.state IN (${LIVE_STATES.map((x) => `'${x}'`).join(', ')})`);
  // An account's pause (maintenance, account trouble) is stored in meta (account/pauses.ts) and shown by `topup status`, the console and the notifier: a stated reason too.
  let pausedQuery = observer.db.prepare(`SELECT key, value FROM meta WHERE key = 'dispatch.pause' OR key LIKE 'dispatch.pause:%'`);
  /** Invariant 33: the account pauses present at the last sample (account name → its `since`): a pause is judged when it appears. */
  const pausesSeen = new Map<string, number>();
  /** Invariant 34: the rows judged for a history route gone (flagged once). */
  const goneFlagged = new Set<string>();
  /** How long a row may stay `searching` once the history route is gone: its check comes due (60 s + a poll) and a 404 settles it for review. */
  const HISTORY_GONE_REVIEW_MS = 3 * 60_000;
  const liveTrack = new Map<string, { state: string; doubtMs: number; silentMs: number; since: number }>();
  const liveness: string[] = [];
  const flagged = new Set<string>();
  let lastLive = 0;
  /** Invariant 39: the rows seen `verifying` at the last sample. */
  let verifyingSeen = new Map<string, { batch: string; idx: number }>();
  /** Invariant 40 found a daemon that never sends: the run ends there (the rest would wait for ever). */
  let neverSends: string | null = null;
  const clockSteps = s.actions.some((a) => a.kind === 'clock-step');
  /** What history shows, read as a person reads the page: every order in it listed with a trxid or without, fewer than 200 of them, none under `key`. */
  const clears = (x: Exchange, key: string): boolean => {
    if (x.deliveredAt === null || x.status !== 200 || x.cut || !x.body) return false;
    let orders: unknown;
    try {
      orders = (JSON.parse(x.body) as { orders?: unknown }).orders;
    } catch {
      return false;
    }
    if (!Array.isArray(orders) || orders.length >= 200) return false;
    const trxids = orders.map((o) => (o !== null && typeof o === 'object' ? (o as { trxid?: unknown }).trxid : undefined)).filter((t): t is string => typeof t === 'string');
    return trxids.length > 0 && trxids.every((t) => foldTrxid(t.trim()) !== key);
  };
  /**
   * 39. A `verifying` row (an answer lost, then a resend refused) that history clears moves on:
   * docs/how-it-works.md reads it "not placed" when every order in the history window is clearly
   * someone else's (history lists trxids, reaches back — fewer than 200 orders — and none is the
   * row's), so it never goes to review from that history. Judged for a row seen `verifying` at one
   * sample and in review at the next, when every history its account gave in between was such a
   * page (none failed, none cut, at least one read in the interval), its ledger holds no order
   * under its trxid (any spelling), and its doubt is short of the stall bound (which sends a row to
   * review without reading). Not judged with the wall clock stepping or after a restore (the
   * reconcile has reasons of its own).
   */
  const judgeVerifying = (x: { batch: string; idx: number }, from: number): void => {
    if (clockSteps || restoring || restored) return;
    const row = observer.rows.get(x.batch, x.idx);
    if (!row || row.state !== 'review' || row.trxid === null) return;
    const began = row.doubtSince ?? row.firstSentAt;
    if (began === null || sim.now >= began + REVIEW_BY_MS) return;
    const m = apiOf(row.account, row.trxid);
    const key = foldTrxid(row.trxid);
    if (m.orders.some((o) => o.trxid !== null && foldTrxid(o.trxid.trim()) === key)) return;
    const reads = exchanges.filter((e) => e.api === m && e.path.endsWith('/history') && e.sentAt > from - 30_000 && e.sentAt <= sim.mono);
    const inFlight = (e: Exchange): boolean => e.deliveredAt === null && (e.arrivedAt === null || e.body !== null) && e.sentAt > sim.mono - 16_000;
    if (!reads.some((e) => clears(e, key) && e.deliveredAt! > from) || !reads.every((e) => clears(e, key) || inFlight(e))) return;
    liveness.push(`VERIFYING CLEARED (39): row ${row.line} of batch ${row.batchId} (account ${row.account}, trxid ${row.trxid}) went from verifying to review between ${(from / 1000).toFixed(0)} s and ${(sim.mono / 1000).toFixed(0)} s, though every order history its account gave meanwhile listed trxids, fewer than 200 orders and none under its trxid (and the supplier holds none): history clears it ("not placed", docs/how-it-works.md); told: ${(row.error ?? '').slice(0, 240)}`);
  };
  const sampleLiveness = (): void => {
    const dt = sim.mono - lastLive;
    const from = lastLive;
    lastLive = sim.mono;
    const nowVerifying = new Map<string, { batch: string; idx: number }>();
    const seen = new Set<string>();
    const pauseRows = pausedQuery.all() as { key: string; value: string }[];
    // `restore`: while the home is stopped for a restore, and while the restored store reconciles
    // (its marker, or a file claimed in the restore window waiting for its lookup), the operator is
    // told (`topup status`, the log): nothing is sent until every account has been read.
    const restoreWaits = restoreOn && (restoring || reconcilePending(observer) || hasClaimLookups(observer.db));
    // And a row held on its own for its lookup (store/backup.ts holdRowsInRestoreWindow: the batch's
    // other rows go on) or an API order accepted in the window (markOrderInRestoreWindow): `topup
    // status` names it, why and when it goes to review (ops/restore-reconcile.ts claimLookupStatus).
    // The model read only the batch's mark: seed 20261127 #125 (21) was a row told this way.
    const heldRows = restoreOn ? new Set(orderLookups(observer.db).map((o) => `${o.batchId}:${o.idx}`)) : new Set<string>();
    const paused = new Set(pauseRows.map((x) => (x.key === 'dispatch.pause' ? 'default' : x.key.slice('dispatch.pause:'.length))));
    // 33. An account is paused for account trouble only when its supplier said so (401, 403, a
    // redirect, a missing POST route): a 404 to a read is about that order or route, never the account.
    for (const name of [...pausesSeen.keys()]) if (!paused.has(name)) pausesSeen.delete(name);
    for (const x of pauseRows) {
      const name = x.key === 'dispatch.pause' ? 'default' : x.key.slice('dispatch.pause:'.length);
      let p: { kind?: string; since?: number; code?: string; detail?: string };
      try {
        p = JSON.parse(x.value) as typeof p;
      } catch {
        continue;
      }
      // Judged when it appears (a pause held on by failing probes keeps its reason).
      if (p.kind !== 'account' || pausesSeen.has(name)) continue;
      pausesSeen.set(name, p.since ?? 0);
      const m = apiOf(name);
      const signal = m.accountSignals.some((t) => t <= sim.mono && t >= sim.mono - dt - 60_000);
      if (!signal) liveness.push(`ACCOUNT PAUSE (33): account ${name} paused at ${(sim.mono / 1000).toFixed(1)} s for account trouble (${p.code ?? '?'}: ${(p.detail ?? '').slice(0, 200)}) while its supplier gave no 401, 403, redirect or missing POST route in the last ${Math.round((dt + 60_000) / 1000)} s`);
    }
    for (const r of liveQuery.all() as { batch: string; idx: number; line: number; state: string; error: string | null; account: string; trxid: string | null; wait: string | null; src: string }[]) {
      const k = `${r.batch}:${r.idx}`;
      seen.add(k);
      if (r.state === 'verifying') nowVerifying.set(k, { batch: r.batch, idx: r.idx });
      let t = liveTrack.get(k);
      if (!t || t.state !== r.state) {
        t = { state: r.state, doubtMs: 0, silentMs: 0, since: sim.mono };
        liveTrack.set(k, t);
        continue;
      }
      const stated = r.wait !== null || paused.has(r.account) || restoreWaits || heldRows.has(k);
      if (DOUBT_STATES.includes(r.state) && !stated) t.doubtMs += dt;
      // 34. The history route gone (read-404, never clearing): a row searching cannot be settled by
      // history, so its next history check (a 404) sends it to review, not R later.
      const gone = r.state === 'searching' && !stated ? apiOf(r.account, r.trxid).profile.read404?.gone : undefined;
      if (gone && gone.route === 'history' && sim.mono >= gone.fromMs && sim.mono < gone.untilMs && sim.mono - Math.max(t.since, gone.fromMs) > HISTORY_GONE_REVIEW_MS && !goneFlagged.has(k)) {
        goneFlagged.add(k);
        liveness.push(`HISTORY GONE (34): row ${r.line} of batch ${r.batch} (${r.src}, account ${r.account}, trxid ${r.trxid}) is still searching ${Math.round((sim.mono - Math.max(t.since, gone.fromMs)) / 1000)} s after the history route began answering 404 (at ${(gone.fromMs / 1000).toFixed(0)} s): a history that is not there can never settle it; it goes to review at its next check`);
      }
      // A row in doubt says why by its state (its answer was lost; nothing definite yet), bounded by 20.
      if (TOLD_STATES.includes(r.state) && r.error === null && !stated) t.silentMs += dt;
      else t.silentMs = 0;
      const where = `row ${r.line} of batch ${r.batch} (${r.src}, account ${r.account}, trxid ${r.trxid})`;
      if (t.doubtMs > LIVENESS_BOUND_MS && !flagged.has(`20:${k}`)) {
        flagged.add(`20:${k}`);
        liveness.push(`LIVENESS (20): ${where} has been ${r.state} since ${(t.since / 1000).toFixed(0)} s, ${Math.round(t.doubtMs / 60_000)} simulated minutes in doubt while neither its batch nor its account waits for a stated reason (bound ${LIVENESS_BOUND_MS / 60_000} min); told: ${r.error ?? '(no error)'}`);
      }
      if (t.silentMs > TOLD_AFTER_MS && !flagged.has(`21:${k}`)) {
        flagged.add(`21:${k}`);
        liveness.push(`TOLD WHY (21): ${where} has been ${r.state} for ${Math.round(t.silentMs / 60_000)} simulated minutes with no error on the row, no wait reason on its batch and no pause of its account: the operator is not told why`);
      }
    }
    for (const k of liveTrack.keys()) if (!seen.has(k)) liveTrack.delete(k);
    for (const [k, x] of verifyingSeen) if (!nowVerifying.has(k)) judgeVerifying(x, from);
    verifyingSeen = nowVerifying;
    // 40. Every daemon of a home eventually sends: the daemon left when the other's host is gone for
    // good ends the restored store's reconcile (it waits for the other's batches only while that
    // one lives), unless a read it needs failed in the bound (an account that cannot say: it waits).
    if (goneAt !== null && neverSends === null && sim.mono - goneAt > EVERY_DAEMON_SENDS_MS && reconcilePending(observer) && procs.some((p) => p.alive && p.kind === 'daemon' && !p.stopping)) {
      const since = sim.mono - EVERY_DAEMON_SENDS_MS;
      const failed = exchanges.some((e) => e.method === 'GET' && e.sentAt >= since && (e.deliveredAt !== null ? e.status === null || e.status >= 400 || e.cut : e.sentAt < sim.mono - 16_000));
      if (!failed) {
        neverSends = `EVERY DAEMON SENDS (40): the daemon holding the restored home's batches was gone for good at ${(goneAt / 1000).toFixed(0)} s; ${Math.round((sim.mono - goneAt) / 60_000)} simulated minutes later the daemon left (${procs.filter((p) => p.alive && p.kind === 'daemon').map((p) => p.id).join(', ')}) has still not ended the reconcile ("copy, not yet reconciled"), so it sends nothing, while every read of the last ${EVERY_DAEMON_SENDS_MS / 60_000} minutes was answered`;
        liveness.push(neverSends);
      }
    }
    // Only the last minutes of exchanges are read (39: since the last sample; 40: its bound).
    const keep = sim.mono - (goneAt !== null ? EVERY_DAEMON_SENDS_MS + 60_000 : 60_000);
    if (exchanges.length > 0 && exchanges[0]!.sentAt < keep) exchanges = exchanges.filter((e) => e.sentAt >= keep);
  };
  // `restore` (issue 32, sim/restore.ts): a copy taken as `topup backup` takes it; later every
  // process of the home stopped (or killed), the copy put back as `topup restore` does, the
  // daemons started (their first start reconciles before sending), and the day's files given again.
  /** Real work an event started that must end before the next event (the online backup steps on setImmediate). */
  const holds: Promise<unknown>[] = [];
  const restoreRec: RestoreRecord | null = restoreOn ? { backupAt: null, restoredAt: null, path: null, ordersAtBackup: [], ordersAtRestore: [], failed: null } : null;
  const restoreStats = { redrops: 0, resubmits: 0, killedSubmits: 0 };
  if (restoreRec) {
    const drawn = s.world!.restore!;
    // `atPause` (world.ts): the copy taken 2 s into main's first maintenance window, when there is one.
    const pauseAt = s.second && drawn.atPause === true ? s.api.maintenance[0]?.[0] : undefined;
    const r = pauseAt !== undefined ? { ...drawn, backupAt: pauseAt + 2_000 } : drawn;
    actionsLeft.n += 2;
    sim.at(r.backupAt, null, 'topup backup', () => {
      const rt = runtime(`sim:${++counter}:backup`);
      const atBackup = apis.map((m) => m.orders.length);
      holds.push(
        takeCopy(rt, config.backup.dir)
          .then((path) => Object.assign(restoreRec, { path, backupAt: sim.mono, ordersAtBackup: atBackup }))
          .catch((err: unknown) => failures.push(`topup backup failed: ${(err as Error)?.stack ?? String(err)}`))
          .finally(async () => {
            await rt.close().catch(() => {});
            actionsLeft.n--;
          }),
      );
    });
    /** The files given before the restore, each once as it was given: dropped into the inbox or to `topup submit` (not `--again`: its trxids came from the lost record; the report names it for a person). */
    let givenBefore: Drop[] = [];
    const giveAgain = (): void => {
      const seen = new Set<string>();
      for (const d of givenBefore) {
        if (d.again) continue;
        const k = `${d.submitted ? 's' : 'd'}:${d.file}:${d.edit ?? 'none'}`;
        if (seen.has(k)) continue;
        seen.add(k);
        const edit = (d.edit ?? 'none') as Edit;
        if (d.submitted) {
          restoreStats.resubmits++;
          submit({ at: sim.mono, kind: 'submit', file: d.file, again: false, edit });
        } else {
          restoreStats.redrops++;
          dropFile({ at: sim.mono, kind: 'drop', file: d.file, edit });
        }
      }
    };
    const swap = (): void => {
      // A command (retry, cancel, resolve) is let finish; `topup submit` processes are ended (SIGKILL) like the daemons.
      if (procs.some((p) => p.alive && p.kind === 'command')) {
        sim.at(500, null, 'the restore waits for a command to end', swap);
        return;
      }
      for (const p of procs.filter((x) => x.alive && x.kind === 'submit')) {
        kill(p, true);
        pendingOps--;
        restoreStats.killedSubmits++;
      }
      restoreRec.ordersAtRestore = apis.map((m) => m.orders.length);
      givenBefore = [...drops];
      // No connection may stay open on the store being replaced (a closing connection removes its
      // -wal by name: the restored store's). The observer closes now and opens on the restored store.
      try {
        observer.db.close();
      } catch {
        // closed already
      }
      void observer.close().catch(() => {});
      observerRt = undefined;
      try {
        restoreCopy(restoreRec.path!, config, sim.now);
        restoreRec.restoredAt = sim.mono;
      } catch (err) {
        restoreRec.failed = (err as Error)?.message ?? String(err);
        failures.push(`topup restore failed: ${(err as Error)?.stack ?? String(err)}`);
      }
      observer = runtime('sim:observer');
      observerRt = observer;
      liveQuery = observer.db.prepare(`SELECT r.batch_id AS batch, r.idx, r.line, r.state, r.error, r.account, r.trxid, b.wait_reason AS wait, b.source_name AS src FROM rows r JOIN batches b ON b.id = r.batch_id WHERE r.state IN (${LIVE_STATES.map((x) => `'${x}'`).join(', ')})`);
      pausedQuery = observer.db.prepare(`SELECT key, value FROM meta WHERE key = 'dispatch.pause' OR key LIKE 'dispatch.pause:%'`);
      // What the shop saw before is judged against the store it was seen in: the restored store's
      // order_events stop where the copy was taken (17 judges what is seen from here on).
      seenStatus.clear();
      // An account pause the copy carries was said by its supplier before the copy was taken: 33
      // judges pauses that appear from here on, not the copy's own.
      for (const x of pausedQuery.all() as { key: string; value: string }[]) {
        try {
          const v = JSON.parse(x.value) as { kind?: string; since?: number };
          if (v.kind === 'account') pausesSeen.set(x.key === 'dispatch.pause' ? 'default' : x.key.slice('dispatch.pause:'.length), v.since ?? 0);
        } catch {
          // not a pause this run reads
        }
      }
      // A cancel of the day's API batch requested after the copy was taken is lost with the store
      // it was written to (the restored batch takes orders again): 36 judges the cancels the copy has.
      for (const [id, c] of [...apiCancels]) if (restoreRec.backupAt === null || c.mono >= restoreRec.backupAt) apiCancels.delete(id);
      restored = true;
      restoring = false;
      sim.at(s.restartMs, null, 'start the daemons after the restore', () => {
        for (let slot = 0; slot < s.daemons; slot++) if (!procs.some((p) => p.alive && p.kind === 'daemon' && p.slot === slot)) startDaemon(slot);
        if (goneDraw) {
          // Within the first half second: while the one holding the batches reconciles and the other waits for it.
          sim.at(1 + (hashOf(`gone-at:${s.seed}`) % 500), null, "one daemon's host is gone for good", () => {
            const live = procs.filter((p) => p.alive && p.kind === 'daemon' && !p.stopping);
            if (live.length < 2) return;
            const held = observer.db.prepare('SELECT owner FROM batches WHERE finished_at IS NULL AND owner IS NOT NULL GROUP BY owner ORDER BY count(*) DESC, owner').pluck().all() as string[];
            const p = live.find((x) => held.includes(x.id)) ?? live[0]!;
            goneSlots.add(p.slot);
            goneAt = sim.mono;
            kill(p, true);
          });
        }
        // The operator gives the day's files again once `topup status` says the restored store is
        // reconciled (docs/backup.md, "Files dropped again after a restore"), looking every 5 s
        // (after 30 minutes, whatever it says).
        let looks = 0;
        const look = (): void => {
          if (reconcilePending(observer) && ++looks < 360) {
            sim.at(5_000, null, 'the operator looks whether the restored store is reconciled', look);
            return;
          }
          giveAgain();
          actionsLeft.n--;
        };
        sim.at(2_000, null, "the day's files given again after the restore", look);
      });
    };
    sim.at(r.backupAt + r.afterMs, null, `the operator ${r.kill ? 'kills' : 'stops'} the home to restore the copy`, () => {
      if (restoreRec.path === null) {
        // The copy failed (already a failure of the run): nothing to restore.
        actionsLeft.n--;
        return;
      }
      restoring = true;
      const live = procs.filter((p) => p.alive && p.kind === 'daemon');
      for (const p of live) {
        if (r.kill) kill(p, true);
        else if (!p.stopping) {
          p.stopping = true;
          p.runner!.stop();
        }
      }
      void Promise.all(live.map((p) => ended(p).then(async () => {
        await Promise.allSettled([...(p.accepting ?? [])]);
        if (!killed.has(p)) await p.rt.close().catch(() => {});
      }))).then(() => void sim.at(1, null, 'topup restore', swap));
    });
  }
  const horizon = opts.horizonMs ?? 6 * 3_600_000;
  const maxEvents = opts.maxEvents ?? 200_000;
  let stall: string | null = null;
  let toppedUp = false;
  // A schedule that starts before midnight runs until the first day's API batch may be finished
  // (its day and grace over): that batch must then be finished, its orders ended (invariant 16).
  const dayTurn = shop && shop.beforeMidnightMs > 0 ? sim.epoch + shop.beforeMidnightMs + API_DAY_GRACE_MS + 1_000 : 0;
  const over = (): boolean => actionsLeft.n === 0 && pendingOps === 0 && shopLeft === 0 && sim.now >= dayTurn && settled(observer, config);
  for (;;) {
    while (holds.length > 0) await holds.shift();
    if (!sim.lastQuiet && !(await quiesce())) {
      stall = `BUSY LOOP: a process kept working for 10 s of real time without waiting for simulated time or an answer (last events: ${sim.trace.slice(-3).join(' | ')})`;
      for (const p of procs) if (p.alive) kill(p, true);
      break;
    }
    sampleApiOrders(observer);
    // Whether all is done is looked at every few events (a read of the store and the inbox).
    if ((sim.fired & 15) === 0 && over()) break;
    // What is left waits for a top-up only (every action done): the operator reads the notice
    // and tops the account up, once. A batch waiting for balance is live for a stated reason.
    if (!toppedUp && (sim.fired & 15) === 0 && actionsLeft.n === 0 && shopLeft === 0 && onlyBalanceWaits(observer)) {
      toppedUp = true;
      sim.at(60_000, null, 'operator tops up after the balance notice', () => apis.forEach((m) => m.topUp(1_000)));
    }
    if (sim.spin !== null) {
      stall = `SPIN: ${sim.spin}`;
      break;
    }
    if (neverSends !== null) break;
    if (sim.mono > horizon || sim.fired > maxEvents) {
      stall = `not finished after ${Math.round(sim.mono / 60_000)} simulated minutes and ${sim.fired} events: ${unfinished(observer)}`;
      break;
    }
    if (sim.mono - lastLive >= LIVE_SAMPLE_MS) sampleLiveness();
    if (!sim.step()) {
      if (over()) break;
      stall = `nothing left to happen, yet not finished: ${unfinished(observer)}`;
      break;
    }
  }
  // Invariant 29: review rows are rechecked (poll/review-recheck.ts, every 15 minutes in their
  // first day). When the run ends with rows in review, the operator leaves the daemons running
  // (started again where the schedule stopped them) for REVIEW_WATCH_MS more, with every fault the
  // schedule drew still as it is; then 29 looks at what the supplier shows.
  let reviewWatch: Map<string, Set<string>> | null = null;
  if (stall === null && inReview(observer).length > 0) {
    reviewWatch = new Map(apis.map((m, i) => [String(i), m.visibleNow()]));
    for (let slot = 0; slot < s.daemons; slot++) if (!procs.some((p) => p.alive && p.kind === 'daemon' && p.slot === slot && !p.stopping)) startDaemon(slot);
    const until = sim.mono + REVIEW_WATCH_MS;
    sim.at(REVIEW_WATCH_MS, null, 'the operator looks at the review list again', () => {});
    while (sim.mono < until) {
      if (!(await quiesce())) {
        stall = `BUSY LOOP while rows were in review: a process kept working for 10 s of real time without waiting (last events: ${sim.trace.slice(-3).join(' | ')})`;
        for (const p of procs) if (p.alive) kill(p, true);
        break;
      }
      // A daemon that wakes again and again with nothing to do (a review check that is always due) is spinning.
      if (sim.spin !== null || sim.fired > maxEvents) {
        stall = sim.spin !== null ? `SPIN while rows were in review: ${sim.spin}` : `${sim.fired} events while rows were in review: a loop that never ends`;
        break;
      }
      if (!sim.step()) break;
      sampleApiOrders(observer);
    }
    // Seen in history (or by id) from the start of the watch to its end: a recheck had its chance.
    const end = apis.map((m) => m.visibleNow());
    for (const [i, set] of reviewWatch) for (const id of set) if (!end[Number(i)]!.has(id)) set.delete(id);
  }
  // Graceful stop of every living daemon (their drain runs on the simulated clock).
  const endWall = sim.now;
  ending = true;
  for (const p of procs) if (p.alive && p.runner) p.runner.stop();
  for (let i = 0; i < 10_000 && procs.some((p) => p.alive && p.kind === 'daemon'); i++) {
    if (!(await quiesce()) || !sim.step()) break;
    sampleApiOrders(observer);
  }
  sampleApiOrders(observer);
  for (const p of procs) if (p.kind === 'daemon' && !p.alive) await p.rt.close().catch(() => {});
  for (const m of apis) m.settleAll();
  oneAccountEnds();
  const unrecordedChecks = { n: 0 };
  const checkCtx = checkWorld ? { lines: checkWorld.lines, overrideOnly, priceMicros: Math.round(checkWorld.priceUsd * 1e6), killed: new Set([...killed].map((p) => p.id)) } : undefined;
  // A daemon stopped past its lease (`stall`) reads the answer it waited for only after another
  // process took its batch: like a lease lost to a clock step, the answer is left unapplied (seed
  // 20261127 with faults lost,error,crash,stall, schedule 39: a plain INSUFFICIENT_STOCK read by the
  // stopped daemon after the other had sent the row to review from what it knew).
  const interrupted = new Set(procs.filter((p) => killed.has(p) || p.stopping === true || stalledOwners.has(p.id)).map((p) => p.id));
  const restoreJudged: RestoreJudged | undefined = restoreRec && restoreRec.restoredAt !== null
    ? { restoredAt: restoreRec.restoredAt, ordersAtBackup: restoreRec.ordersAtBackup, ordersAtRestore: restoreRec.ordersAtRestore, pending: reconcilePending(observer), inOutbox: outboxText(config), reports: restoreReports(config).length, orphansForPerson: restoreReports(config).flatMap((x) => x.orphans.filter((o) => ['new trxids', 'submitted', 'changed'].includes(o.verdict)).map((o) => o.batch)) }
    : undefined;
  const verdict = judge({ ...(restoreJudged ? { restore: restoreJudged } : {}), staleReviews, resolves, interrupted, clockSteps: s.actions.some((a) => a.kind === 'clock-step'), lateWritten, latePlayers, checkWorld: checkCtx, unrecordedChecks, home, config, observer, apis, reviewWatch, apiOf, accountOf, sameAccount, writtenAs, unpinnedBatches, sentTo, siblings, liveness, drops, failures, stall, runCovered, ...(shop ? { shop: { attempts, seen: seenStatus, cancelled: apiCancels, wallSteps: s.actions.some((a) => a.kind === 'clock-step'), endWall, stepsBackMs: s.actions.reduce((n, a) => n + (a.kind === 'clock-step' && a.ms < 0 ? -a.ms : 0), 0) } } : {}) });
  // Batches whose result file kept a name a later rename changed in the store (invariant 13 read those names).
  const keptNames = [...writtenAs].filter(([id, w]) => {
    const now = new Map((observer.db.prepare('SELECT idx, account FROM rows WHERE batch_id = ?').all(id) as { idx: number; account: string }[]).map((r) => [r.idx, r.account]));
    return [...w.rows].some(([idx, r]) => now.has(idx) && now.get(idx) !== r.account);
  }).length;
  await observer.close();
  const keep = opts.keep === true || (opts.keep !== false && !verdict.ok && process.env.TOPUP_SIM_KEEP === '1');
  if (!keep) rmSync(home, { recursive: true, force: true });
  const sum = (f: (m: ModelApi) => number): number => apis.reduce((n, m) => n + f(m), 0);
  const behaviours: Record<string, number> = {
    'requests to the API': sum((m) => m.stats.requests),
    'orders made': sum((m) => m.stats.created),
    'replays answered': sum((m) => m.stats.replays),
    'answers lost after an order was made': sum((m) => m.stats.lostAfter),
    '5xx or proxy pages after an order was made': sum((m) => m.stats.errorAfter),
    'resends refused before idempotency': sum((m) => m.stats.refused),
    '429 answers': sum((m) => m.stats.rateLimited),
    'foreign orders in the account': s.foreign.length,
    'processes started': procs.length,
    'processes crashed': crashes,
    'two daemons on one home': s.daemons > 1 ? 1 : 0,
    'batches told to run the part the balance covers': runCovered.size,
  };
  for (const a of s.actions) {
    const edit = a.kind === 'drop' || a.kind === 'submit' ? (a.edit ?? 'none') : 'none';
    const name = `action: ${a.kind}${edit !== 'none' ? ` (${edit})` : ''}`;
    behaviours[name] = (behaviours[name] ?? 0) + 1;
  }
  for (const [st, n] of Object.entries(verdict.figures.states)) behaviours[`rows ended ${st}`] = n;
  if (shop) {
    const answered = (k: string): number => attempts.filter((a) => a.answer?.kind === k).length;
    const refused = (status: number): number => attempts.filter((a) => a.answer?.kind === 'refused' && a.answer.status === status).length;
    Object.assign(behaviours, {
      'api orders: schedules': 1,
      'api orders: acceptances sent': attempts.length,
      'api orders: accepted (202)': answered('accepted'),
      'api orders: the same order (200)': answered('same'),
      'api orders: refused 402': refused(402),
      'api orders: refused 409': refused(409),
      'api orders: refused 422': refused(422),
      'api orders: refused 503': refused(503),
      'api orders: no answer (crash, nobody listening, timeout)': answered('none'),
      'api orders: 500 (the desk threw)': answered('error'),
      'api orders: resends after no answer': attempts.filter((a) => a.tries > 1).length,
      'api orders: queue true': attempts.filter((a) => a.body.queue === true).length,
      'api orders: requests reaching a daemon together': shopStats.together,
      'api orders: daemon crashed during a call': shopStats.cuts,
      'api orders: rows stored': verdict.figures.apiRows,
      'api orders: days with a batch': verdict.figures.apiBatches,
      'api orders: a second day\'s batch made while the first had live orders': secondDayWhileLive,
      'api orders: day batches finished': verdict.figures.apiBatchesDone,
    });
  }
  if (s.api.style === 'real-world') behaviours['real-world answers'] = 1;
  if (w) {
    // Issue 29: the wider world, and which fault classes the swarm turned on.
    for (const f of w.faults) behaviours[`swarm: ${f} on`] = 1;
    Object.assign(behaviours, {
      'world: failure answers in a drawn status x body shape': sum((m) => m.stats.shapes),
      'world: ... of them after the order was made': sum((m) => m.stats.shapesAfter),
      'world: replays without the replay mark': sum((m) => m.stats.unmarked),
      'world: refunds left out, late, partial or after completed': sum((m) => m.stats.refundForms),
      'world: failures after the order was made naming it, no status word (named-failure)': sum((m) => m.stats.namedFailures),
      'world: refusals (balance, a withdrawn pack) naming a failed record (failed-record)': sum((m) => m.stats.failedRecords),
      'world: answers of a fault that never clears': sum((m) => m.stats.forever),
      [`world: never-clearing ${neverClearing(w)?.kind ?? 'none'}`]: neverClearing(w) ? 1 : 0,
      'world: FORBIDDEN for a purchase another key of ours placed': sum((m) => m.stats.siblingForbidden),
      'world: config edits between restarts': editStats.edits,
      'world: accounts renamed in accounts.toml (config-rename)': editStats.renames,
      'world: finished batches whose result names an account by an earlier name': keptNames,
      'world: starts refused for a re-pointed account (pointed back)': editStats.refused,
      'world: unicode trxids': has(w, 'unicode') ? 1 : 0,
      'world: drops respelling trxids': s.actions.filter((a) => (a.kind === 'drop' || a.kind === 'submit') && a.edit === 'respell').length,
      [`world: supplier trxid fold ${s.api.trxidFold ?? 'unicode'}`]: 1,
      'world: liveness samples': Math.floor(sim.mono / LIVE_SAMPLE_MS),
      'world: orders of 1,000 USD or more (dear)': apis.reduce((n, m) => n + m.orders.filter((o) => o.origin === 'engine' && o.amountMicros >= 1_000_000_000).length, 0),
      "world: resends refused in words, history lagging (resend-words)": sum((m) => m.stats.resendWords),
      'world: file rows with a price cap': s.files.reduce((n, f) => n + f.rows.filter((r) => r.maxPriceUsd !== undefined).length, 0),
      'world: player checks sent (checks)': sum((m) => m.stats.checks),
      'world: player checks charged by the tariff': sum((m) => m.stats.checksCharged),
      'world: player checks answered not found': sum((m) => m.stats.checksNotFound),
      'world: player checks whose answer was lost': sum((m) => m.stats.checksLost),
      'world: player checks that reached the supplier and were never recorded (each a failure of 32)': unrecordedChecks.n,
      'world: rows of players that do not exist': has(w, 'checks') ? s.files.reduce((n, f) => n + f.rows.filter((r) => r.ghost).length, 0) : 0,
      'world: lines written into a claimed file (late-lines)': [...lateWritten.values()].reduce((n, x) => n + x, 0),
      "world: days' API batches cancelled (api-cancel)": apiCancels.size,
      'world: older copies restored (restore)': restoreRec?.restoredAt != null ? 1 : 0,
      'world: ... orders made between the copy and the restore': restoreRec?.restoredAt != null ? restoreRec.ordersAtRestore.reduce((n, x) => n + x, 0) - restoreRec.ordersAtBackup.reduce((n, x) => n + x, 0) : 0,
      'world: ... files dropped again after it': restoreStats.redrops,
      'world: ... files submitted again after it': restoreStats.resubmits,
      'world: ... orders no row holds, named for a person by the restore report': restoreJudged?.leftToPerson ?? 0,
      'world: reads answered 404 (read-404)': sum((m) => m.stats.read404),
      [`world: read route gone ${w.read404?.gone?.route ?? 'none'}`]: has(w, 'read-404') && w.read404?.gone ? 1 : 0,
      'world: daemons stopped past their lease (stall)': stallStats.stops,
      'world: ... resumed just after another took a batch of theirs': stallStats.resumedAfterTake,
      'world: reordered drops of files numbered sn/SN (renumber)': has(w, 'renumber') ? s.actions.filter((x) => (x.kind === 'drop' || x.kind === 'submit') && x.edit === 'reorder').length : 0,
      'world: operator resolves that waited for a review row': resolveWaits.n,
      "world: yesterday's orders for a row's player and pack": has(w, 'old-foreign') ? api.orders.filter((o) => o.origin === 'foreign' && o.trxid === null && o.createdAt < api.serverNow - 15 * 3_600_000).length : 0,
    });
  }
  if (two) {
    const b = apis[1]!;
    Object.assign(behaviours, {
      'two accounts': 1,
      [`two accounts: routing ${two.routing}`]: 1,
      'two accounts: orders made on the second': b.stats.created,
      'two accounts: orders made on the first': api.stats.created,
      'two accounts: rows moved to another account': verdict.figures.moved,
      'two accounts: pack withdrawn (refusals)': sum((m) => m.stats.pidRefused),
      'two accounts: key revoked (answers)': sum((m) => m.stats.keyRevoked),
      'two accounts: trxid of the other account refused': sum((m) => m.stats.peerForbidden),
      'two accounts: same order ids at both': two.sameIds ? 1 : 0,
      'two accounts: maintenance on one': s.api.maintenance.length + two.api.maintenance.length > 0 ? 1 : 0,
      'two accounts: answers lost after creation on one': api.stats.lostAfter + b.stats.lostAfter > 0 ? 1 : 0,
      'two accounts: rows pinned by an account column': two.pin === null ? 0 : 1,
    });
  }
  return {
    ...verdict,
    ...((opts as { fullTrace?: boolean }).fullTrace ? { fullTrace: sim.trace } : {}),
    events: sim.fired,
    simMs: sim.mono,
    processes: procs.length,
    crashes,
    home: keep ? home : null,
    trace: verdict.ok ? [] : sim.trace,
    behaviours,
    variants: [...new Set(apis.flatMap((m) => [...m.stats.variants]))],
  };
}

/** The rows of a drop as written: the file itself, or an edited copy (a column or row added, rows reordered). */
function edited(file: SimFile, fileIdx: number, edit: Edit, two?: Schedule['second']): { rows: SimRow[]; keys: string[]; header: string[]; cells: string[][] } {
  let rows = [...file.rows];
  if (edit === 'reorder') rows.reverse();
  if (edit === 'add-row') rows = [...rows, { pid: 'PUBG-60', userId: String(5_199_000_000 + rows.length) }];
  const header = ['pid', 'userId', 'zoneId', 'quantity'];
  if (file.trxidColumn) header.push('trxid');
  if (file.noteColumn) header.push('Customer');
  // Two accounts: an `account` column pins every third row of the file (as written) to one account.
  const pin = two?.pin ?? null;
  if (pin !== null) header.push('account');
  // `price-cap`: a cap column when any row of the file has one.
  const capped = file.rows.some((r) => r.maxPriceUsd !== undefined);
  if (capped) header.push('maxPriceUsd');
  // `checks` (issue 31): a sendWithoutCheck column when any row of the file says so.
  const noCheck = file.rows.some((r) => r.noCheck === true);
  if (noCheck) header.push('sendWithoutCheck');
  if (edit === 'add-column') header.push('checked');
  // The reseller's own numbering of the rows (`sn`, `No`, `#`, `SN`), first, as resellers write it:
  // its cell follows the line, so a reordered or grown copy renumbers every row below (#3288: a
  // numbering read as part of a purchase makes a re-drop's repeats look new; read as a quantity or
  // an id it buys the wrong thing). Chosen by a hash of the file's purchases: no draw is taken, so
  // every other draw of a fixed seed stays.
  const numbering = numberingColumn(file);
  if (numbering !== null) header.unshift(numbering);
  const written = (r: SimRow): string[] => {
    // Two accounts: a file may name a pack by either account's pid.
    const pid = two && r.altPid ? (PID_AT_B[r.pid] ?? r.pid) : r.pid;
    const c = [pid, r.userId ?? '', r.zoneId ?? '', r.quantity === undefined ? '' : String(r.quantity)];
    if (file.trxidColumn) c.push(r.trxid === undefined ? '' : edit === 'respell' ? respell(r.trxid) : r.trxid);
    if (file.noteColumn) c.push(r.note ?? '');
    if (pin !== null) c.push(file.rows.indexOf(r) % 3 === 0 ? NAMES[pin] : '');
    if (capped) c.push(r.maxPriceUsd === undefined ? '' : String(r.maxPriceUsd));
    if (noCheck) c.push(r.noCheck === true ? 'yes' : '');
    return c;
  };
  const cells = rows.map((r, i) => [...(numbering !== null ? [String(i + 1)] : []), ...written(r), ...(edit === 'add-column' ? ['yes'] : [])]);
  // Rows written alike are one purchase bought as many times as they are written: which of two
  // equal rows a re-drop's row stands for cannot be told (nor needs to be). A pack named by either
  // account's pid is the same pack (docs/accounts.md: a pid of any account names its pack), so rows
  // that differ only in which account's pid they wrote are alike too.
  const alike = (r: SimRow): string => JSON.stringify([r.pid, ...written(r).slice(1)]);
  const keys = rows.map((r) => {
    const i = file.rows.indexOf(r) < 0 ? -1 : file.rows.findIndex((x) => alike(x) === alike(r));
    return i >= 0 ? `${fileIdx}:${i}` : `${fileIdx}:added`;
  });
  return { rows, keys, header, cells };
}

const numberings = new Set(['sn', 'No', '#', 'SN']);

/** The row-number column a file has (one file in three), by a hash of its purchases: `sn`, `No`, `#` or `SN`; or none. */
export function numberingColumn(file: SimFile): string | null {
  if (file.numbering !== undefined) return file.numbering;
  const h = hashOf(`sn:${JSON.stringify(file.rows.map((r) => [r.pid, r.userId ?? '', r.zoneId ?? '', r.trxid ?? '', r.quantity ?? '']))}`);
  return h % 3 === 0 ? [...numberings][(h >>> 8) % 4]! : null;
}

/** A trxid as a person or a spreadsheet writes it again (issue 29): letter case flipped (every script), spaces around it. The same trxid. */
export function respell(t: string): string {
  const flipped = t === t.toUpperCase() ? t.toLowerCase() : t.toUpperCase();
  // Only a flip both folds agree on (ÄB ↔ äb, ΣΊΣΥΦΟΣ ↔ σίσυφοσ) is another spelling of the same
  // trxid; one that changes the string otherwise (ß → SS, İ → i̇) keeps its letters, spaces only.
  const same = [...flipped].length === [...t].length && flipped.toLowerCase() === t.toLowerCase() && flipped.toUpperCase() === t.toUpperCase() ? flipped : t;
  return ` ${same} `;
}

/** `restore`: the text of every result file in outbox/ (a batch the copy lacks that finished before the restore is recorded there: claim/orphans.ts 'finished'). */
function outboxText(config: Config): string {
  if (!existsSync(config.outboxDir)) return '';
  return readdirSync(config.outboxDir).filter((f) => f.endsWith('.csv')).map((f) => readFileSync(join(config.outboxDir, f), 'utf8')).join('\n');
}

function inboxFiles(config: Config): string[] {
  return readdirSync(config.inboxDir).filter((n) => !n.startsWith('.')).map((n) => join(config.inboxDir, n));
}

/**
 * The day's API batch still taking orders, with none of them live: it waits for orders, not for
 * the engine (the runner's #idle reads it so too). It is finished once its day is over.
 */
function waitsForOrders(observer: Runtime, b: Parameters<typeof apiBatchOpenForOrders>[0] & { id: string; cancelRequested: boolean }): boolean {
  // A cancelled day's batch takes no order any more: it is finished once its sent orders end (the run waits for that).
  return !b.cancelRequested && apiBatchOpenForOrders(b, observer.clock.now()) && !observer.rows.hasLive(b.id);
}

/** Nothing left to do: no file waiting in the inbox, no batch unfinished (but a day's API batch waiting for orders). */
function settled(observer: Runtime, config: Config): boolean {
  return inboxFiles(config).length === 0 && observer.batches.unfinished().every((b) => waitsForOrders(observer, b));
}

function inReview(observer: Runtime): { id: number }[] {
  return observer.db.prepare(`SELECT 1 AS id FROM rows WHERE state = 'review' LIMIT 1`).all() as { id: number }[];
}

/** Every unfinished batch waits for balance (the funds gate says so). */
function onlyBalanceWaits(observer: Runtime): boolean {
  const open = observer.batches.unfinished().filter((b) => !waitsForOrders(observer, b));
  // A batch whose player checks the supplier refused for want of balance says so in its wait (issue 31): the operator tops up too.
  return open.length > 0 && open.every((b) => b.waitReason === 'balance' || (b.waitReason === 'player-checks' && /balance/i.test(b.waitDetail ?? '')) || (b.state === 'open' && observer.rows.counts(b.id).pending > 0 && b.waitReason === null));
}

function unfinished(observer: Runtime): string {
  const parts = observer.batches.unfinished().map((b) => {
    const c = observer.rows.counts(b.id);
    const live = Object.entries(c).filter(([st, n]) => n > 0 && ['pending', 'sending', 'resending', 'verifying', 'searching', 'processing', 'unseen'].includes(st));
    return `${b.id} (${b.sourceName}, ${b.state}, owner ${b.owner ?? 'none'}, wait ${b.waitReason ?? '-'}: ${live.map(([st, n]) => `${n} ${st}`).join(', ') || 'no live rows'})`;
  });
  return parts.join('; ') || `no unfinished batch; inbox: ${readdirSync(observer.config.inboxDir).join(', ') || 'empty'}`;
}

function verboseLogger(owner: string, sim: SimScheduler): Logger {
  return pino({ level: 'debug', base: { p: owner }, timestamp: () => `,"t":${(sim.mono / 1000).toFixed(3)}` }, process.stderr);
}
