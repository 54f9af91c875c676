/**
 * The simulator's model of the Reseller API: an account with a balance, a catalog, stock, and a
 * ledger of every order it ever made, answering in memory. It is not the sandbox (src/sandbox):
 * it is a second, independent reading of the spec, built for one job: to answer as badly as real
 * suppliers do, under a seed, while keeping the TRUTH of what was charged, which the invariants
 * (invariants.ts) judge the engine against.
 *
 * What it can do (each a knob of the schedule's `api`, drawn per request from its own seeded stream):
 *  - answer in the spec's shapes or real-world ones (strings for numbers, `id`, `{data}`, status
 *    words, codes as text), and refuse with any failure variant of the answer corpus
 *    (test/fixtures/answers/submit.json) that fits what it decided;
 *  - lose the answer after creating the order, or before (nothing created); 5xx and proxy pages
 *    before or after creation; slow answers;
 *  - replays of a trxid (idempotentReplay), DUPLICATE_IN_FLIGHT while the first request is being
 *    worked on, a resend of an existing order refused on a validation it does before idempotency;
 *  - foreign orders in history (the panel, another shop), with and without trxid, some under
 *    trxids the files reuse; trxids of another account (403 FORBIDDEN);
 *  - stock running out, a balance running out, maintenance windows, 429 bursts with and without
 *    Retry-After under its own rolling limits, account trouble (401/403);
 *  - orders processing then completing or failing (refunded or not), late codes;
 *  - history that echoes trxids and creation times, or not.
 */
import { busyHistory, duplicateTrxidBody, failedRecordBody, inFlightInWords, namedOrderFailure, orderIdKey, resendRefusedInWords, resendWordsBody, spacedBoolean, spelled, statusMsgBody } from './phrases.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededEntropy, type Entropy } from '../src/kernel/entropy.js';
import type { SimScheduler } from './scheduler.js';

export const SIM_KEY = 'sim-key-7d1c2e9f4a';
/** The second account's key (schedules with two accounts: its own host, key, ledger and catalog). */
export const SIM_KEY_B = 'sim-key-b-3c8e51aa07';

// ───────────────────────────── catalog ─────────────────────────────

export interface SimPack {
  id: string;
  slug: string;
  gameName: string;
  serviceName: string;
  price: number;
  /** Key or gift card: bought by quantity, delivered as codes, stock-limited. */
  card: boolean;
}

const LINES = [
  { productName: 'PUBG Mobile UC', slug: 'pubg', gameName: 'PUBG Mobile', required: [{ field: 'userId', label: 'Player ID' }], status: 'active' },
  { productName: 'Mobile Legends Diamonds', slug: 'mobilelegends', gameName: 'Mobile Legends', required: [{ field: 'userId', label: 'User ID' }, { field: 'zoneId', label: 'Zone ID' }], status: 'active' },
  { productName: 'Steam Wallet Gift Card', slug: 'steamgiftcard', gameName: 'Steam', required: [{ field: 'quantity', label: 'Quantity' }], status: 'active' },
  { productName: 'PUBG Mobile UC Redeem Codes', slug: 'gamekeypubg', gameName: 'PUBG Mobile', required: [{ field: 'quantity', label: 'Quantity' }], status: 'active' },
];
/** The game lines of the second account: no Mobile Legends, and Free Fire, which the first lacks. */
const LINES_B = [
  ...LINES.filter((l) => l.slug !== 'mobilelegends'),
  { productName: 'Free Fire Diamonds', slug: 'freefire', gameName: 'Free Fire', required: [{ field: 'userId', label: 'Player ID' }], status: 'active' },
];

export const PACKS: readonly SimPack[] = [
  { id: 'PUBG-60', slug: 'pubg', gameName: 'PUBG Mobile', serviceName: '60 UC', price: 0.92, card: false },
  { id: 'PUBG-325', slug: 'pubg', gameName: 'PUBG Mobile', serviceName: '325 UC', price: 4.55, card: false },
  { id: 'ML-86', slug: 'mobilelegends', gameName: 'Mobile Legends', serviceName: '86 Diamonds', price: 1.5, card: false },
  { id: 'STEAM-5', slug: 'steamgiftcard', gameName: 'Steam', serviceName: 'Steam 5 USD', price: 5.1, card: true },
  { id: 'KEY-PUBG-60', slug: 'gamekeypubg', gameName: 'PUBG Mobile', serviceName: 'PUBG 60 UC key', price: 0.9, card: true },
];

/**
 * The second account's catalog (a white-label deployment of the same API): the same packs under
 * its own pids and at its own prices (cheaper for some, dearer for others), Mobile Legends not sold,
 * and a Free Fire pack the first account does not sell. Packs match across accounts by slug and
 * pack name (src/account/routing.ts), as the engine's routing reads them.
 */
export const PACKS_B: readonly SimPack[] = [
  { id: 'pubg_uc_60', slug: 'pubg', gameName: 'PUBG Mobile', serviceName: '60 UC', price: 0.89, card: false },
  { id: 'pubg_uc_325', slug: 'pubg', gameName: 'PUBG Mobile', serviceName: '325 UC', price: 4.7, card: false },
  { id: 'steam_5usd', slug: 'steamgiftcard', gameName: 'Steam', serviceName: 'Steam 5 USD', price: 5.05, card: true },
  { id: 'pubg_key_60', slug: 'gamekeypubg', gameName: 'PUBG Mobile', serviceName: 'PUBG 60 UC key', price: 0.95, card: true },
  { id: 'ff_100dm', slug: 'freefire', gameName: 'Free Fire', serviceName: '100 Diamonds', price: 1.1, card: false },
];

/**
 * The `dear` class (sim/world.ts): a pack over 1,000 USD at each account (dearer at the second),
 * sold only in schedules with the class on. Charged at a reseller's volume discount (DEAR_DISCOUNT),
 * so the charge is not the catalog price and only the answer's amount says what was paid.
 */
export const DEAR_PACK_A: SimPack = { id: 'PUBG-81000', slug: 'pubg', gameName: 'PUBG Mobile', serviceName: '81000 UC', price: 1149.99, card: false };
export const DEAR_PACK_B: SimPack = { id: 'pubg_uc_81000', slug: 'pubg', gameName: 'PUBG Mobile', serviceName: '81000 UC', price: 1169.99, card: false };
/** Share off the list price of an order of 1,000 USD or more (volume tiers of real reseller panels). */
export const DEAR_DISCOUNT = 0.015;

/** The second account's pid of a first-account pack it also sells (a file may name either). */
export const PID_AT_B: Readonly<Record<string, string>> = { 'PUBG-60': 'pubg_uc_60', 'PUBG-325': 'pubg_uc_325', 'STEAM-5': 'steam_5usd', 'KEY-PUBG-60': 'pubg_key_60', [DEAR_PACK_A.id]: DEAR_PACK_B.id };

/** What the supplier charges for `qty` of `pack`, in micros: the list price, less the volume discount from 1,000 USD (the `dear` class). */
export function chargeMicros(pack: SimPack, qty: number, dear: boolean): number {
  const list = Math.round(pack.price * 1e6) * qty;
  return dear && list >= 1_000_000_000 ? Math.round((list * (1 - DEAR_DISCOUNT)) / 10_000) * 10_000 : list;
}

/** An amount as PHP's number_format writes it (`1,132.74`): what real-world answers of the `dear` class show from 1,000 up. */
export function withSeparators(micros: number): string {
  const [whole, cents] = (micros / 1e6).toFixed(2).split('.') as [string, string];
  return `${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${cents}`;
}

/** What makes one model account differ from another: where it is, its key, catalog, order ids, and its own faults. */
export interface ModelAccount {
  /** As in accounts.toml (`default` for a one-account home). */
  name: string;
  key: string;
  packs: readonly SimPack[];
  lines: readonly unknown[];
  /** The first letter of its order ids: two deployments may well both number orders M100001… */
  idPrefix: string;
  /** From this sim time on, POST /orders of this pid is refused before anything else (a pack withdrawn; its catalog still lists it). */
  refusePid: { pid: string; error: string; fromMs: number; asOk?: boolean } | null;
  /** The key is revoked during [fromMs, toMs): 401/403 on every route (an account problem), then restored. */
  keyRevoked: [number, number] | null;
}

/** `busy-history` (phrases.ts busyHistory): other buyers' orders before the run, one more every BUSY_GAP_MS, at most BUSY_MAX, ids from BUSY_ID_BASE. */
const BUSY_BEFORE = 240;
const BUSY_GAP_MS = 500;
const BUSY_MAX = 20_000;
const BUSY_ID_BASE = 900_000_000;
/** The largest page of `GET /history` in simple mode (spec: `limit` max 200), the one the engine asks for. */
const HISTORY_PAGE = 200;

export const ACCOUNT_A: ModelAccount = { name: 'default', key: SIM_KEY, packs: PACKS, lines: LINES, idPrefix: 'M', refusePid: null, keyRevoked: null };
export const LINES_OF_B: readonly unknown[] = LINES_B;

// ───────────────────────────── the ledger ─────────────────────────────

