/**
 * A schedule: everything one simulated run does, as a plain value. The run (run-schedule.ts) is
 * a deterministic function of it, so a schedule replays exactly, and fast-check can shrink a
 * failing one to the shortest that still fails (fewer files, rows, actions, crashes; a milder API).
 *
 * `seed` drives what the schedule does not spell out: latencies, which of two events due at the
 * same instant goes first, and the model API's draws (which request loses its answer, which
 * corpus variant answers a refusal).
 */
import fc from 'fast-check';
import { DEAR_PACK_A, PACKS, type ApiProfile } from './model.js';
import { shopArb, type Shop } from './shop.js';
import { ALL_FAULTS, has, spellPlayer, widen, worldArb, type FaultFilter, type World } from './world.js';

export interface SimRow {
  /** The first account's pid (the only account's, in a one-account schedule). */
  pid: string;
  /** Two accounts: the file names the pack by the second account's pid (where it sells it). */
  altPid?: boolean;
  userId?: string;
  zoneId?: string;
  quantity?: number;
  /** The row's own trxid (a shop's order number), when the file has a trxid column. */
  trxid?: string;
  /** The reseller's own column (a customer, a note): carried through. */
  note?: string;
  /** The file's `maxPriceUsd` column (the `price-cap` class): the most the row may cost a unit, on any account. */
  maxPriceUsd?: number;
  /** `checks` (issue 31): the row's player does not exist at the supplier (its check says not found). */
  ghost?: boolean;
  /** `checks`: the row says `sendWithoutCheck: yes` (bought without a check, whatever the check would say). */
  noCheck?: boolean;
}

export interface SimFile {
  /** Purchases, each a fresh one (a new player id, or a card for a new customer). */
  rows: SimRow[];
  trxidColumn: boolean;
  noteColumn: boolean;
  delimiter: ',' | ';';
  /** The reseller's row-number column (`renumber`, world.ts); absent: chosen by a hash of the rows (run-schedule.ts numberingColumn). */
  numbering?: string;
}

/**
 * How a copy of a file is edited before it is dropped again: as it was, a column or a row added,
 * rows reordered, or (issue 29, `respell`) its own trxids respelled as people and spreadsheets do:
 * letter case flipped (beyond ASCII too: `ÄB-7` → `äb-7`) and spaces around them. A respelled
 * trxid is the same trxid (docs: looked up in any letter case), so its row is the same purchase.
 */
export type Edit = 'none' | 'add-column' | 'add-row' | 'reorder' | 'respell';

export type Action =
  /** The file (or an edited copy of it) is dropped into the inbox. */
  | { at: number; kind: 'drop'; file: number; edit: Edit }
  /** `topup submit FILE` (a process of its own) of the file or an edited copy; `again`: ordered again on purpose. */
  | { at: number; kind: 'submit'; file: number; again: boolean; edit?: Edit }
  /**
   * `topup retry BATCH` of the newest finished batch of this file; `repeats`: buy its repeats on
   * purpose; `twice`: a double click on the console's Retry (two retries at the same instant).
   */
  | { at: number; kind: 'retry'; file: number; repeats: boolean; twice: boolean }
  /** `topup cancel` of the newest unfinished batch of this file. */
  | { at: number; kind: 'cancel'; file: number }
  /**
   * `topup run-covered --yes` of the newest batch of this file waiting for balance (a refusal when
   * none waits, as the command's): the rows the balance covers run, the others end skipped.
   */
  | { at: number; kind: 'run-covered'; file: number }
  /**
   * An operator settles every review row by what the supplier's panel shows (the model's truth).
   * `slip`: how the id is typed: as shown; in other letter case (suppliers look ids up either
   * way); or, a slip of the eye, another row's order in other letter case, with --force.
   */
  | { at: number; kind: 'resolve'; slip: 'none' | 'case' | 'other' }
  /** A daemon process dies (SIGKILL) at whatever await it is at; `dead`: its host says so at once. */
  | { at: number; kind: 'crash'; proc: number; dead: boolean }
  /** A daemon is stopped (SIGTERM): bounded drain, leases released. */
  | { at: number; kind: 'stop'; proc: number }
  /** The account is topped up (a batch waiting for balance goes on). */
  | { at: number; kind: 'top-up'; usd: number }
  /** The wall clock steps (NTP, a resumed VM). */
  | { at: number; kind: 'clock-step'; ms: number };

