/**
 * Player-name checks before the money (docs/player-checks.md). Off unless TOPUP_PLAYER_CHECKS
 * turns them on (config/player-check-settings.ts).
 *
 * Where the decision lives. A row's check is decided when its batch is stored (claim/load.ts),
 * from the cache table player_checks, in the transaction that writes the row: a row whose
 * player the supplier said does not exist is born `invalid` with reject_code
 * TOPUP_PLAYER_NOT_FOUND (never sendable: the store holds it, not a flag in memory); a found one
 * is stored with its name. A batch whose rows' checks are not all answered (no answer, a 429, a
 * refusal) is not opened at all: it stays `claimed`, waiting (`player-checks`), its rows not
 * sendable, and the checks still owed are asked again (each under a new check trxid: a check is
 * never an order, so a lost answer is only asked again). Answers that came are kept in the cache as
 * they arrive, so a wait loses none of them and a player is asked once.
 *
 * A check never places an order and never stands in for one: its trxid is of the check space
 * (kernel/identity.ts), and this module only calls ResellerClient.checkPlayer.
 */
import { Priority, type PlayerCheckRequest, type PlayerCheckResult } from '../api/client.js';
import type { OrderRequest } from '../api/schemas.js';
import { checkedLine, checkKindOfSlug, type PlayerCheckSettings } from '../config/player-check-settings.js';
import { checkTrxid } from '../kernel/identity.js';
import { CHECK_PATHS, oneLine } from '../api/player-check.js';
import { countCheck, countedOutcome } from '../api/player-check-counts.js';
import type { Runtime } from '../runtime.js';
import { CheckInFlight, FLIGHT_MARGIN_MS, PlayerCheckStore, type CachedCheck } from '../store/player-checks.js';
import { playerKey } from '../api/player-id.js';

/** reject_code of a row held because the supplier's check said its player does not exist. */
export const PLAYER_NOT_FOUND_CODE = 'TOPUP_PLAYER_NOT_FOUND';

/** The column (any spelling with these letters) that says "send this row without a check". */
const OVERRIDE_KEYS = new Set(['sendwithoutcheck', 'sendwithoutplayercheck', 'nocheck', 'noplayercheck', 'skipcheck', 'skipplayercheck']);
export const OVERRIDE_COLUMN = 'sendWithoutCheck';