export type ModelStatus = 'processing' | 'completed' | 'cancelled';

export interface ModelOrder {
  orderId: string;
  trxid: string | null;
  pid: string;
  pack: SimPack;
  userId?: string;
  zoneId?: string;
  quantity?: number;
  amountMicros: number;
  status: ModelStatus;
  refunded: boolean;
  error?: string;
  codes: string[];
  /** Wall time of creation (as the supplier would show it). */
  createdAt: number;
  /** Monotonic sim time it ends (processing → completed/cancelled). */
  endsAt: number;
  fate: 'complete' | 'fail-refund' | 'fail-keep';
  /** Codes appear this long after completion (late codes). */
  codesLateMs: number;
  /** Who made it: an engine's request, the world before the run (the panel, another shop), or another key of ours at the same supplier (issue 29). */
  origin: 'engine' | 'foreign' | 'sibling';
  /** How its refund is shown (a failed, refunded order; or a completed one refunded later). */
  refundForm?: 'reported' | 'omitted' | 'late' | 'partial' | 'after-completed';
  /** Micros refunded: amountMicros, or part of it (partial). */
  refundMicros?: number;
  /** Sim time (monotonic) it was made (a read replica's lag counts from it). */
  madeAtMono?: number;
  /** For a player who does not exist (`checks`): it fails, refunded, "PLAYER NOT FOUND". */
  ghost?: boolean;
  /** Monotonic sim time from which a late refund is shown. */
  refundShownFrom?: number;
  /** A failed record of a refused attempt (phrases.ts `failedRecordBody`): cancelled at once, nothing charged; a resend replays it. */
  failedRecord?: boolean;
}

/** What the run's API does, decided by the schedule (schedule.ts). Shares are per request, 0..1. */
export interface ApiProfile {
  style: 'spec' | 'real-world';
  balanceUsd: number;
  /** Stock of each card pack at the start. */
  stock: number;
  /** Share of orders that stay processing a while (else they end in their answer). */
  processingShare: number;
  /** Share of orders that fail after placement (half of them without a refund). */
  failShare: number;
  /** POST /orders: answer lost after the order was made. */
  lostAfter: number;
  /** POST /orders: answer lost, nothing made (the request never arrived). */
  lostBefore: number;
  /** POST /orders: a 5xx or proxy page after the order was made. */
  errorAfter: number;
  /** POST /orders: a 5xx or proxy page, nothing made. */
  errorBefore: number;
  /** A resend of an existing order is refused by a check the API runs before idempotency. */
  refuseResend: number;
  /** A known trxid for another purchase: replayed (true) or refused as used (false). */
  replayOtherPurchase: boolean;
  /** GET routes: a 5xx or proxy page. */
  readError: number;
  /** Its own rolling limits (calls per window), all routes together; 429 beyond them. */
  limits: { limit: number; windowMs: number }[];
  /** 429s carry Retry-After (seconds) or not. */
  retryAfter: boolean;
  /** History echoes trxids / creation times. */
  historyTrxid: boolean;
  historyCreatedAt: boolean;
  /** Answers carry createdAt. */
  answerCreatedAt: boolean;
  /** Maintenance windows [fromMs, toMs) of sim time, orders refused with 503 meanwhile. */
  maintenance: [number, number][];
  /** An account problem (401/403 on every route) during [fromMs, toMs). */
  accountDown: [number, number][];
  /** Share of answers delivered slowly (near the client's timeout). */
  slow: number;
  /** Latency range of one way, ms. */
  latencyMs: [number, number];
  /** The API's clock minus ours (its Date headers and creation times), or no Date header at all (null). */
  serverSkewMs: number | null;
  // ── The wider world (issue 29, sim/world.ts). Optional: schedules written before replay as they were. ──
  /** Share of POST failures answered in a drawn status × body shape (world.ts SHAPES) instead of the corpus' (before and after creation). */
  shapes?: number;
  /** Share of replays answered without the `idempotentReplay` mark. */
  unmarkedReplay?: number;
  /** How a refund of a failed order is shown: shares of left out, late (first `refunded: false`), partial (a card order: part refunded, `refunded` false). */
  refundOmitted?: number;
  refundLate?: number;
  refundPartial?: number;
  /** Share of completed orders refunded later (the status turns `refunded`) after the engine may have read `completed`. */
  refundAfterCompleted?: number;
  /** How the supplier compares trxids: every letter case (JavaScript's fold), ASCII letters only (SQLite's lower()), or exactly. */
  trxidFold?: 'unicode' | 'ascii' | 'exact';
  /** A fault that never clears for the engine (world.ts): from `fromMs` until the operator acts at `untilMs` (far past the liveness bound). */
  forever?: { kind: ForeverKind; fromMs: number; untilMs: number } | null;
  /** The `dear` class (world.ts): a pack over 1,000 USD, a volume discount, amounts with thousands separators. */
  dear?: boolean;
  /**
   * The `resend-words` class (world.ts): no idempotent replays; every resend of an order already
   * made is refused as "trxid already used" in words (phrases.ts resendWordsBody), and the order
   * shows in history only RESEND_WORDS_LAG_MS after that refusal (a history read from a replica).
   */
  resendWords?: boolean;
  /** Player checks (issue 31, world.ts `checks`): the route's tariff and how its answers fail. Absent: the route answers, free, without faults. */
  checks?: CheckProfile;
  /** A 404 on reads (world.ts `read-404`): GET /orders/:id behind a replica, /history in a deploy window, or either route gone. */
  read404?: Read404Profile;
}

/**
 * The supplier's player checks (POST /pubgvvfy, /mlvfy: beyond the seed's spec, from the real
 * supplier's public clients, shared/real-supplier.md). A check that runs is charged `priceMicros`
 * by the supplier's tariff, whatever its answer says and whether the answer arrives.
 */
export interface CheckProfile {
  priceMicros: number;
  /** Answers lost: half before the check ran (nothing charged), half after (charged). */
  lost: number;
  /** A 5xx, proxy page or cut body after the check ran (charged). */
  error: number;
  /** 429 from the check route's own limiter (nothing charged). */
  limited: number;
  /** Windows [from, to) of sim time in which the route is refused (403 with a code, or a bare 404 page: nothing charged). */
  refused: [number, number][];
}

/** What a 404 on reads looks like (world.ts `read-404`). */
export interface Read404Profile {
  /** GET /orders/:id answers 404 for this long after the order was made (a read replica behind its primary). */
  lagMs: number;
  /** Windows [from, to) of sim time in which GET /history answers 404 (a deploy). */
  history: [number, number][];
  /** A route gone for the engine (the never-clearing form): every GET of it 404 from `fromMs` until the operator has the supplier fix it. */
  gone: { route: 'orders' | 'history'; fromMs: number; untilMs: number } | null;
}

/** One player check the model received (the checks' ledger). */
export interface ModelCheck {
  trxid: string;
  kind: 'pubg' | 'ml';
  player: string;
  zone?: string;
  /** Sim time it arrived. */
  at: number;
  /** What the supplier charged for it (0 when it never ran, or the tariff is 0). */
  chargedMicros: number;
  /** Whether the check ran (a charge of the tariff, even at 0). */
  ran: boolean;
  /** What the model answered: the verdict, or why there was none. */
  answer: 'found' | 'not-found' | 'lost' | 'error' | 'refused' | 'rate-limited' | 'bad-request';
  /** The process that sent it (set by the transport). */
  owner?: string;
}

/** A player id as the supplier compares it: Unicode-normalised, trimmed, without leading zeros. */
export function canonPlayer(id: string): string {
  const t = id.normalize('NFKC').trim();
  return /^\d+$/.test(t) ? t.replace(/^0+(?=\d)/, '') : t;
}

/** The ghost key of a player (a player id, with its zone for Mobile Legends). */
export function ghostKey(kind: 'pubg' | 'ml', userId: string, zoneId?: string): string {
  return kind === 'ml' ? `ml:${canonPlayer(userId)}(${canonPlayer(zoneId ?? '')})` : `pubg:${canonPlayer(userId)}`;
}

/** The check a pack's line has at the supplier, by its slug (the model's own reading, not the engine's). */
export function checkKindOf(slug: string): 'pubg' | 'ml' | null {
  return slug === 'pubg' ? 'pubg' : slug === 'mobilelegends' ? 'ml' : null;
}

/** A stable in-game name for a player id (the same id, the same name). */
export function playerName(key: string): string {
  let h = 2166136261;
  for (const ch of key) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  const first = ['Shadow', 'Ace', 'Lotus', 'Viper', 'Nova', 'Rex', 'Kira', 'Zed'];
  return `${first[h % first.length]}${(h >>> 8) % 10_000}`;
}

/** How long after a resend refused in words its order stays out of history (`resend-words`). */
export const RESEND_WORDS_LAG_MS = 4 * 60_000;

/** The faults that can last for ever (issue 29): an in-flight lock, maintenance, a history that never lists the order, account trouble, a revoked key. */
export type ForeverKind = 'lock' | 'maintenance' | 'history' | 'account' | 'revoked';