/**
 * A second supplier account (one schedule in three): its own host, key, ledger, balance, stock,
 * catalog (the same packs under its own pids and prices; Mobile Legends not sold, Free Fire only
 * there) and its own faults, drawn like the first's (maintenance, lost answers, 5xx, no balance,
 * no stock, 429s, account trouble), plus faults of the pair.
 */
export interface SecondAccount {
  /** accounts.toml's routing. */
  routing: 'cheapest' | 'priority' | 'spread';
  /** accounts.toml's max_queue_delay: also how long an account is paused before its unsent rows move. */
  maxQueueDelayMs: number;
  /** The second account's API. */
  api: ApiProfile;
  /** Its order ids start with the same letter as the first's (two deployments numbering alike: M100001 at both). */
  sameIds: boolean;
  /** Both accounts at one supplier: one trxid space (a trxid the other holds an order under: 403 FORBIDDEN). */
  sameSupplier: boolean;
  /** A pack one account withdraws mid-run while its catalog still lists it (every POST of it refused with `error`). */
  refusePid: { account: 0 | 1; pack: 'PUBG-60' | 'PUBG-325' | 'STEAM-5' | 'PUBG-81000'; error: 'UNKNOWN PID' | 'GAME DISABLED' | 'INVALID PACK' | 'PRODUCT_DISABLED'; fromMs: number } | null;
  /** One account's key revoked during [fromMs, toMs) (401/403 on every route), then restored. */
  keyRevoked: { account: 0 | 1; fromMs: number; toMs: number } | null;
  /** The files' `account` column pins these rows (by id mod 5 == 0) to this account, when not null. */
  pin: 0 | 1 | null;
}

export interface Schedule {
  seed: number;
  api: ApiProfile;
  /** Absent: one account (`default`, TOPUP_API_URL/TOPUP_API_KEY), as before issue 22. */
  second?: SecondAccount;
  /** Daemon processes at the start (1 or 2 on the one home). A crashed or stopped one starts again `restartMs` later. */
  daemons: number;
  restartMs: number;
  files: SimFile[];
  actions: Action[];
  /** Orders the account already has (the panel, another shop), some under trxids the files reuse. */
  foreign: { pid: string; trxid: string | null; userId?: string; quantity?: number; agoMs: number }[];
  /** Trxids that belong to another API user (403 FORBIDDEN). */
  forbidden: string[];
  /** Issue 23: a shop placing orders through the order API (sim/shop.ts); absent in most schedules. */
  shop?: Shop;
  /** Issue 29: the wider world and the fault classes this schedule has on (sim/world.ts); absent in schedules written before it. */
  world?: World;
}

const MIN = 60_000;

/** The knobs of the model API, from benign to hostile. */
export const apiProfile: fc.Arbitrary<ApiProfile> = fc.record({
  style: fc.constantFrom<ApiProfile['style']>('spec', 'real-world'),
  balanceUsd: fc.oneof(fc.constant(1_000), fc.integer({ min: 1, max: 40 })),
  stock: fc.oneof(fc.constant(500), fc.integer({ min: 0, max: 6 })),
  processingShare: fc.constantFrom(0, 0.3, 0.8),
  failShare: fc.constantFrom(0, 0.1, 0.4),
  lostAfter: fc.constantFrom(0, 0, 0.1, 0.3),
  lostBefore: fc.constantFrom(0, 0, 0.1),
  errorAfter: fc.constantFrom(0, 0, 0.1, 0.3),
  errorBefore: fc.constantFrom(0, 0, 0.1),
  refuseResend: fc.constantFrom(0, 0, 0.3),
  replayOtherPurchase: fc.boolean(),
  readError: fc.constantFrom(0, 0, 0.05, 0.2),
  limits: fc.constantFrom([{ limit: 40, windowMs: 1_000 }, { limit: 200, windowMs: 60_000 }], [{ limit: 10, windowMs: 1_000 }, { limit: 80, windowMs: 60_000 }], [{ limit: 3, windowMs: 1_000 }]),
  retryAfter: fc.boolean(),
  historyTrxid: fc.boolean(),
  historyCreatedAt: fc.boolean(),
  answerCreatedAt: fc.boolean(),
  maintenance: fc.oneof(fc.constant<[number, number][]>([]), fc.tuple(fc.integer({ min: 0, max: 5 * MIN }), fc.integer({ min: 10_000, max: 4 * MIN })).map(([a, d]): [number, number][] => [[a, a + d]])),
  accountDown: fc.oneof(fc.constant<[number, number][]>([]), fc.constant<[number, number][]>([]), fc.tuple(fc.integer({ min: 0, max: 5 * MIN }), fc.integer({ min: 5_000, max: 2 * MIN })).map(([a, d]): [number, number][] => [[a, a + d]])),
  slow: fc.constantFrom(0, 0, 0.1),
  latencyMs: fc.constantFrom<[number, number]>([1, 5], [5, 80], [50, 400]),
  serverSkewMs: fc.constantFrom<number | null>(0, 0, 90_000, -180_000, null),
});

