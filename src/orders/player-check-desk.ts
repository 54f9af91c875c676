/**
 * The player checks a shop asks for (POST /api/v1/players/check, and an order's `checkPlayer`):
 * docs/player-checks.md and docs/order-api.md. The same supplier calls, cache and records as a
 * file's checks (claim/player-checks.ts, store/player-checks.ts); what differs is that a customer
 * waits at a checkout, so a check answers in seconds or says why it could not.
 *
 * One question, one answer, one call at most:
 *  - a settled answer kept (found with its name, or not found: TOPUP_PLAYER_CHECK_CACHE_DAYS, at
 *    least the repeat window) is the answer, with no call;
 *  - a repeat within REPEAT_WINDOW_MS of a check that settled nothing (in doubt, rate-limited,
 *    refused) is answered as that check was, with no call: a shop retrying a timed-out request, or
 *    a checkout page asking again on every keystroke, does not buy a second (maybe charged) check;
 *  - requests for the same player at the same moment share one call (single flight);
 *  - otherwise one call, under a fresh check trxid (kernel/identity.ts: never an order's), through
 *    the account's rate gate at the acceptance priority, recorded in player_check_calls with the
 *    price the reseller set, and cached when it settles.
 *
 * Only the supplier's word "no such player" is PLAYER_NOT_FOUND. A 429, no answer, an HTML page,
 * a refusal of the check itself are never reported as "not found" (nor as found): they are their
 * own codes, and an order that asked for the check is then not stored at all.
 */
import { Priority } from '../api/client.js';
import { CHECK_PATHS, oneLine, type CheckKind, type PlayerCheckRequest, type PlayerCheckResult } from '../api/player-check.js';
import { checkKindOfSlug } from '../config/player-check-settings.js';
import { checkTrxid } from '../kernel/identity.js';
import { countCheck, countedOutcome } from '../api/player-check-counts.js';
import type { Runtime } from '../runtime.js';
import { CheckInFlight, FLIGHT_MARGIN_MS, PlayerCheckStore } from '../store/player-checks.js';
import type { FieldProblem, PlayerCheckOutcome } from './types.js';
import { playerKey as playerIdKey } from '../api/player-id.js';

/** A repeat of a check that settled nothing, within this time, is answered as it was (no new call). */
export const REPEAT_WINDOW_MS = 60_000;
/** How long a check may wait for the account's rate gate before the shop is told so (429): a customer is waiting. */
export const GATE_WAIT_MS = 10_000;
/** How soon the answer of a check in flight is looked for again. */
const FLIGHT_LOOK_MS = 200;

type Parts = Pick<Runtime, 'accounts' | 'clock' | 'config' | 'db' | 'entropy' | 'log'>;

/** One player to check, on one account. */
export interface CheckAsk {
  kind: CheckKind;
  userId: string;
  /** Mobile Legends only. */
  zoneId?: string | undefined;
  account: string;
}