/** The column of a header that says "send without a check", or undefined. */
export function overrideColumn(header: readonly string[]): number | undefined {
  const i = header.findIndex((h) => OVERRIDE_KEYS.has(h.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[\s_\-.:']/g, '')));
  return i < 0 ? undefined : i;
}

/** Does the row say "send without a check"? yes, y, 1, true, x. */
export function saysSendWithoutCheck(cells: readonly string[], column: number | undefined): boolean {
  if (column === undefined) return false;
  return /^(yes|y|1|true|x|ja|si|sí|ya)$/i.test((cells[column] ?? '').trim());
}

/** One player to check: which check, the player's fields as the cache keys them, the request it sends. */
export interface CheckNeed {
  kind: 'pubg' | 'ml';
  /** `5123456` (PUBG) or `777888999(2005)` (ML): the cache's key with `kind`. */
  player: string;
  /** The account the row is placed on: its client sends the check. */
  account: string;
}

/** The check a row needs under these settings, or null (its line is not checked, or has no player fields). */
export function checkOf(s: PlayerCheckSettings, slug: string, request: OrderRequest, account: string): CheckNeed | null {
  const kind = checkedLine(s, slug);
  if (kind === null || !request.userId) return null;
  // The player's key is the order desk's too (api/player-id.ts): one cache of checks for both.
  if (kind === 'ml') return request.zoneId ? { kind, player: playerKey({ kind, userId: request.userId, zoneId: request.zoneId }), account } : null;
  return { kind, player: playerKey({ kind, userId: request.userId }), account };
}

const needKey = (n: { kind: string; player: string }): string => `${n.kind}\u0000${n.player}`;

function requestOf(n: CheckNeed, trxid: string): PlayerCheckRequest {
  if (n.kind === 'pubg') return { kind: 'pubg', playerId: n.player, trxid };
  const m = /^(.*)\((.*)\)$/.exec(n.player)!;
  return { kind: 'ml', userId: m[1]!, zoneId: m[2]!, trxid };
}

type Parts = Pick<Runtime, 'accounts' | 'clock' | 'config' | 'db' | 'entropy' | 'log'>;

/**
 * What the checks of a file's rows say now, from the cache, without a call: per row the cached
 * answer, or `pending` (owed a check), or `seen` (spared: completed recently), or `override`.
 */
export class CheckPlanner {
  readonly store: PlayerCheckStore;
  readonly #rt: Parts;
  readonly #seen: Set<string>;
  readonly #now: number;
  /** Distinct players owed a check, in the order first met. */
  readonly pending = new Map<string, CheckNeed>();
  /** Distinct players checked (cached) or owed, and rows spared. */
  readonly players = new Set<string>();
  spared = 0;
  overridden = 0;
  /** When the kept answer of each player judged from the cache was made (the metric's `cached`). */
  readonly keptAt = new Map<string, number>();

  constructor(rt: Parts) {
    this.#rt = rt;
    this.store = new PlayerCheckStore(rt.db);
    this.#now = rt.clock.now();
    this.#seen = new Set();
    const s = rt.config.playerChecks;
    if (s.lines !== 'off' && s.skipSeenMs > 0) {
      for (const r of this.store.completedSince(this.#now - s.skipSeenMs)) {
        const kind = checkKindOfSlug(r.slug);
        if (kind === null || r.userId === null) continue;
        this.#seen.add(needKey({ kind, player: playerKey({ kind, userId: String(r.userId), zoneId: r.zoneId }) }));
      }
    }
  }

  get on(): boolean {
    return this.#rt.config.playerChecks.lines !== 'off';
  }

  /**
   * The verdict for one valid row: `none` (not checked: its line is not, or the row says send
   * without a check, or its player was seen completed recently), `cached` (the answer kept), or
   * `pending` (owed a check).
   */
  judge(slug: string, request: OrderRequest, account: string, override: boolean):
    | { kind: 'none'; why: 'off' | 'override' | 'seen' }
    | { kind: 'cached'; answer: CachedCheck }
    | { kind: 'pending'; need: CheckNeed } {
    const need = checkOf(this.#rt.config.playerChecks, slug, request, account);
    if (need === null) return { kind: 'none', why: 'off' };
    if (override) {
      this.overridden++;
      return { kind: 'none', why: 'override' };
    }
    const key = needKey(need);
    if (this.#seen.has(key)) {
      this.spared++;
      return { kind: 'none', why: 'seen' };
    }
    this.players.add(key);
    const answer = this.store.cached(need.kind, need.player, this.#now, this.#rt.config.playerChecks.cacheMs);
    if (answer) {
      this.keptAt.set(key, answer.checkedAt);
      return { kind: 'cached', answer };
    }
    if (!this.pending.has(key)) this.pending.set(key, need);
    return { kind: 'pending', need };
  }

  /** What the owed checks may cost at the price the reseller set (TOPUP_PLAYER_CHECK_PRICE_USD). */
  get pendingCostUsd(): number {
    return Math.round(this.pending.size * this.#rt.config.playerChecks.priceUsd * 1e6) / 1e6;
  }
}

export interface CheckRun {
  /** Checks sent. */
  sent: number;
  /** Of them, answered found or not found (kept in the cache). */
  settled: number;
  /** Still owed (no answer, rate-limited, refused, or not reached before the deadline). */
  owed: number;
  /** The last answer that settled nothing, in words (for the batch's wait detail). */
  lastProblem: string | undefined;
  /** A check was refused (the key, the account, the route): asking again at once would not help. */
  refused: boolean;
}

/** How soon a check of a player another ask is making is looked for again. */
const IN_FLIGHT_LOOK_MS = 250;

/** Checks at once: the rate gate paces them; more would only queue in it. */
const CONCURRENCY = 4;

/**
 * Sends the owed checks (each under a fresh check trxid, through its account's rate gate) until
 * they are done or `deadlineMs` of the wall clock has passed, recording every call and caching
 * every settling answer as it comes. Stops early on a refusal: the rest would be refused alike.
 */
export async function runChecks(rt: Parts, needs: Iterable<CheckNeed>, batchId: string | null, budgetMs: number, signal?: AbortSignal): Promise<CheckRun> {
  const store = new PlayerCheckStore(rt.db);
  const queue = [...needs];
  const out: CheckRun = { sent: 0, settled: 0, owed: 0, lastProblem: undefined, refused: false };
  /** Players not asked this time (asked too often without an answer): owed, not retried in this run. */
  const held: CheckNeed[] = [];
  const until = rt.clock.now() + budgetMs;
  const price = rt.config.playerChecks.priceUsd;
  const worker = async (): Promise<void> => {
    for (;;) {
      if (out.refused || rt.clock.now() >= until || signal?.aborted) return;
      const need = queue.shift();
      if (!need) return;
      const now = rt.clock.now();
      // Answered meanwhile (another process — the daemon, `topup validate` — or another batch): no call.
      if (store.cached(need.kind, need.player, now, rt.config.playerChecks.cacheMs)) {
        out.settled++;
        continue;
      }
      const wait = store.mayAsk(need.kind, need.player, now);
      if (wait) {
        held.push(need);
        out.lastProblem = `${CHECK_PATHS[need.kind]} for ${need.player}: ${wait.why}`;
        continue;
      }
      const account = rt.accounts.find((a) => a.id === need.account) ?? rt.accounts[0]!;
      const trxid = checkTrxid(need.kind, rt.entropy.hex(8));
      let began = false;
      let r: PlayerCheckResult;
      try {
        r = await account.client.checkPlayer(requestOf(need, trxid), {
          priority: Priority.lookup,
          ...(signal ? { signal } : {}),
          // The record before the request: a kill before its answer is recorded leaves "sent, may
          // be charged", never nothing (store/player-checks.ts begin).
          beforeSend: () => {
            const at = rt.clock.now();
            store.begin({ trxid, kind: need.kind, player: need.player, account: account.id, batchId, at, priceUsd: price }, at - account.client.timeoutMs - FLIGHT_MARGIN_MS, at - rt.config.playerChecks.cacheMs);
            began = true;
          },
        });
      } catch (err) {
        // Not sent (a stop while it waited for the gate, or a check of this player in flight
        // elsewhere): owed still; a record written for it is of nothing.
        if (began) store.unsent(trxid);
        if (err instanceof CheckInFlight) {
          // Another process (or ask) is checking this player now: its answer lands in the cache;
          // this one looks again shortly, without a second (maybe charged) call.
          queue.push(need);
          if (err.answered) continue; // the cache holds it: settled at the top of the loop
          out.lastProblem = `${CHECK_PATHS[need.kind]} for ${need.player}: ${err.message}`;
          await rt.clock.sleep(IN_FLIGHT_LOOK_MS, signal).catch(() => {});
          continue;
        }
        queue.unshift(need);
        out.lastProblem = (err as Error).message;
        return;
      }
      out.sent++;
      countCheck('file', countedOutcome(r.outcome));
      store.finish(trxid, { outcome: r.outcome, said: r.said, charged: r.charged, name: r.name ?? null, at: rt.clock.now() });
      if (r.outcome === 'found' || r.outcome === 'not-found') {
        out.settled++;
        continue;
      }
      queue.push(need);
      out.lastProblem = `${CHECK_PATHS[need.kind]} for ${need.player}: ${r.outcome} (${oneLine(r.said, 300)})`;
      if (r.outcome === 'refused') out.refused = true;
      // A lost answer or a 429: this worker gives the gate and the supplier a moment.
      if (r.outcome !== 'refused') await rt.clock.sleep(Math.min(5_000, r.retryAfterMs ?? 1_000)).catch(() => {});
      // The same player asked again at once would most likely meet the same trouble: the
      // batch is asked again on its next load, with the answers kept so far.
      return;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  out.owed = queue.length + held.length;
  if (out.sent > 0) rt.log.info({ batch: batchId, sent: out.sent, settled: out.settled, owed: out.owed }, 'player checks');
  return out;
}

/** The error a row held for a not-found player carries: why, and how to buy it anyway. */
export function notFoundMessage(a: CachedCheck): string {
  const when = new Date(a.checkedAt).toISOString().replace(/\.\d+Z$/, 'Z');
  const who = a.kind === 'ml' ? `user id and zone ${a.player}` : `player id ${a.player}`;
  return `player not found: the supplier's player check (${CHECK_PATHS[a.kind as 'pubg' | 'ml']}, ${when}) says ${who} does not exist, so nothing was sent and nothing was charged. ` +
    `Fix the id and drop the row again; to buy it anyway, put yes in a column ${OVERRIDE_COLUMN}`;
}