const second: fc.Arbitrary<SecondAccount> = fc.record({
  routing: fc.constantFrom<SecondAccount['routing']>('cheapest', 'cheapest', 'priority', 'spread'),
  maxQueueDelayMs: fc.constantFrom(5_000, 30_000),
  api: apiProfile,
  sameIds: fc.boolean(),
  sameSupplier: fc.boolean(),
  refusePid: fc.option(
    fc.record({
      account: fc.constantFrom<0 | 1>(0, 1),
      pack: fc.constantFrom<'PUBG-60' | 'PUBG-325' | 'STEAM-5'>('PUBG-60', 'PUBG-325', 'STEAM-5'),
      error: fc.constantFrom<'UNKNOWN PID' | 'GAME DISABLED' | 'INVALID PACK' | 'PRODUCT_DISABLED'>('UNKNOWN PID', 'GAME DISABLED', 'INVALID PACK', 'PRODUCT_DISABLED'),
      fromMs: fc.constantFrom(0, 20_000, 90_000),
    }),
    { nil: null, freq: 2 },
  ),
  keyRevoked: fc.option(
    fc.tuple(fc.constantFrom<0 | 1>(0, 1), fc.integer({ min: 0, max: 4 * MIN }), fc.integer({ min: 20_000, max: 5 * MIN })).map(([account, fromMs, d]) => ({ account, fromMs, toMs: fromMs + d })),
    { nil: null, freq: 2 },
  ),
  pin: fc.constantFrom<0 | 1 | null>(null, null, 0, 1),
});

/** A row as generated; ids are given by its place (withIds), so the value stays a pure function of fast-check's draws. */
interface RowDraw {
  kind: 'pubg' | 'ml' | 'card' | 'key' | 'bad' | 'ff';
  alt: boolean;
  quantity: number;
  trxid: 'none' | 'own' | 'reuse-foreign' | 'reuse-forbidden';
  note: '' | 'vip' | 'gift';
}

const rowDraw: fc.Arbitrary<RowDraw> = fc.record({
  kind: fc.constantFrom<RowDraw['kind']>('pubg', 'pubg', 'ml', 'card', 'key', 'bad', 'ff'),
  alt: fc.boolean(),
  quantity: fc.integer({ min: 1, max: 3 }),
  trxid: fc.constantFrom<RowDraw['trxid']>('none', 'none', 'own', 'reuse-foreign', 'reuse-forbidden'),
  note: fc.constantFrom<RowDraw['note']>('', 'vip', 'gift'),
});