/** The cache's key of a player: `5123456` or `777888999(2005)`, declared once in api/player-id.ts (claim/player-checks.ts keys by it too). */
export function playerKey(a: Pick<CheckAsk, 'kind' | 'userId' | 'zoneId'>): string {
  return playerIdKey(a);
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The fields a not-found names: the ones that make up the player. */
function playerFields(a: CheckAsk, reason: string): FieldProblem[] {
  return a.kind === 'ml' ? [{ field: 'userId', reason }, { field: 'zoneId', reason }] : [{ field: 'userId', reason }];
}

export class ShopChecks {
  readonly #rt: Parts;
  readonly #store: PlayerCheckStore;
  /** The checks being made now, by player: a second request for the same player waits for the first's answer. */
  readonly #flying = new Map<string, Promise<PlayerCheckOutcome>>();

  constructor(rt: Parts) {
    this.#rt = rt;
    this.#store = new PlayerCheckStore(rt.db);
  }

  /**
   * TOPUP_PLAYER_CHECK_SKIP_DAYS for an order (as claim/player-checks.ts's CheckPlanner for a
   * file's rows): whether this player got a completed top-up of a line of the same check (and, for
   * Mobile Legends, the same zone) in the last N days. The supplier completed a top-up to that id,
   * so the id exists: the order is not checked again. Never for POST /players/check, which asks
   * for the name itself.
   */
  seenCompleted(a: CheckAsk): boolean {
    const s = this.#rt.config.playerChecks;
    if (s.skipSeenMs <= 0) return false;
    const since = this.#rt.clock.now() - s.skipSeenMs;
    return this.#store.completedFor(a.userId, since).some((r) => checkKindOfSlug(r.slug) === a.kind && (a.kind === 'pubg' || String(r.zoneId ?? '') === (a.zoneId ?? '')));
  }

  ask(a: CheckAsk): Promise<PlayerCheckOutcome> {
    const key = `${a.kind}\u0000${playerKey(a)}`;
    const flying = this.#flying.get(key);
    if (flying) {
      // Answered by the call another ask is making: no call of its own.
      countCheck('api', 'cached');
      return flying;
    }
    const p = this.#ask(a).finally(() => this.#flying.delete(key));
    this.#flying.set(key, p);
    return p;
  }

  async #ask(a: CheckAsk): Promise<PlayerCheckOutcome> {
    const rt = this.#rt;
    const player = playerKey(a);
    const now = rt.clock.now();
    const kept = this.#store.cached(a.kind, player, now, Math.max(rt.config.playerChecks.cacheMs, REPEAT_WINDOW_MS));
    if (kept) {
      countCheck('api', 'cached');
      return settled(a, kept.outcome, kept.name, kept.checkedAt, true);
    }
    const last = this.#store.lastCall(a.kind, player, now - REPEAT_WINDOW_MS);
    // A check of this player in flight (another shop request's, a file's, another process's): its answer is this one's.
    if (last && last.outcome === 'sent' && last.at >= now - this.#flightMs(last.account)) return this.#awaitFlight(a, player, last.trxid, last.at);
    if (last && last.outcome !== 'sent') {
      const retryAfterS = Math.max(1, Math.ceil((last.at + REPEAT_WINDOW_MS - now) / 1000));
      countCheck('api', 'cached');
      if (last.outcome === 'found' || last.outcome === 'not-found') return settled(a, last.outcome, last.name, last.at, true);
      return unsettled(a, last.outcome, `${last.said ?? ''} (asked ${Math.round((now - last.at) / 1000)} s ago; not asked again before ${iso(last.at + REPEAT_WINDOW_MS)})`, retryAfterS);
    }
    const wait = this.#store.mayAsk(a.kind, player, now);
    if (wait) {
      countCheck('api', 'cached');
      return unsettled(a, 'in-doubt', wait.why, Math.max(1, Math.ceil((wait.until - now) / 1000)));
    }
    const account = rt.accounts.find((x) => x.id === a.account) ?? rt.accounts[0]!;
    const trxid = checkTrxid(a.kind, rt.entropy.hex(8));
    const req: PlayerCheckRequest = a.kind === 'pubg' ? { kind: 'pubg', playerId: a.userId, trxid } : { kind: 'ml', userId: a.userId, zoneId: a.zoneId ?? '', trxid };
    const price = rt.config.playerChecks.priceUsd;
    // The wait for the rate gate is bounded; once the request leaves, the client's own timeout rules.
    const gateWait = new AbortController();
    const timer = new AbortController();
    let left = false;
    rt.clock.sleep(GATE_WAIT_MS, timer.signal).then(() => { if (!left) gateWait.abort(new Error('the rate gate did not admit the check in time')); }, () => {});
    let r: PlayerCheckResult;
    try {
      r = await account.client.checkPlayer(req, {
        priority: Priority.acceptance,
        signal: gateWait.signal,
        beforeSend: () => {
          // The record before the request (store/player-checks.ts begin): a kill before the answer
          // is recorded leaves "sent, may be charged"; a check of this player in flight refuses it.
          const at = rt.clock.now();
          this.#store.begin({ trxid, kind: a.kind, player, account: account.id, batchId: null, at, priceUsd: price }, at - this.#flightMs(account.id), now);
          left = true;
          timer.abort();
        },
      });
    } catch (err) {
      timer.abort();
      if (left) this.#store.unsent(trxid);
      if (err instanceof CheckInFlight && err.answered) {
        // Answered (another process's check) while this one waited for the gate: that answer.
        const kept = this.#store.cached(a.kind, player, rt.clock.now(), Math.max(rt.config.playerChecks.cacheMs, REPEAT_WINDOW_MS));
        if (kept) {
          countCheck('api', 'cached');
          return settled(a, kept.outcome, kept.name, kept.checkedAt, true);
        }
      }
      if (err instanceof CheckInFlight) return this.#awaitFlight(a, player, err.trxid, err.since);
      // Not sent: nothing was asked, nothing charged, nothing known.
      countCheck('api', 'rate_limited');
      return unsettled(a, 'rate-limited', `not sent: the account's call budget did not admit the check within ${GATE_WAIT_MS / 1000} s`, 5);
    }
    timer.abort();
    const at = rt.clock.now();
    this.#store.finish(trxid, { outcome: r.outcome, said: r.said, charged: r.charged, name: r.name ?? null, at });
    countCheck('api', countedOutcome(r.outcome));
    rt.log.info({ check: CHECK_PATHS[a.kind], trxid, outcome: r.outcome, account: account.id }, 'order API: player check');
    if (r.outcome === 'found' || r.outcome === 'not-found') return settled(a, r.outcome, r.name ?? null, at, false);
    const retryAfterS = r.retryAfterMs !== undefined ? Math.max(1, Math.ceil(r.retryAfterMs / 1000)) : Math.ceil(REPEAT_WINDOW_MS / 1000);
    return unsettled(a, r.outcome, r.said, retryAfterS);
  }

  /** How long a `sent` record of this account's checks can still be a check someone waits for (its request timeout and a margin). */
  #flightMs(accountId: string): number {
    const account = this.#rt.accounts.find((x) => x.id === accountId) ?? this.#rt.accounts[0]!;
    return account.client.timeoutMs + FLIGHT_MARGIN_MS;
  }

  /**
   * A check of this player is in flight (sent by another ask or process, not answered yet): its
   * answer is awaited for GATE_WAIT_MS at most (a customer is waiting), never a second call.
   * Still unanswered then: in doubt (503, ask again shortly).
   */
  async #awaitFlight(a: CheckAsk, player: string, trxid: string, since: number): Promise<PlayerCheckOutcome> {
    const rt = this.#rt;
    const until = rt.clock.now() + GATE_WAIT_MS;
    countCheck('api', 'cached');
    for (;;) {
      const c = this.#store.lastCall(a.kind, player, since);
      if (c && c.trxid === trxid && c.outcome !== 'sent') {
        if (c.outcome === 'found' || c.outcome === 'not-found') return settled(a, c.outcome, c.name, c.at, true);
        return unsettled(a, c.outcome, c.said ?? '', Math.ceil(REPEAT_WINDOW_MS / 1000));
      }
      if (rt.clock.now() >= until) break;
      await rt.clock.sleep(FLIGHT_LOOK_MS).catch(() => {});
    }
    return unsettled(a, 'in-doubt', `a check of this player (${trxid}) is in flight since ${iso(since)} and has not been answered yet`, 5);
  }
}