export interface ModelRequest {
  method: 'GET' | 'POST';
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: string | undefined;
}

export type ModelReply =
  | { kind: 'answer'; status: number; headers: Record<string, string>; body: string; cut?: boolean; slowMs?: number }
  | { kind: 'lost' };

interface CorpusVariant {
  name: string;
  response: { status: number; headers?: Record<string, string>; body: string; padBytes?: number; contentLength?: number; dropAfterBody?: boolean };
  expect: { error?: { classification?: string; mayExist?: boolean; apiCode?: string | null } };
  client?: unknown;
}

/** Failure variants of the answer corpus by what the model decided, read once. */
function loadCorpus(): Record<string, CorpusVariant[]> {
  const file = join(import.meta.dirname, '..', 'test', 'fixtures', 'answers', 'submit.json');
  const all = JSON.parse(readFileSync(file, 'utf8')) as CorpusVariant[];
  const by: Record<string, CorpusVariant[]> = {};
  for (const v of all) {
    const e = v.expect.error;
    if (!e || v.client !== undefined) continue;
    const key = `${e.classification}:${e.mayExist}`;
    (by[key] ??= []).push(v);
  }
  return by;
}
let corpus: Record<string, CorpusVariant[]> | undefined;

/** Body shapes of a failure (issue 29): JSON with a code, without one, with only an error phrase (Spring's, Express's default), HTML, plain text, empty, cut short. */
export const SHAPES = ['json-code', 'json-no-code', 'json-phrase', 'json-message', 'html', 'text', 'empty', 'cut'] as const;
const SHAPE_STATUS_AFTER = [500, 502, 503, 504, 520, 522, 524] as const;
const SHAPE_STATUS_BEFORE = [500, 502, 503, 504, 520, 522, 524, 400, 404, 405, 409, 413, 415, 422] as const;
const STATUS_PHRASE: Record<number, string> = {
  400: 'Bad Request', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity',
  500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout', 520: 'Web Server Returned an Unknown Error', 522: 'Connection Timed Out', 524: 'A Timeout Occurred',
};

const WORDS = {
  spec: { processing: 'processing', completed: 'completed', cancelled: 'cancelled' },
  realWorld: { processing: ['Pending', 'PROCESSING', 'queued', 'In Progress'], completed: ['Success', 'Completed', 'done', 'DELIVERED'], cancelled: ['Failed', 'Canceled', 'CANCELLED'] },
} as const;

/** The supplier's trxid comparison (ApiProfile.trxidFold). */
export function supplierFold(fold: ApiProfile['trxidFold'], t: string): string {
  if (fold === 'exact') return t;
  if (fold === 'ascii') return t.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return t.toLowerCase();
}

export class ModelApi {
  readonly orders: ModelOrder[] = [];
  readonly #byId = new Map<string, ModelOrder>();
  readonly #byTrxid = new Map<string, ModelOrder>();
  /** GET /orders/:id looks the id up in any letter case, as real suppliers' panels and APIs do. */
  readonly #byIdFolded = new Map<string, ModelOrder>();
  /** trxids that belong to another API user: 403 FORBIDDEN. */
  readonly forbidden = new Set<string>();
  /** trxids whose first request is being worked on (a slow creation): DUPLICATE_IN_FLIGHT. By the supplier's fold, as #byTrxid (one reading of "the same trxid" per supplier). */
  readonly #inFlight = new Set<string>();
  /** trxids stuck for ever (ForeverKind 'lock'). */
  readonly #locked = new Set<string>();
  /** Orders a history that never lists them leaves out (ForeverKind 'history'). */
  readonly #hidden = new Set<ModelOrder>();
  /** Orders out of history until this sim time (`resend-words`: a history that lags the refusal of a resend). */
  readonly #lagUntil = new Map<ModelOrder, number>();
  /** The next answer after creation is lost (the first request of a trxid stuck under a lock that never clears). */
  #loseNext = false;
  readonly #stock = new Map<string, number>();
  readonly #calls: number[] = [];
  readonly #rand: Entropy;
  readonly #sim: SimScheduler;
  readonly profile: ApiProfile;
  readonly account: ModelAccount;
  /**
   * The other account, when both are accounts at one supplier: they share one trxid space, and a
   * trxid the other account holds an order under is another API user's here (403 FORBIDDEN).
   */
  peer: ModelApi | null = null;
  balanceMicros: number;
  #nextId = 1;
  /** Players that do not exist (ghostKey): their checks answer not found; orders for them are still made (the money is gone). */
  readonly ghosts = new Set<string>();
  /** Every player check that reached it (issue 31): the checks' ledger. */
  readonly checks: ModelCheck[] = [];
  /** The trxid of every POST /orders that reached it, as sent (a check's trxid must never be one). */
  readonly postedTrxids: string[] = [];
  /**
   * Invariant 37: every POST /orders that reached the model, with whether its answer was a plain
   * refusal of a trxid under which no order exists (`nothing`: a refusal the engine's rule reads as
   * final, docs/real-suppliers.md: nothing created), whether that answer reached its process
   * (sim/transport.ts sets `delivered`), and the process that sent it.
   */
  readonly posts: { key: string; trxid: string; owner: string; at: number; nothing: boolean; delivered: boolean }[] = [];
  /** The last POST /orders' verdict (#submit sets it; the transport reads it with the answer). */
  lastPostNothing = false;

  /** The supplier's own reading of a trxid (its fold), for invariants that look a trxid up as it does. */
  foldKey(t: string): string {
    return this.#fold(t);
  }