/** Fresh purchases: each top-up a new player id, each card a new customer (`id`: unique in the schedule). */
function toRow(r: RowDraw, id: number): SimRow {
  const base: SimRow = { pid: 'PUBG-60' };
  switch (r.kind) {
    case 'pubg': Object.assign(base, { pid: id % 3 === 0 ? 'PUBG-325' : 'PUBG-60', userId: String(5_123_400_000 + id) }); break;
    case 'ml': Object.assign(base, { pid: 'ML-86', userId: String(777_000_000 + id), zoneId: String(2000 + (id % 50)) }); break;
    case 'card': Object.assign(base, { pid: 'STEAM-5', quantity: r.quantity }); break;
    case 'key': Object.assign(base, { pid: 'KEY-PUBG-60', quantity: r.quantity }); break;
    case 'bad': Object.assign(base, { pid: 'NOPE-1', userId: String(5_100_000_000 + id) }); break;
    // Free Fire: sold by the second account only (an unknown pid where there is one account).
    case 'ff': Object.assign(base, { pid: 'ff_100dm', userId: String(3_300_000_000 + id) }); break;
  }
  if (r.alt && r.kind !== 'ff' && r.kind !== 'bad' && r.kind !== 'ml') base.altPid = true;
  if (r.trxid === 'own') base.trxid = `SHOP-${id}`;
  if (r.trxid === 'reuse-foreign') base.trxid = `OLD-${id % 4}`;
  if (r.trxid === 'reuse-forbidden') base.trxid = `OTHER-${id % 2}`;
  if (r.note) base.note = `${r.note}-${id}`;
  return base;
}

/**
 * Schedules from benign to hostile. Sizes stay small (1–3 files of 1–6 rows, a handful of
 * actions): defects live in interleavings, not in volume, and small runs are many per second.
 */
/**
 * When an action happens: anywhere in [min, max], or (one in three) at one of a few shared
 * instants plus up to 200 ms, so that two actions often meet: a file and its edited copy taken by
 * two processes at once, a crash during a load, a cancel while a batch opens. Uniform times alone
 * almost never put two loads in the same few milliseconds (the revert check of issue 20's defect 1
 * ran 3,000 schedules without one).
 */
function when(min: number, max: number): fc.Arbitrary<number> {
  const meet = [10_000, 60_000, 150_000].filter((t) => t >= min && t <= max);
  const uniform = fc.integer({ min, max });
  if (meet.length === 0) return uniform;
  return fc.oneof(
    { weight: 2, arbitrary: uniform },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...meet), fc.integer({ min: 0, max: 200 })).map(([t, j]) => t + j) },
  );
}

const edits = fc.constantFrom<Edit>('none', 'none', 'add-column', 'add-row', 'reorder', 'respell');

/** Which schedules have a second account: one in three (`mixed`, the default), none, or all. */
export type AccountsMix = 'mixed' | 'one' | 'two';
/** Which schedules have a shop placing API orders (issue 23): one in four (mixed, the default), none, or all. */
export type ApiOrdersMix = 'mixed' | 'none' | 'all';