function settled(a: CheckAsk, outcome: 'found' | 'not-found', name: string | null, at: number, cached: boolean): PlayerCheckOutcome {
  const player = { userId: a.userId, ...(a.kind === 'ml' ? { zoneId: a.zoneId ?? '' } : {}) };
  if (outcome === 'found') {
    return { kind: 'found', view: { found: true, check: a.kind, player, playerName: name === null || name === '' ? null : name, checkedAt: iso(at), cached } };
  }
  const who = a.kind === 'ml' ? `user id ${a.userId} in zone ${a.zoneId ?? ''}` : `player id ${a.userId}`;
  return {
    kind: 'refused',
    status: 422,
    code: 'PLAYER_NOT_FOUND',
    detail: `the supplier's player check (${CHECK_PATHS[a.kind]}, ${iso(at)}) says ${who} does not exist: check the id with the customer`,
    problems: playerFields(a, 'the supplier says no player has this id'),
    extra: { check: a.kind, player, checkedAt: iso(at), cached },
  };
}

function unsettled(a: CheckAsk, outcome: string, said: string, retryAfterS: number): PlayerCheckOutcome {
  const path = CHECK_PATHS[a.kind];
  const extra = { check: a.kind, said: oneLine(said, 300) };
  if (outcome === 'rate-limited') {
    return { kind: 'refused', status: 429, code: 'PLAYER_CHECK_RATE_LIMITED', detail: `the player check (${path}) could not be made now: the supplier account's call budget is spent. Nothing is known about the player (this is not "not found"): ask again after Retry-After`, extra, retryAfterS };
  }
  if (outcome === 'refused') {
    return { kind: 'refused', status: 502, code: 'PLAYER_CHECK_REFUSED', detail: `the supplier refused the player check itself (${path}: ${oneLine(said, 200)}): the reseller must look (the key, the account, a supplier without this check). Nothing is known about the player (this is not "not found")`, extra };
  }
  return { kind: 'refused', status: 503, code: 'PLAYER_CHECK_IN_DOUBT', detail: `the player check (${path}) got no usable answer (${oneLine(said, 200)}). Nothing is known about the player (this is not "not found"): ask again after Retry-After`, extra, retryAfterS };
}