  /** A plain refusal of a new purchase (invariant 37): nothing is created, and nothing exists under the trxid. */
  #refusal(trxid: string, r: ModelReply): ModelReply {
    this.lastPostNothing = !this.#byTrxid.has(this.#fold(trxid));
    return r;
  }
  /** The trxid of every check request that reached it, as sent (whatever was answered). */
  readonly checkTrxids: string[] = [];
  /** Sim times it answered an account signal (401, 403, a redirect, a 404/405/501 to a POST): an account pause needs one (invariant 33). */
  readonly accountSignals: number[] = [];
  /** Sim times it answered GET /history with 404 (`read-404`). */
  readonly history404s: number[] = [];
  /** Every request that reached it, for the run's figures. */
  readonly stats = { requests: 0, created: 0, replays: 0, lostAfter: 0, errorAfter: 0, refused: 0, rateLimited: 0, pidRefused: 0, keyRevoked: 0, peerForbidden: 0, siblingForbidden: 0, resendWords: 0, forever: 0, checks: 0, checksCharged: 0, checksNotFound: 0, checksLost: 0, read404: 0, shapes: 0, shapesAfter: 0, unmarked: 0, refundForms: 0, namedFailures: 0, failedRecords: 0, variants: new Set<string>() };

  constructor(sim: SimScheduler, profile: ApiProfile, seed: number, account: ModelAccount = ACCOUNT_A) {
    this.#sim = sim;
    this.profile = profile;
    this.account = profile.dear ? { ...account, packs: [...account.packs, account.key === SIM_KEY ? DEAR_PACK_A : DEAR_PACK_B] } : account;
    this.#rand = seededEntropy(account.key === SIM_KEY ? seed ^ 0x5eed : (seed ^ 0xb0b) + 17);
    this.balanceMicros = Math.round(profile.balanceUsd * 1e6);
    for (const p of account.packs) if (p.card) this.#stock.set(p.id, profile.stock);
    corpus ??= loadCorpus();
    if (busyHistory(`${seed}#${account.key}`)) this.#busyFrom = this.serverNow;
  }

  /** `busy-history` (phrases.ts busyHistory): the supplier time the run began, when this account's history is busy. */
  readonly #busyFrom: number | undefined;

  /** Other buyers' orders in a busy history at supplier time `t` (numbered 0 …, oldest first). */
  #busyCount(t: number): number {
    if (this.#busyFrom === undefined) return 0;
    return Math.min(BUSY_MAX, BUSY_BEFORE + Math.max(0, Math.floor((t - this.#busyFrom) / BUSY_GAP_MS) + 1));
  }

  #busyAt(k: number): number {
    return this.#busyFrom! + (k - BUSY_BEFORE) * BUSY_GAP_MS;
  }

  /** Another buyer's order, as history lists it: fixed fields (no draw), a pack and player no row of ours has. */
  #busyBody(k: number): Record<string, unknown> {
    const body: Record<string, unknown> = {
      orderId: `${this.account.idPrefix}${BUSY_ID_BASE + k}`, status: 'completed', game: 'other-shop', packName: "Another buyer's pack",
      amountUsd: this.profile.style === 'real-world' ? '1.25' : 1.25, userId: `busy-${k}`,
    };
    if (this.profile.historyTrxid) body.trxid = `BUSY-SHOP-${k}`;
    if (this.profile.historyCreatedAt) body.createdAt = new Date(this.#busyAt(k)).toISOString();
    return body;
  }

  /** How many orders of ours history lists newer than `o` (other buyers' included): its place on the newest-first list. */
  #busyNewer(o: ModelOrder): number {
    if (this.#busyFrom === undefined) return 0;
    const n = this.#busyCount(this.serverNow);
    // Filler k is newer than o when its time is after o's: k > (o.createdAt - from) / gap + BEFORE.
    const firstNewer = Math.max(0, Math.floor((o.createdAt - this.#busyFrom) / BUSY_GAP_MS) + BUSY_BEFORE + 1);
    return Math.max(0, n - firstNewer);
  }

  #fold(t: string): string {
    return supplierFold(this.profile.trxidFold, t);
  }

  #chance(p: number): boolean {
    return p > 0 && this.#rand.random() < p;
  }

  #pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.#rand.random() * xs.length)]!;
  }

  /** A foreign order made before the run (the supplier's panel, another shop of the account). */
  seedForeign(o: { pid: string; trxid: string | null; userId?: string; zoneId?: string; quantity?: number; agoMs: number }): ModelOrder {
    const pack = this.account.packs.find((p) => p.id === o.pid)!;
    const order = this.#make(pack, o.trxid, { userId: o.userId, zoneId: o.zoneId, quantity: o.quantity }, 'foreign');
    order.createdAt = this.serverNow - o.agoMs;
    order.status = 'completed';
    order.endsAt = 0;
    order.fate = 'complete';
    order.codesLateMs = 0;
    return order;
  }

  #make(pack: SimPack, trxid: string | null, f: { userId?: string | undefined; zoneId?: string | undefined; quantity?: number | undefined }, origin: ModelOrder['origin']): ModelOrder {
    const qty = pack.card ? (f.quantity ?? 1) : undefined;
    const order: ModelOrder = {
      orderId: `${this.account.idPrefix}${100_000 + this.#nextId++}`,
      trxid,
      pid: pack.id,
      pack,
      ...(f.userId !== undefined ? { userId: f.userId } : {}),
      ...(f.zoneId !== undefined ? { zoneId: f.zoneId } : {}),
      ...(qty !== undefined ? { quantity: qty } : {}),
      amountMicros: chargeMicros(pack, qty ?? 1, this.profile.dear === true),
      status: 'processing',
      refunded: false,
      codes: [],
      createdAt: this.serverNow,
      endsAt: this.#sim.mono,
      fate: 'complete',
      codesLateMs: 0,
      origin,
      madeAtMono: this.#sim.mono,
    };
    // Codes are the account's own: two accounts that number orders alike still deliver different codes.
    const codePrefix = this.account.key === SIM_KEY ? order.orderId : `${order.orderId}-B`;
    if (pack.card) order.codes = Array.from({ length: qty ?? 1 }, (_, i) => `${codePrefix}-C${i + 1}`);
    this.orders.push(order);
    this.#byId.set(order.orderId, order);
    this.#byIdFolded.set(order.orderId.toLowerCase(), order);
    if (trxid !== null) this.#byTrxid.set(this.#fold(trxid), order);
    return order;
  }

  /** Orders move on with time: processing ends at endsAt. */
  #settle(o: ModelOrder): void {
    if (o.status !== 'processing' || this.#sim.mono < o.endsAt) return;
    if (o.fate === 'complete') o.status = 'completed';
    else {
      o.status = 'cancelled';
      o.error = this.#pick(['INVALID PLAYER', 'PROVIDER ERROR', 'OUT OF STOCK UPSTREAM']);
      // A player who does not exist, as the game's provider says it: in real-world answers, Indonesian
      // providers' "Data tidak ditemukan" (data not found), words that also mean "no such order".
      if (o.ghost) o.error = this.profile.style === 'real-world' ? 'Data tidak ditemukan' : 'PLAYER NOT FOUND';
      if (o.fate === 'fail-refund') {
        o.refunded = true;
        const form = this.#refundForm(o);
        o.refundForm = form;
        o.refundMicros = form === 'partial' ? Math.round(o.amountMicros / (o.quantity ?? 1)) : o.amountMicros;
        if (form === 'late') o.refundShownFrom = this.#sim.mono + 5_000 + Math.floor(this.#rand.random() * 60_000);
        this.balanceMicros += o.refundMicros;
      }
    }
  }

  /** How a refund is shown (issue 29): reported, left out, late (after a cancel saying `refunded: false`), partial (a card order of several). */
  #refundForm(o: ModelOrder): NonNullable<ModelOrder['refundForm']> {
    const p = this.profile;
    const r = this.#rand.random();
    let acc = p.refundOmitted ?? 0;
    if (r < acc) return (this.stats.refundForms++, 'omitted');
    acc += p.refundLate ?? 0;
    if (r < acc) return (this.stats.refundForms++, 'late');
    acc += p.refundPartial ?? 0;
    if (r < acc && (o.quantity ?? 1) > 1) return (this.stats.refundForms++, 'partial');
    return 'reported';
  }

  /** A completed order refunded later (issue 29: the supplier reverses it; its status turns `refunded`). */
  #refundAfterCompleted(o: ModelOrder): void {
    if (o.status !== 'completed' || o.origin !== 'engine' || o.refundForm !== undefined || o.refundShownFrom === undefined || this.#sim.mono < o.refundShownFrom) return;
    o.status = 'cancelled';
    o.refunded = true;
    o.refundForm = 'after-completed';
    o.refundMicros = o.amountMicros;
    o.error = 'REVERSED';
    this.balanceMicros += o.amountMicros;
    this.stats.refundForms++;
  }

  /** Codes visible in an answer now (a late delivery shows none for a while). */
  #codesNow(o: ModelOrder): string[] {
    if (o.status !== 'completed' || !o.pack.card) return [];
    return this.#sim.mono >= o.endsAt + o.codesLateMs ? o.codes : [];
  }

  #rateLimited(): boolean {
    const now = this.#sim.mono;
    const longest = Math.max(...this.profile.limits.map((l) => l.windowMs), 1);
    while (this.#calls.length > 0 && this.#calls[0]! <= now - longest) this.#calls.shift();
    for (const l of this.profile.limits) {
      let n = 0;
      for (let i = this.#calls.length - 1; i >= 0 && this.#calls[i]! > now - l.windowMs; i--) n++;
      if (n >= l.limit) return true;
    }
    this.#calls.push(now);
    return false;
  }

  #inWindow(ws: [number, number][]): boolean {
    const t = this.#sim.mono;
    return ws.some(([a, b]) => t >= a && t < b);
  }

  // ───────────────────────────── answers ─────────────────────────────

  #json(status: number, body: unknown, headers: Record<string, string> = {}): ModelReply {
    return { kind: 'answer', status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
  }

  /** The API's own clock (skewed from ours by the profile). */
  get serverNow(): number {
    // The supplier's own clock: it does not step when ours does (a clock-step action is ours).
    return this.#sim.epoch + this.#sim.mono + (this.profile.serverSkewMs ?? 0);
  }

  /** Every answer leaves through here: the Date header an origin server adds. */
  answer(req: ModelRequest): ModelReply {
    const r = this.handle(req);
    // Invariant 33: what an account pause may stand on (classify.ts: 401, 403, a redirect, a missing POST route).
    if (r.kind === 'answer' && (r.status === 401 || r.status === 403 || (r.status >= 300 && r.status < 400) || (req.method !== 'GET' && [404, 405, 501].includes(r.status)))) this.accountSignals.push(this.#sim.mono);
    if (r.kind === 'answer' && this.profile.serverSkewMs !== null) r.headers = { date: new Date(this.serverNow).toUTCString(), ...r.headers };
    return r;
  }

  /** A failure variant of the corpus that means what the model decided (`classification:mayExist`). */
  #variant(key: string, fallback: () => ModelReply): ModelReply {
    const pool = corpus![key];
    if (!pool || pool.length === 0 || this.#rand.random() < 0.3) return fallback();
    const v = this.#pick(pool);
    this.stats.variants.add(v.name);
    const r = v.response;
    let body = r.body
      .replaceAll('{{KEY}}', this.account.key)
      .replace(/\{\{HTTP_DATE\+(\d+)\}\}/g, (_m, sec: string) => new Date(this.serverNow + Number(sec) * 1000).toUTCString());
    if (r.padBytes) body += ' '.repeat(r.padBytes);
    const headers: Record<string, string> = {};
    for (const [k, val] of Object.entries(r.headers ?? {})) {
      headers[k] = val.replace(/\{\{HTTP_DATE\+(\d+)\}\}/g, (_m, sec: string) => new Date(this.serverNow + Number(sec) * 1000).toUTCString());
    }
    return { kind: 'answer', status: r.status, headers, body, ...(r.dropAfterBody ? { cut: true } : {}) };
  }

  /** A real-world money text: `12.50`; from 1,000 up, in `dear` schedules, with thousands separators (`1,132.74`). */
  #money(micros: number): string {
    return this.profile.dear === true && micros >= 1_000_000_000 ? withSeparators(micros) : (micros / 1e6).toFixed(2);
  }

  #statusWord(s: ModelStatus): string {
    return this.profile.style === 'spec' ? WORDS.spec[s] : this.#pick(WORDS.realWorld[s]);
  }

  /** An order as the API shows it (spec 2.3), in the run's style. */
  orderBody(o: ModelOrder, extra: { replay?: boolean; forHistory?: boolean } = {}): Record<string, unknown> {
    this.#settle(o);
    this.#refundAfterCompleted(o);
    const rw = this.profile.style === 'real-world';
    const codes = this.#codesNow(o);
    const body: Record<string, unknown> = {};
    if (!extra.forHistory) body.orderCreated = rw && this.#chance(0.3) ? spacedBoolean(true, '1', o.orderId) : true;
    // Drawn as before; the order's own key then in one of the engine's spellings (api/order-id.ts), by the order id.
    body[rw && this.#chance(0.5) ? 'id' : rw ? orderIdKey(o.orderId) : 'orderId'] = o.orderId;
    body.status = this.#statusWord(o.status);
    body.game = o.pack.slug;
    if (!rw || this.#chance(0.7)) body.packName = o.pack.serviceName;
    body.amountUsd = rw ? this.#money(o.amountMicros) : o.amountMicros / 1e6;
    if (o.userId !== undefined && (!rw || this.#chance(0.8))) body.userId = rw && this.#chance(0.3) ? `${o.userId}${o.zoneId ? ` (${o.zoneId})` : ''}` : o.userId;
    if (codes.length > 0) body.codes = rw && this.#chance(0.5) ? codes.join(',') : codes;
    if (o.status === 'cancelled') {
      body.error = o.error ?? 'FAILED';
      // What the supplier shows of a refund: all of it; nothing (left out); not yet (late); a part (partial: `refunded` false, the part beside it).
      const form = o.refundForm ?? 'reported';
      const shown = o.refunded && (form === 'reported' || form === 'after-completed' || (form === 'late' && this.#sim.mono >= (o.refundShownFrom ?? 0)));
      if (form === 'after-completed') body.status = this.profile.style === 'spec' ? 'cancelled' : 'refunded';
      if (form !== 'omitted') body.refunded = rw ? spacedBoolean(shown, shown ? 1 : 0, o.orderId) : shown;
      if (form === 'partial') body.refundedAmountUsd = (o.refundMicros ?? 0) / 1e6;
    }
    if (extra.replay && !this.#chance(this.profile.unmarkedReplay ?? 0)) body.idempotentReplay = rw && this.#chance(0.5) ? spacedBoolean(true, 'true', o.orderId) : true;
    else if (extra.replay) this.stats.unmarked++;
    if (extra.forHistory ? this.profile.historyTrxid && o.trxid !== null : false) body.trxid = o.trxid;
    if (extra.forHistory ? this.profile.historyCreatedAt : this.profile.answerCreatedAt) {
      body.createdAt = rw && this.#chance(0.5) ? Math.floor(o.createdAt / 1000) : new Date(o.createdAt).toISOString();
    }
    if (rw && !extra.forHistory && this.#chance(0.3)) return { status: 'success', data: body };
    return body;
  }

  // ───────────────────────────── the routes ─────────────────────────────

  handle(req: ModelRequest): ModelReply {
    this.stats.requests++;
    this.lastPostNothing = false;
    // The ledger of trxids as they arrive, whatever is answered (invariant 31: a check's never an order's).
    const isCheck = req.method === 'POST' && (req.path === '/pubgvvfy' || req.path === '/mlvfy');
    if (req.method === 'POST' && (req.path === '/orders' || isCheck)) {
      let t: unknown;
      try {
        t = (JSON.parse(req.body ?? '') as Record<string, unknown>).trxid;
      } catch {
        t = undefined;
      }
      if (typeof t === 'string') (isCheck ? this.checkTrxids : this.postedTrxids).push(t);
    }
    const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /, '');
    if (key !== this.account.key) return this.#json(401, { success: false, code: 'INVALID_API_KEY', error: 'INVALID_API_KEY' });
    const revoked = this.account.keyRevoked;
    if ((revoked && this.#inWindow([revoked])) || this.#foreverNow('revoked')) {
      // The key revoked mid-run (a leak, a panel mistake): every route refuses it until it is restored.
      this.stats.keyRevoked++;
      this.accountSignals.push(this.#sim.mono);
      return this.#chance(0.5)
        ? this.#json(401, { success: false, code: 'INVALID_API_KEY', error: 'INVALID_API_KEY' })
        : this.#variant('account:false', () => this.#json(403, { success: false, code: 'API_KEY_REVOKED', error: 'API KEY REVOKED' }));
    }
    if (this.#inWindow(this.profile.accountDown) || this.#foreverNow('account')) {
      this.accountSignals.push(this.#sim.mono);
      return this.#variant('account:false', () => this.#json(403, { success: false, code: 'ACCOUNT_RESTRICTED', error: 'ACCOUNT_RESTRICTED' }));
    }
    if (this.#rateLimited()) {
      this.stats.rateLimited++;
      const headers: Record<string, string> = this.profile.retryAfter ? { 'retry-after': String(1 + Math.floor(this.#rand.random() * 3)) } : {};
      return this.#json(429, { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' }, headers);
    }
    if (req.method === 'POST' && req.path === '/orders') return this.#submit(req);
    if (isCheck) return this.#check(req, req.path === '/pubgvvfy' ? 'pubg' : 'ml');
    if (req.method !== 'GET') return this.#json(404, { success: false, error: 'NOT FOUND' });
    if (this.#chance(this.profile.readError)) {
      return this.#pick<ModelReply>([
        { kind: 'answer', status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' },
        this.#json(500, { success: false, error: 'INTERNAL ERROR' }),
        { kind: 'answer', status: 200, headers: { 'content-type': 'application/json' }, body: '{"success":true,"orders":[{"orderId":"M1' },
      ]);
    }
    switch (req.path) {
      case '/services':
        return this.#json(200, { success: true, services: this.account.lines });
      case '/products':
      case '/catalog':
        return this.#json(200, {
          success: true,
          products: this.account.packs.map((p) => ({
            id: p.id, slug: p.slug, gameName: p.gameName, serviceName: p.serviceName, category: p.card ? (p.slug.startsWith('gamekey') ? 'gamekey' : 'giftcard') : 'topup',
            price: this.profile.style === 'real-world' ? String(p.price) : p.price, status: 'active',
            ...(p.card ? { quantity: this.#stock.get(p.id) ?? 0, inStock: (this.#stock.get(p.id) ?? 0) > 0, quantityMin: 1, quantityMax: Math.min(500, Math.max(1, this.#stock.get(p.id) ?? 0)) } : {}),
          })),
        });
      case '/balance':
        return this.#json(200, { success: true, balanceUsd: this.profile.style === 'real-world' ? this.#money(this.balanceMicros) : this.balanceMicros / 1e6, currency: 'USD' });
      case '/my-ip':
        return this.#json(200, { success: true, ip: '203.0.113.7' });
      case '/history':
        if (this.#read404('history')) {
          this.history404s.push(this.#sim.mono);
          return this.#notFound(req.path);
        }
        return this.#history(req.query);
    }
    const m = /^\/orders\/(.+)$/.exec(req.path);
    if (m) {
      const o = this.#byIdFolded.get(decodeURIComponent(m[1]!).toLowerCase());
      // `read-404`: the route gone, or a read replica that has not seen the order yet.
      const r4 = this.profile.read404;
      if (this.#read404('orders') || (o && r4 && o.madeAtMono !== undefined && this.#sim.mono - o.madeAtMono < r4.lagMs)) return this.#notFound(req.path);
      if (!o) return this.#json(404, { success: false, error: 'ORDER NOT FOUND' });
      return this.#json(200, this.orderBody(o));
    }
    return this.#json(404, { success: false, error: 'NOT FOUND' });
  }

  /**
   * The orders (by id) a reader could find now and tie to their trxid: by id always, and in
   * history with the trxid when this supplier's history lists trxids and shows the order now
   * (not hidden by a never-clearing fault, not behind a lagging replica). `byId` are the ids only
   * GET /orders/:id shows; the rest are in history too. Invariant 29 reads both.
   */
  visibleNow(): Set<string> {
    const out = new Set<string>();
    // A key revoked or an account in trouble answers nothing; random read errors may answer the one look a round has.
    const revoked = this.account.keyRevoked;
    if ((revoked && this.#inWindow([revoked])) || this.#foreverNow('revoked') || this.#inWindow(this.profile.accountDown) || this.#foreverNow('account') || this.profile.readError > 0) return out;
    const hiding = this.#hidden.size > 0 && this.#sim.mono < (this.profile.forever?.untilMs ?? 0);
    const now = this.#sim.mono;
    // `read-404`: a route gone shows nothing; a history in a deploy window may be the one look a round has.
    const r4 = this.profile.read404;
    if (this.#read404('orders') || this.#read404('history') || (r4 && r4.history.length > 0)) return out;
    for (const o of this.orders) {
      if (o.origin !== 'engine') continue;
      // A busy history (`busy-history`) lists it only while it is on the first page a reader asks for (200).
      const onFirstPage = this.#busyFrom === undefined || this.#busyNewer(o) + this.orders.filter((x) => x.createdAt > o.createdAt).length < HISTORY_PAGE;
      const inHistory = this.profile.historyTrxid && o.trxid !== null && (!hiding || !this.#hidden.has(o)) && !((this.#lagUntil.get(o) ?? 0) > now) && onFirstPage;
      out.add(`${inHistory ? 'h' : 'i'}:${o.orderId}`);
    }
    return out;
  }

  /** Is this read route answering 404 now (`read-404`: gone, or /history in a deploy window)? */
  #read404(route: 'orders' | 'history'): boolean {
    const r4 = this.profile.read404;
    if (!r4) return false;
    const t = this.#sim.mono;
    if (r4.gone && r4.gone.route === route && t >= r4.gone.fromMs && t < r4.gone.untilMs) return true;
    return route === 'history' && this.#inWindow(r4.history);
  }

  /** A 404 to a read as suppliers write it: the spec's, with a code, framework defaults, proxy and empty pages. */
  #notFound(path: string): ModelReply {
    this.stats.read404++;
    const api = `/api/v1${path}`;
    return this.#pick<ModelReply>([
      this.#json(404, { success: false, error: 'ORDER NOT FOUND' }),
      this.#json(404, { success: false, code: 'ORDER_NOT_FOUND', error: 'Order not found' }),
      this.#json(404, { message: 'Not Found' }),
      this.#json(404, { timestamp: new Date(this.serverNow).toISOString(), status: 404, error: 'Not Found', path: api }),
      { kind: 'answer', status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, body: `<!DOCTYPE html><html><head><title>Error</title></head><body><pre>Cannot GET ${api}</pre></body></html>` },
      { kind: 'answer', status: 404, headers: { 'content-type': 'text/html' }, body: '<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>' },
      { kind: 'answer', status: 404, headers: { 'content-type': 'application/json' }, body: '' },
    ]);
  }

  /** Whether a player exists at this supplier (ghosts do not). */
  playerExists(kind: 'pubg' | 'ml', userId: string, zoneId?: string): boolean {
    return !this.ghosts.has(ghostKey(kind, userId, zoneId));
  }

  /**
   * POST /pubgvvfy `{playerId, trxid}` and /mlvfy `{userId, zoneId, trxid}` (issue 31). Never makes
   * an order. A check that runs is charged the tariff (the checks' ledger), whether its answer
   * arrives or not; one refused, rate-limited or lost on its way in is not.
   */
  #check(req: ModelRequest, kind: 'pubg' | 'ml'): ModelReply {
    this.stats.checks++;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body ?? '') as Record<string, unknown>;
    } catch {
      body = {};
    }
    const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : typeof x === 'number' ? String(x) : undefined);
    const trxid = str(body.trxid);
    const player = str(kind === 'pubg' ? body.playerId : body.userId);
    const zone = kind === 'ml' ? str(body.zoneId) : undefined;
    const rec: ModelCheck = { trxid: trxid ?? '', kind, player: player ?? '', ...(zone !== undefined ? { zone } : {}), at: this.#sim.mono, chargedMicros: 0, ran: false, answer: 'bad-request' };
    this.checks.push(rec);
    if (!trxid || !player || (kind === 'ml' && !zone)) return this.#json(400, { success: false, error: 'INVALID REQUEST' });
    const p: CheckProfile = this.profile.checks ?? { priceMicros: 0, lost: 0, error: 0, limited: 0, refused: [] };
    const rw = this.profile.style === 'real-world';
    if (this.#inWindow(p.refused)) {
      rec.answer = 'refused';
      return this.#chance(0.5)
        ? this.#json(403, { success: false, code: 'FEATURE_DISABLED', error: 'Player check is not enabled for this account' })
        : { kind: 'answer', status: 404, headers: { 'content-type': 'text/html' }, body: `<!DOCTYPE html><html><body><pre>Cannot POST /api/v1${req.path}</pre></body></html>` };
    }
    if (this.#chance(p.limited)) {
      rec.answer = 'rate-limited';
      return this.#json(429, { success: false, code: 'RATE_LIMIT', error: 'TOO MANY REQUESTS' }, this.profile.retryAfter ? { 'retry-after': '2' } : {});
    }
    if (this.#chance(p.lost / 2)) {
      rec.answer = 'lost';
      this.stats.checksLost++;
      return { kind: 'lost' };
    }
    if (this.balanceMicros < p.priceMicros) {
      rec.answer = 'refused';
      return this.#json(402, { success: false, code: 'INSUFFICIENT_BALANCE', error: 'Insufficient balance for player check' });
    }
    // The check runs: charged by the tariff from here on, whatever becomes of its answer.
    rec.ran = true;
    rec.chargedMicros = p.priceMicros;
    this.balanceMicros -= p.priceMicros;
    if (p.priceMicros > 0) this.stats.checksCharged++;
    const exists = this.playerExists(kind, player, zone);
    if (this.#chance(p.lost / 2)) {
      rec.answer = 'lost';
      this.stats.checksLost++;
      return { kind: 'lost' };
    }
    if (this.#chance(p.error)) {
      rec.answer = 'error';
      return this.#pick<ModelReply>([
        { kind: 'answer', status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>502 Bad Gateway</h1></body></html>' },
        this.#json(500, { success: false, error: 'INTERNAL ERROR' }),
        { kind: 'answer', status: 200, headers: { 'content-type': 'application/json' }, body: '{"success":true,"player', cut: true },
      ]);
    }
    rec.answer = exists ? 'found' : 'not-found';
    if (!exists) {
      this.stats.checksNotFound++;
      if (!rw) return this.#json(200, { success: false, error: 'Player not found' });
      return this.#pick<ModelReply>([
        this.#json(200, { success: false, error: 'Player not found' }),
        this.#json(400, { success: false, code: 'PLAYER_NOT_FOUND', error: 'Player not found' }),
        this.#json(422, { success: false, code: 'PLAYER_NOT_FOUND', message: 'Player not found' }),
        this.#json(404, { success: false, error: 'Player not found' }),
      ]);
    }
    const name = playerName(ghostKey(kind, player, zone));
    if (!rw) return this.#json(200, { success: true, playerName: name });
    return this.#pick<ModelReply>([
      this.#json(200, { success: true, playerName: name }),
      this.#json(200, { success: true, name }),
      this.#json(200, { status: 'success', data: { playerName: name } }),
      this.#json(200, { success: 'true', data: { name } }),
    ]);
  }

  #history(q: URLSearchParams): ModelReply {
    const hiding = this.#hidden.size > 0 && this.#sim.mono < (this.profile.forever?.untilMs ?? 0);
    const now = this.#sim.mono;
    const all = this.orders.filter((o) => (!hiding || !this.#hidden.has(o)) && !((this.#lagUntil.get(o) ?? 0) > now)).sort((a, b) => b.createdAt - a.createdAt || Number(b.orderId.slice(1)) - Number(a.orderId.slice(1)));
    const paged = q.has('page');
    const size = paged ? Math.min(50, Math.max(1, Number(q.get('pageSize') ?? 20))) : Math.min(HISTORY_PAGE, Math.max(1, Number(q.get('limit') ?? 30)));
    const page = paged ? Math.max(1, Number(q.get('page'))) : 1;
    // A busy history (`busy-history`): other buyers' orders among ours, newest first; only the newest
    // the page needs are made (a fixed body each, no draw: the random stream stays as it was).
    const busy = this.#busyCount(this.serverNow);
    const entries: { at: number; o?: ModelOrder; k?: number }[] = all.map((o) => ({ at: o.createdAt, o }));
    if (busy > 0) {
      for (let k = busy - 1; k >= Math.max(0, busy - page * size); k--) entries.push({ at: this.#busyAt(k), k });
      entries.sort((a, b) => b.at - a.at || (a.o ? 0 : 1) - (b.o ? 0 : 1));
    }
    const total = all.length + busy;
    const slice = entries.slice((page - 1) * size, page * size).map((e) => (e.o ? this.orderBody(e.o, { forHistory: true }) : this.#busyBody(e.k!)));
    if (paged) return this.#json(200, { success: true, count: slice.length, total, hasMore: page * size < total, orders: slice });
    return this.#json(200, { success: true, count: slice.length, orders: slice });
  }

  #submit(req: ModelRequest): ModelReply {
    this.lastPostNothing = false;
    this.#loseNext = false;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body ?? '') as Record<string, unknown>;
    } catch {
      return this.#json(401, { success: false, error: 'INVALID JSON' });
    }
    const trxid = typeof body.trxid === 'string' ? body.trxid : undefined;
    const pid = typeof body.pid === 'string' ? body.pid : undefined;
    if (!trxid || !pid) return this.#json(400, { success: false, error: 'INVALID REQUEST' });
    // Invariant 28: what the supplier last decided about this trxid (a balance refusal, or anything else).
    this.#lastDecision.set(this.#fold(trxid), 'other');
    if (this.#chance(this.profile.lostBefore)) return { kind: 'lost' };
    if (this.#chance(this.profile.errorBefore)) {
      if (this.#chance(this.profile.shapes ?? 0)) return this.#shaped(false);
      return this.#variant('ambiguous:true', () => this.#json(500, { success: false, error: 'INTERNAL ERROR' }));
    }
    if (this.#inWindow(this.profile.maintenance) || this.#foreverNow('maintenance')) {
      return this.#refusal(trxid, this.#variant('paused:false', () => this.#json(503, { success: false, code: 'MAINTENANCE', error: 'MAINTENANCE' })));
    }
    const pack = this.account.packs.find((p) => p.id === pid);
    if (!pack) return this.#refusal(trxid, this.#json(400, { success: false, error: 'UNKNOWN PID' }));
    const withdrawn = this.account.refusePid;
    if (withdrawn && withdrawn.pid === pid && this.#sim.mono >= withdrawn.fromMs && !this.#foreverNow('history')) {
      // A pack withdrawn while its catalog still lists it: every POST of the pid is refused first,
      // resends of an order already made included (the refusal then proves nothing about a charge).
      this.stats.pidRefused++;
      // The `failed-record` family: the first refusal of a trxid kept as a failed order and named
      // beside `orderCreated: false` (one trxid in two; not in the HTTP 200 form, which says no
      // `orderCreated`). A trxid already holding an order is refused plainly, as before.
      const f = { userId: typeof body.userId === 'string' ? body.userId : undefined, zoneId: typeof body.zoneId === 'string' ? body.zoneId : undefined, quantity: typeof body.quantity === 'number' ? body.quantity : undefined };
      const record = withdrawn.asOk === true || this.#byTrxid.has(this.#fold(trxid)) ? undefined : this.#failedRecord(pack, trxid, f, withdrawn.error);
      return record ?? this.#refusal(trxid, withdrawn.asOk === true ? this.#json(200, { success: false, error: withdrawn.error }) : this.#json(400, { success: false, orderCreated: false, error: withdrawn.error }));
    }
    const userId = typeof body.userId === 'string' ? body.userId : undefined;
    const zoneId = typeof body.zoneId === 'string' ? body.zoneId : undefined;
    const quantity = typeof body.quantity === 'number' ? body.quantity : undefined;
    if (this.forbidden.has(trxid.toLowerCase()) || this.siblingHolds(trxid) || this.peer?.siblingHolds(trxid) === true) {
      return this.#variant('forbidden:false', () => this.#json(403, { success: false, code: 'FORBIDDEN', error: 'FORBIDDEN' }));
    }
    if (this.peer?.byTrxid(trxid) !== undefined) {
      // Two accounts at one supplier: the trxid is the other account's (spec: 403 FORBIDDEN).
      this.stats.peerForbidden++;
      return this.#variant('forbidden:false', () => this.#json(403, { success: false, code: 'FORBIDDEN', error: 'FORBIDDEN' }));
    }
    if (this.#foreverNow('lock')) {
      // A lock that never clears: the first request of a trxid during the fault is stuck at the
      // supplier (its order made or not, half and half, its answer never comes); every later one
      // is DUPLICATE_IN_FLIGHT until the operator has the supplier clear it.
      this.stats.forever++;
      const k = this.#fold(trxid);
      if (!this.#locked.has(k)) {
        this.#locked.add(k);
        if (this.#chance(0.5)) return { kind: 'lost' };
        // Else the order is made (if it can be) and its answer never comes.
        this.#loseNext = true;
      } else {
        return this.#json(429, { success: false, code: 'DUPLICATE_IN_FLIGHT', error: 'DUPLICATE_IN_FLIGHT' });
      }
    }
    if (this.#inFlight.has(this.#fold(trxid))) {
      // Drawn as before (the same random stream), then said in words for one trxid in three (sim/phrases.ts).
      const coded = this.#variant('retry-later:true', () => this.#json(429, { success: false, code: 'DUPLICATE_IN_FLIGHT', error: 'DUPLICATE_IN_FLIGHT' }));
      const words = inFlightInWords(trxid);
      return words ? this.#json(words.status, words.body) : coded;
    }
    const existing = this.#byTrxid.get(this.#fold(trxid));
    if (existing) {
      const same = existing.pid === pid && (existing.userId ?? '') === (userId ?? '') && (existing.quantity ?? 1) === (quantity ?? 1);
      // A failed record (`failed-record`) is replayed as what it is, a cancelled order: the checks
      // below refuse resends of orders that may have charged, and this one charged nothing.
      if (existing.failedRecord === true && same) {
        this.stats.replays++;
        return this.#json(200, this.orderBody(existing, { replay: true }));
      }
      if (this.profile.resendWords === true && same && !this.#foreverNow('history')) {
        // No idempotent replays: the resend is refused in words only ("trxid already used"), and
        // history, read from a lagging replica, does not list the order for a while: the words
        // are the only sign of the charge, so the engine must read them (and wait for history).
        this.stats.resendWords++;
        if (!this.#lagUntil.has(existing)) this.#lagUntil.set(existing, this.#sim.mono + RESEND_WORDS_LAG_MS);
        return this.#json(400, resendWordsBody(trxid));
      }
      // A check some deployments run before idempotency refuses the resend of an order that exists.
      // (Not while history hides orders: no one, engine or person, could then tell a charge.)
      if (!this.#foreverNow('history') && this.#chance(this.profile.refuseResend)) {
        this.stats.refused++;
        const generic = this.#pick(['INVALID PACK', 'INSUFFICIENT BALANCE', 'INSUFFICIENT STOCK']); // drawn as before
        const words = resendRefusedInWords(trxid); // sim/phrases.ts
        return this.#json(400, words ?? { orderCreated: false, status: 'cancelled', game: pack.slug, error: generic });
      }
      if (!same && !this.profile.replayOtherPurchase) {
        return this.#variant('duplicate-trxid:true', () => this.#json(400, duplicateTrxidBody(trxid)));
      }
      this.stats.replays++;
      return this.#afterCreation(this.orderBody(existing, { replay: true }), existing);
    }
    // Validation of a new purchase: nothing is created on these refusals.
    if (!pack.card && quantity !== undefined) return this.#refusal(trxid, this.#json(400, { success: false, error: 'QUANTITY ONLY FOR GAMEKEY OR GIFTCARD' }));
    if (!pack.card && !userId) return this.#refusal(trxid, this.#json(400, { success: false, error: 'INVALID REQUEST' }));
    if (pack.slug === 'mobilelegends' && !zoneId) return this.#refusal(trxid, this.#json(400, { success: false, error: 'INVALID REQUEST' }));
    const qty = pack.card ? (quantity ?? 1) : 1;
    if (pack.card && (this.#stock.get(pack.id) ?? 0) < qty) {
      // The `failed-record` family (phrases.ts) for stock too: a supplier that keeps every attempt
      // keeps a sold-out one as a failed order and names it (one trxid in two). A stock refusal
      // moves a row to another account (dispatch/failover.ts), so two-account schedules with card
      // rows meet a refusal naming a failed record often, not only when a pack is withdrawn (#1875).
      const record = this.#failedRecord(pack, trxid, { userId, zoneId, quantity }, 'INSUFFICIENT STOCK');
      return record ?? this.#refusal(trxid, this.#json(400, { orderCreated: false, status: 'cancelled', game: pack.slug, error: 'INSUFFICIENT STOCK' }));
    }
    const price = chargeMicros(pack, qty, this.profile.dear === true);
    if (this.balanceMicros < price) {
      this.#lastDecision.set(this.#fold(trxid), 'balance');
      const refused = this.#variant('insufficient-balance:false', () => this.#json(400, { orderCreated: false, status: 'cancelled', game: pack.slug, error: 'INSUFFICIENT BALANCE' }));
      // The `failed-record` family (phrases.ts): for one trxid in two the supplier keeps the
      // attempt as a failed order (cancelled at once, nothing charged: refunded in full and shown
      // so) and names it in the refusal, beside `orderCreated: false`.
      const record = this.#failedRecord(pack, trxid, { userId, zoneId, quantity }, 'INSUFFICIENT BALANCE');
      // The `status-msg` family (phrases.ts): for one trxid in four the refusal is `{status: false, msg}` only.
      const words = statusMsgBody(trxid, spelled('insufficient balance', trxid));
      return record ?? this.#refusal(trxid, words ? this.#json(400, words) : refused);
    }
    // The order is made and charged.
    const o = this.#make(pack, trxid, { userId, zoneId, quantity }, 'engine');
    if (this.#foreverNow('history')) this.#hidden.add(o);
    this.stats.created++;
    this.balanceMicros -= price;
    if (pack.card) this.#stock.set(pack.id, (this.#stock.get(pack.id) ?? 0) - qty);
    const processing = this.#chance(this.profile.processingShare);
    o.endsAt = this.#sim.mono + (processing ? 2_000 + Math.floor(this.#rand.random() * 20_000) : 0);
    o.fate = this.#chance(this.profile.failShare) ? (this.#chance(0.5) ? 'fail-refund' : 'fail-keep') : 'complete';
    o.codesLateMs = pack.card && this.#chance(0.2) ? 5_000 + Math.floor(this.#rand.random() * 30_000) : 0;
    if (o.fate === 'complete' && this.#chance(this.profile.refundAfterCompleted ?? 0)) o.refundShownFrom = o.endsAt + 10_000 + Math.floor(this.#rand.random() * 120_000);
    // A top-up for a player who does not exist (`checks`: bought without a check) fails at the
    // game, refunded, its reason the player's ("PLAYER NOT FOUND"): decided after the draws above, so
    // the model's random stream is the same. Its reason is then in "not found" words (#settle).
    const kind = checkKindOf(pack.slug);
    if (kind !== null && userId !== undefined && !this.playerExists(kind, userId, zoneId)) {
      o.fate = 'fail-refund';
      o.ghost = true;
    }
    return this.#afterCreation(this.orderBody(o), o);
  }

  /** A refusal (balance, a withdrawn pack) kept as a failed order and named in the answer (phrases.ts `failedRecordBody`), or undefined (this trxid's refusals are plain). */
  #failedRecord(pack: SimPack, trxid: string, f: { userId?: string | undefined; zoneId?: string | undefined; quantity?: number | undefined }, error: string): ModelReply | undefined {
    const id = `${this.account.idPrefix}${100_000 + this.#nextId}`;
    const body = failedRecordBody(trxid, id, error);
    if (!body) return undefined;
    const o = this.#make(pack, trxid, f, 'engine');
    o.status = 'cancelled';
    o.fate = 'fail-refund';
    o.error = error;
    o.refunded = true;
    o.refundForm = 'reported';
    o.refundMicros = o.amountMicros;
    o.failedRecord = true;
    this.stats.failedRecords++;
    this.stats.variants.add('failed-record');
    return this.#json(400, body);
  }

  /** The answer to a submit once an order exists: maybe lost, maybe a 5xx or a page instead. */
  #afterCreation(order: Record<string, unknown>, o: ModelOrder): ModelReply {
    if (this.#loseNext) {
      this.#loseNext = false;
      this.stats.lostAfter++;
      return { kind: 'lost' };
    }
    if (this.#foreverNow('history')) {
      // A history that never lists the order, and no answer for it: only a person can settle the row.
      this.stats.forever++;
      this.stats.lostAfter++;
      return { kind: 'lost' };
    }
    if (this.#chance(this.profile.lostAfter)) {
      this.stats.lostAfter++;
      return { kind: 'lost' };
    }
    if (this.#chance(this.profile.errorAfter)) {
      this.stats.errorAfter++;
      if (this.#chance(this.profile.shapes ?? 0)) {
        this.stats.shapesAfter++;
        return this.#shaped(true);
      }
      const page = this.#variant('ambiguous:true', () => ({ kind: 'answer', status: 502, headers: { 'content-type': 'text/html' }, body: '<html><body>502 Bad Gateway</body></html>' }));
      // The `named-failure` family (phrases.ts): for one trxid in three, the failure names the
      // order it made under an order's key, with a refusal status and no status word (drawn after
      // the page, so the random stream is as it was).
      const named = o.trxid !== null ? namedOrderFailure(o.trxid, o.orderId) : undefined;
      if (named) {
        this.stats.namedFailures++;
        this.stats.variants.add(`named-failure:${named.status}`);
        return this.#json(named.status, named.body);
      }
      return page;
    }
    const slowMs = this.#chance(this.profile.slow) ? 5_000 + Math.floor(this.#rand.random() * 12_000) : undefined;
    return { ...this.#json(200, order), ...(slowMs ? { slowMs } : {}) } as ModelReply;
  }

  /**
   * A failure in one of every status × body shape (issue 29): a status a proxy, a framework or the
   * supplier's own code gives, in a body that says nothing about whether an order was made. After
   * creation only server-side statuses (an order made, then the answer failed on its way); before
   * creation any status but those whose codes mean something the model did not decide.
   */
  #shaped(after: boolean): ModelReply {
    this.stats.shapes++;
    const status = this.#pick(after || this.#foreverNow('history') ? SHAPE_STATUS_AFTER : SHAPE_STATUS_BEFORE);
    const shape = this.#pick(SHAPES);
    const phrase = STATUS_PHRASE[status] ?? 'Error';
    this.stats.variants.add(`shape:${status}:${shape}${after ? ':after' : ''}`);
    switch (shape) {
      case 'json-code': return this.#json(status, { success: false, code: 'INTERNAL_ERROR', error: 'Something went wrong' });
      case 'json-no-code': return this.#json(status, { success: false });
      case 'json-phrase': return this.#json(status, { status, error: phrase });
      case 'json-message': return this.#json(status, { timestamp: new Date(this.serverNow).toISOString(), status, error: phrase, message: '', path: '/api/v1/orders' });
      case 'html': return { kind: 'answer', status, headers: { 'content-type': 'text/html' }, body: `<html><head><title>${status} ${phrase}</title></head><body><center><h1>${status} ${phrase}</h1></center></body></html>` };
      case 'text': return { kind: 'answer', status, headers: { 'content-type': 'text/plain' }, body: `${status} ${phrase}` };
      case 'empty': return { kind: 'answer', status, headers: { 'content-type': 'application/json' }, body: '' };
      case 'cut': return { kind: 'answer', status, headers: { 'content-type': 'application/json' }, body: '{"success":false,"err', cut: true };
    }
  }

  /** The order a request with this trxid would meet, for DUPLICATE_IN_FLIGHT (transport.ts marks the span). */
  markInFlight(trxid: string, on: boolean): void {
    if (on) this.#inFlight.add(this.#fold(trxid));
    else this.#inFlight.delete(this.#fold(trxid));
  }

  byTrxid(trxid: string): ModelOrder | undefined {
    return this.#byTrxid.get(this.#fold(trxid));
  }

  /** What the supplier last decided on a POST of each trxid (by its fold): refused for want of balance, or anything else. */
  readonly #lastDecision = new Map<string, 'balance' | 'other'>();
  /** The last POST of this trxid was refused because the balance could not pay for it (nothing made). */
  lastRefusedForBalance(trxid: string): boolean {
    return this.#lastDecision.get(this.#fold(trxid)) === 'balance';
  }

  /** Orders another key of ours at this supplier placed (issue 29): one trxid space, 403 FORBIDDEN here. */
  readonly sibling = new Map<string, ModelOrder>();
  /**
   * The sibling orders (by order id) a POST of ours met: the supplier, comparing trxids its own way
   * (`trxidFold`), took the trxid sent as the sibling's and refused it FORBIDDEN. Recorded when the
   * supplier decides, whether or not its answer reaches the engine (a lost FORBIDDEN leaves the row
   * in doubt, which must never be read as "not charged"). Invariant 1 counts a sibling's charge
   * against a purchase of ours only when met: a trxid the supplier takes as another (`shop-5` sent,
   * `SHOP-5` held, a supplier comparing exactly) is a new purchase to every client, and nothing in
   * this home could tell it was placed elsewhere (docs/simulator.md, Limits).
   */
  readonly siblingMet = new Set<string>();

  /**
   * Whether another key of ours holds this trxid here (FORBIDDEN): by this supplier's comparison.
   * Asked by the peer too when both accounts are one supplier (one trxid space, its keys ours).
   */
  siblingHolds(trxid: string): boolean {
    const o = this.sibling.get(this.#fold(trxid));
    if (!o) return false;
    this.stats.siblingForbidden++;
    this.siblingMet.add(o.orderId);
    return true;
  }

  /** Another key (another home) of ours placed this purchase before the run, under this trxid. */
  seedSibling(o: { pid: string; trxid: string; userId?: string; zoneId?: string; quantity?: number }): void {
    const pack = this.account.packs.find((p) => p.id === o.pid);
    if (!pack) return;
    const qty = pack.card ? (o.quantity ?? 1) : undefined;
    this.sibling.set(this.#fold(o.trxid), {
      orderId: `K${100_000 + this.sibling.size + 1}`, trxid: o.trxid, pid: pack.id, pack,
      ...(o.userId !== undefined ? { userId: o.userId } : {}), ...(o.zoneId !== undefined ? { zoneId: o.zoneId } : {}), ...(qty !== undefined ? { quantity: qty } : {}),
      amountMicros: Math.round(pack.price * 1e6) * (qty ?? 1), status: 'completed', refunded: false, codes: [], createdAt: this.serverNow - 3_600_000,
      endsAt: 0, fate: 'complete', codesLateMs: 0, origin: 'sibling',
    });
  }

  /** A never-clearing fault of this kind is on now. */
  #foreverNow(kind: ForeverKind): boolean {
    const f = this.profile.forever;
    return f != null && f.kind === kind && this.#sim.mono >= f.fromMs && this.#sim.mono < f.untilMs;
  }

  byId(orderId: string): ModelOrder | undefined {
    return this.#byId.get(orderId);
  }

  /** Settles every order up to now (for the final judgement). */
  settleAll(): void {
    for (const o of this.orders) {
      this.#settle(o);
      this.#refundAfterCompleted(o);
    }
  }

  /** The operator tops the account up (between batches waiting for balance). */
  topUp(usd: number): void {
    this.balanceMicros += Math.round(usd * 1e6);
  }
}