export function scheduleArb(accounts: AccountsMix = 'mixed', apiOrders: ApiOrdersMix = 'mixed', faults: FaultFilter = ALL_FAULTS): fc.Arbitrary<Schedule> {
  // Drawn last (after every field the schedules had before), so a seed's other fields stay as they were.
  const shop = apiOrders === 'none' ? fc.constant(undefined) : apiOrders === 'all' ? shopArb : fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: shopArb });
  const twoAccounts = accounts === 'one' ? fc.constant(undefined) : accounts === 'two' ? second : fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: second });
  const file = fc.record({
    rows: fc.array(rowDraw, { minLength: 1, maxLength: 6 }),
    trxidColumn: fc.boolean(),
    noteColumn: fc.boolean(),
    delimiter: fc.constantFrom<',' | ';'>(',', ';'),
  });
  return fc
    .record({
      seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      api: apiProfile,
      second: twoAccounts,
      daemons: fc.constantFrom(1, 1, 2),
      restartMs: fc.constantFrom(100, 5_000, 30_000),
      files: fc.array(file, { minLength: 1, maxLength: 3 }),
      actions: fc.array(
        fc.oneof(
          { weight: 6, arbitrary: fc.record({ at: when(0, 3 * MIN), kind: fc.constant('drop' as const), file: fc.nat(2), edit: edits }) },
          { weight: 2, arbitrary: fc.record({ at: when(0, 3 * MIN), kind: fc.constant('submit' as const), file: fc.nat(2), again: fc.boolean(), edit: edits }) },
          { weight: 1, arbitrary: fc.record({ at: when(MIN, 10 * MIN), kind: fc.constant('retry' as const), file: fc.nat(2), repeats: fc.boolean(), twice: fc.constantFrom(false, false, false, true) }) },
          { weight: 1, arbitrary: fc.record({ at: when(0, 4 * MIN), kind: fc.constant('cancel' as const), file: fc.nat(2) }) },
          { weight: 1, arbitrary: fc.record({ at: when(0, 6 * MIN), kind: fc.constant('run-covered' as const), file: fc.nat(2) }) },
          { weight: 1, arbitrary: fc.record({ at: fc.integer({ min: 5 * MIN, max: 15 * MIN }), kind: fc.constant('resolve' as const), slip: fc.constantFrom('none' as const, 'none' as const, 'case' as const, 'other' as const) }) },
          { weight: 4, arbitrary: fc.record({ at: when(0, 6 * MIN), kind: fc.constant('crash' as const), proc: fc.nat(1), dead: fc.boolean() }) },
          { weight: 1, arbitrary: fc.record({ at: when(0, 6 * MIN), kind: fc.constant('stop' as const), proc: fc.nat(1) }) },
          { weight: 1, arbitrary: fc.record({ at: fc.integer({ min: MIN, max: 10 * MIN }), kind: fc.constant('top-up' as const), usd: fc.constantFrom(20, 1000) }) },
          { weight: 1, arbitrary: fc.record({ at: fc.integer({ min: 0, max: 6 * MIN }), kind: fc.constant('clock-step' as const), ms: fc.constantFrom(-3_600_000, -5_000, 90_000) }) },
        ),
        { minLength: 1, maxLength: 8 },
      ),
      foreign: fc.array(
        fc.record({
          pid: fc.constantFrom('PUBG-60', 'STEAM-5', 'KEY-PUBG-60'),
          trxid: fc.constantFrom<string | null>(null, 'OLD-0', 'OLD-1', 'OLD-2', 'OLD-3'),
          userId: fc.option(fc.constant('5123400001'), { nil: undefined }),
          quantity: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
          agoMs: fc.constantFrom(86_400_000, 3_600_000, 120_000),
        }),
        { maxLength: 3 },
      ),
      forbidden: fc.subarray(['OTHER-0', 'OTHER-1']),
      shop,
      // Drawn last, so that the fields above are drawn as before issue 29.
      world: worldArb(faults),
    })
    .map(({ second: two, shop: api, world, ...s }) => applyWorld({
      ...s,
      ...(two ? { second: two } : {}),
      ...(api ? { shop: api } : {}),
      world,
      files: s.files.map((f, fi) => ({ ...f, rows: f.rows.map((r, ri) => toRow(r, 1 + fi * 100 + ri)) })),
      actions: [...s.actions].sort((a, b) => a.at - b.at),
    }))
    .filter((s) => s.actions.some((a) => a.kind === 'drop' || a.kind === 'submit'));
}

/** The id a row was drawn with, from its own trxid (`SHOP-<id>`), or undefined. */
export function rowIdOf(trxid: string | undefined): number | undefined {
  const m = trxid === undefined ? null : /-(\d+)$/.exec(trxid);
  return m ? Number(m[1]) : undefined;
}

/**
 * Swarm testing (world.ts): the classes the schedule has off are zeroed or removed, those it has
 * on widen the model; identities are spelled as the world says. A pure function of the schedule's
 * draws, so the schedule as printed is the schedule that runs.
 */
export function applyWorld(s: Schedule): Schedule {
  const w = s.world;
  if (!w) return s;
  const out: Schedule = { ...s, api: widen(s.api, w, 0) };
  if (s.second) {
    out.second = {
      ...s.second,
      api: widen(s.second.api, w, 1),
      ...(has(w, 'withdrawn') ? {} : { refusePid: null }),
      // `price-cap` with two accounts: the first account withdraws the pack that is dearer at the
      // second (325 UC, or 81000 UC with `dear`) 20 s in, so its capped rows must not move there.
      ...(has(w, 'price-cap') && !(has(w, 'withdrawn') && s.second.refusePid) ? { refusePid: { account: 0 as const, pack: has(w, 'dear') ? ('PUBG-81000' as const) : ('PUBG-325' as const), error: 'PRODUCT_DISABLED' as const, fromMs: 20_000 } } : {}),
      ...(has(w, 'account') ? {} : { keyRevoked: null }),
    };
  }
  out.actions = s.actions
    .filter((a) => (a.kind !== 'crash' || has(w, 'crash')) && (a.kind !== 'clock-step' || has(w, 'clock')))
    .map((a) => ((a.kind === 'drop' || a.kind === 'submit') && a.edit === 'respell' && !has(w, 'respell') ? { ...a, edit: 'none' as const } : a));
  if (out.actions.length === 0) out.actions = [{ at: 0, kind: 'drop', file: 0, edit: 'none' }];
  if (!has(w, 'foreign')) out.foreign = [];
  if (!has(w, 'forbidden')) out.forbidden = [];
  out.files = s.files.map((f, fi) => ({
    ...f,
    rows: f.rows.map((r, i) => {
      const id = rowIdOf(r.trxid);
      const row = { ...r };
      if (has(w, 'unicode') && id !== undefined && r.trxid?.startsWith('SHOP-')) row.trxid = `${w.trxidPrefixes[id % w.trxidPrefixes.length]}-${id}`;
      if (has(w, 'player-spelling') && row.userId !== undefined && row.zoneId === undefined) row.userId = spellPlayer(row.userId, w.playerSpelling[i % w.playerSpelling.length]!);
      // `dear`: the files buy the 81000 UC pack (over 1,000 USD) where they bought 325 UC.
      if (has(w, 'dear') && row.pid === 'PUBG-325') row.pid = DEAR_PACK_A.id;
      // `price-cap`: every row capped at its pack's price at the first account (so no dearer account may take it).
      const listed = [...PACKS, DEAR_PACK_A].find((p) => p.id === row.pid);
      if (has(w, 'price-cap') && listed) row.maxPriceUsd = listed.price;
      // `checks`: some rows' players do not exist; with `override`, some of those say send without a check.
      const rid = 1 + fi * 100 + i;
      if (has(w, 'checks') && w.checks && row.userId !== undefined && w.checks.ghosts.includes(rid % 5)) {
        row.ghost = true;
        if (w.checks.override && rid % 2 === 0) row.noCheck = true;
      }
      return row;
    }),
  }));
  if (has(w, 'stall')) {
    // A daemon stopped past its lease is harmless alone: another must be there to take its batches.
    out.daemons = 2;
  }
  if (has(w, 'renumber') && w.renumber) renumber(out, w.renumber);
  if (has(w, 'operator') && w.operator && !out.actions.some((a) => a.kind === 'resolve')) {
    out.actions = [...out.actions, { at: w.operator.at, kind: 'resolve' as const, slip: w.operator.slip }].sort((a, b) => a.at - b.at);
  }
  return out;
}

/**
 * `renumber` (world.ts): every file numbered `sn`/`SN`; each later drop or submit of a file given
 * as it is comes reordered (its rows renumbered); a file given once is dropped again, reordered,
 * `afterMs` after it. A key/card row without a trxid is a repeat only by its cells, and its number
 * changed (#3289: `sn` not read as a row number makes it a new purchase).
 */
function renumber(out: Schedule, r: NonNullable<World['renumber']>): void {
  out.files = out.files.map((f) => ({ ...f, numbering: r.column }));
  const given = new Map<number, number>();
  const firstAt = new Map<number, { at: number; file: number }>();
  const actions: Action[] = out.actions.map((a) => {
    if (a.kind !== 'drop' && a.kind !== 'submit') return a;
    const f = a.file % out.files.length;
    given.set(f, (given.get(f) ?? 0) + 1);
    if (!firstAt.has(f)) {
      firstAt.set(f, { at: a.at, file: a.file });
      return a;
    }
    return (a.edit ?? 'none') === 'none' ? { ...a, edit: 'reorder' as const } : a;
  });
  for (const [f, n] of given) {
    const first = firstAt.get(f)!;
    if (n === 1) actions.push({ at: first.at + r.afterMs, kind: 'drop', file: first.file, edit: 'reorder' });
  }
  out.actions = actions.sort((a, b) => a.at - b.at);
}
