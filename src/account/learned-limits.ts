/**
 * Rate limits learned from 429s, per account, when the account's limits were not given
 * (TOPUP_RATE_LIMITS absent: the gate starts from the spec's 40/1s,200/1m). Real suppliers of this
 * API enforce less (10/1s and 80/1min per key is documented by one); starting from the spec and
 * never learning costs a 429 on about every other order.
 *
 * The rule, on a `429 RATE_LIMIT` answered to a call (rate-gate.ts calls inferLimit with its own
 * call log of this account, all processes on the home included):
 *  1. For each window length (1 s, 1 min, and the configured ones), count the calls started in the
 *     window ending at the refused call (the refused one and every call known to have been refused
 *     left out: the API does not count those against the budget).
 *  2. The API accepted every answered call that was not refused, so for each length its limit is
 *     above the most calls it ever accepted with in one window before a call (the "proven floor").
 *     A length whose count at the refusal is not above that floor cannot be the one that refused.
 *  3. Among the lengths that can, the one whose count is the LARGEST relative to its start limit is
 *     taken: the explanation that changes our limits the least. (The smallest ratio would be the
 *     most drastic one and is wrong at the first 429: with calls at 40/s, the 11th call refused
 *     holds 10 calls in both the second and the minute, and "10 per minute" would cut throughput
 *     to an eighth of the real 80/min. A too-mild guess costs one more 429, which the next
 *     inference corrects: the floor of the wrong length has then risen above its count.)
 *     When no length can (the key is shared with another client, the supplier lowered its tier),
 *     the fullest window relative to its start limit is taken all the same, but lowered by one
 *     step (5 %) only: slowing down is the answer to an unexplained 429, and a jittery refusal
 *     must not ratchet a right limit far down.
 *  4. The learned limit is that count minus a safety margin of 5 % (at least 1; never below 1):
 *     our log has admission times, the API counts arrivals, so a call's place in a window can
 *     differ by the network's jitter. 5 % of 80/min is 4 calls: 76/min, 95 % of the ceiling.
 *     A limit is only ever lowered by a 429, never raised by one.
 *
 * Re-probing: a learned limit may be too low (a jittery refusal, a tier raised later). After every
 * 10 minutes of use (time between calls, each gap counted up to a minute, so an idle night does not
 * count) without a 429 on the account, every learned limit goes up one step of 5 % (at least 1),
 * never above its start; one that reaches its start is dropped (the start applies again). 10 min
 * and 5 %: a limit that is right costs at most one 429 per probe, i.e. one per 10 minutes of use at
 * worst, while a limit 20 % too low is back within about 40 minutes.
 *
 * Persistence: one meta key per account, `rate.learned:<account>` (JSON), written in the same
 * transaction that read it, so every process on the home learns from every other's 429s and a
 * restart keeps what was learned. It also keeps the start times of the most recent refused calls
 * (monotonic, as the call log), so another process's inference leaves them out too.
 */
import type { RateWindow } from '../config/config.js';
import { MetaStore } from '../store/meta.js';
import type { Db } from '../store/db.js';
import { learnedKey } from '../store/account-keys.js';

/** The window lengths a 429 is judged on besides the configured ones: the spec's and real suppliers' second and minute. */
export const PROBE_LENGTHS_MS: readonly number[] = [1_000, 60_000];
/** Use without a 429 after which learned limits go up one step. */
export const QUIET_USE_MS = 10 * 60_000;
/** A gap between two calls counts as use up to this long (see the header). */
export const USE_GAP_CAP_MS = 60_000;
/**
 * Slow start: while learning and some configured window's limit has not been learned yet, at most
 * this many calls of the account are in flight (admitted by this gate, not yet answered). The calls
 * the API refuses besides the one that teaches a limit are those already on their way when its 429
 * comes back: at the spec's 40/s and a 300 ms round trip, 8 more. With 2 in flight, at most 1 more
 * per limit learned, at any distance. What it costs: 2 calls per round trip (13/s at 150 ms, 6.7/s
 * at 300 ms) until both limits are learned, above a real supplier's 80/min either way
 * (docs/rate-limits.md has the figures). A call unanswered for longer than the shortest configured
 * window stops counting: a hung request (up to its timeout) must not hold every other call.
 */
export const SLOW_START_IN_FLIGHT = 2;

/** Whether some configured window's length has no learned limit (the gate then keeps to SLOW_START_IN_FLIGHT). */
export function slowStart(configured: readonly RateWindow[], rec: LearnedRecord | undefined): boolean {
  const learned = new Set((rec?.windows ?? []).map((w) => w.windowMs));
  return configured.some((w) => !learned.has(w.windowMs));
}

/** Refused calls remembered (their start times), for the other processes' inferences. */
const REFUSED_KEPT = 64;

export { learnedKey };

export interface LearnedWindow {
  windowMs: number;
  limit: number;
  /** The limit this window started from (the configured one, or implied by them). */
  start: number;
  /** Calls counted in the window at the 429 it was learned from. */
  count: number;
  /** Wall time (ms) it was learned or last changed, for the doctor. */
  at: number;
}

export interface LearnedRecord {
  windows: LearnedWindow[];
  /** Monotonic start times of recent refused calls of this account (never counted as accepted). */
  refused: number[];
  /** Wall time of the last change (a 429 or a raise): another process's change resets the use count. */
  changedAt: number;
  /** Wall time of the last 429 that was judged. */
  last429At?: number;
}

/**
 * What a window of `windowMs` may hold at most when only the configured windows apply: its own
 * limit when configured; else what the configured windows allow over that length (40/1s allows
 * 2,400 in a minute; 200/1m allows 200 in a second).
 */
export function startLimit(configured: readonly RateWindow[], windowMs: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (const w of configured) {
    const allows = w.windowMs === windowMs ? w.limit : w.windowMs < windowMs ? w.limit * Math.ceil(windowMs / w.windowMs) : w.limit;
    best = Math.min(best, allows);
  }
  return best;
}

/** The window lengths a 429 is judged on: the configured ones and PROBE_LENGTHS_MS. */
export function candidateLengths(configured: readonly RateWindow[]): number[] {
  return [...new Set([...configured.map((w) => w.windowMs), ...PROBE_LENGTHS_MS])].sort((a, b) => a - b);
}

/** The windows in force: the configured ones with learned limits, plus learned lengths not configured. */
export function effectiveWindows(configured: readonly RateWindow[], rec: LearnedRecord | undefined): RateWindow[] {
  const learned = new Map((rec?.windows ?? []).map((w) => [w.windowMs, w.limit]));
  const out = configured.map((w) => ({ windowMs: w.windowMs, limit: Math.min(w.limit, learned.get(w.windowMs) ?? w.limit) }));
  for (const [windowMs, limit] of learned) if (!configured.some((w) => w.windowMs === windowMs)) out.push({ windowMs, limit });
  return out.sort((a, b) => a.windowMs - b.windowMs);
}

/** A count minus the safety margin (5 %, at least 1), never below 1. */
export function learnedLimit(count: number): number {
  return Math.max(1, count - Math.max(1, Math.floor(count * 0.05)));
}

/** One step up (5 %, at least 1). */
export function raisedLimit(limit: number): number {
  return limit + Math.max(1, Math.ceil(limit * 0.05));
}

export interface LoggedCall {
  /** Admission (monotonic ms). */
  t: number;
  /** When its answer (or failure) came; null while in flight or when its process died. */
  done: number | null;
}

export interface WindowJudgement {
  windowMs: number;
  /** Calls in the window ending at the refused call (refused ones left out). */
  count: number;
  /** The API accepted this many in one window before a call, so its limit is above: count <= this cannot have refused. */
  acceptedMax: number;
  start: number;
}

export interface Inference {
  windowMs: number;
  count: number;
  /** The count is above what the API ever accepted for this length: this window can have refused the call. */
  proven: boolean;
  judged: WindowJudgement[];
}

/**
 * Which window refused the call started at `refusedAt` (see the header, steps 1-3); null when every
 * window was empty (nothing to learn from). `calls` is the account's call log (any order).
 */
export function inferLimit(calls: readonly LoggedCall[], refusedAt: number, refused: ReadonlySet<number>, configured: readonly RateWindow[]): Inference | null {
  const kept = calls.filter((c) => !refused.has(c.t) && c.t < refusedAt).sort((a, b) => a.t - b.t);
  const judged: WindowJudgement[] = [];
  for (const windowMs of candidateLengths(configured)) {
    let count = 0;
    for (const c of kept) if (c.t > refusedAt - windowMs) count++;
    // Two pointers: for each accepted call, the calls in the window before it.
    let acceptedMax = 0;
    let lo = 0;
    for (let j = 0; j < kept.length; j++) {
      const c = kept[j]!;
      while (kept[lo]!.t <= c.t - windowMs) lo++;
      if (c.done !== null) acceptedMax = Math.max(acceptedMax, j - lo);
    }
    judged.push({ windowMs, count, acceptedMax, start: startLimit(configured, windowMs) });
  }
  const ratio = (j: WindowJudgement): number => j.count / j.start;
  const fullest = (list: WindowJudgement[]): WindowJudgement | undefined =>
    list.filter((j) => j.count > 0).reduce<WindowJudgement | undefined>((best, j) => (best === undefined || ratio(j) > ratio(best) ? j : best), undefined);
  const provable = judged.filter((j) => j.count > j.acceptedMax);
  const pick = fullest(provable) ?? fullest(judged);
  if (!pick) return null;
  return { windowMs: pick.windowMs, count: pick.count, proven: provable.includes(pick), judged };
}

/**
 * The record after a 429 judged as `inf`: the picked window lowered (never raised) to the learned
 * limit, the refused call remembered. `limitNow` is that window's limit in force.
 */
export function afterRefusal(rec: LearnedRecord | undefined, inf: Inference | null, refusedAt: number, configured: readonly RateWindow[], wallNow: number, keepSinceMono: number): LearnedRecord {
  const windows = (rec?.windows ?? []).map((w) => ({ ...w }));
  const refused = [...(rec?.refused ?? []).filter((t) => t > keepSinceMono && t !== refusedAt), refusedAt].slice(-REFUSED_KEPT);
  if (inf) {
    const start = startLimit(configured, inf.windowMs);
    const current = windows.find((w) => w.windowMs === inf.windowMs);
    const inForce = current?.limit ?? start;
    // Unproven (no window can have refused by what the API accepted before): one step down from
    // the limit in force, not down to the count, so jitter or a shared key never ratchets a right
    // limit far down at once.
    const limit = inf.proven ? learnedLimit(inf.count) : Math.max(1, inForce - Math.max(1, Math.floor(inForce * 0.05)));
    if (limit < inForce) {
      if (current) Object.assign(current, { limit, count: inf.count, at: wallNow });
      else windows.push({ windowMs: inf.windowMs, limit, start, count: inf.count, at: wallNow });
    }
  }
  windows.sort((a, b) => a.windowMs - b.windowMs);
  return { windows, refused, changedAt: wallNow, last429At: wallNow };
}

/** The record after QUIET_USE_MS of use without a 429: every learned limit one step up; at its start, dropped. */
export function afterQuietUse(rec: LearnedRecord, wallNow: number): LearnedRecord {
  const windows = rec.windows
    .map((w) => ({ ...w, limit: Math.min(w.start, raisedLimit(w.limit)), at: wallNow }))
    .filter((w) => w.limit < w.start);
  return { ...rec, windows, changedAt: wallNow };
}

export function readLearned(meta: MetaStore, account: string): LearnedRecord | undefined {
  try {
    const rec = meta.getJson<LearnedRecord>(learnedKey(account));
    if (!rec || !Array.isArray(rec.windows) || !Array.isArray(rec.refused)) return undefined;
    // A record that does not hold together (edited by hand, a future version) is ignored, not trusted.
    const ok = rec.windows.every((w) => Number.isInteger(w.limit) && w.limit >= 1 && Number.isFinite(w.windowMs) && w.windowMs > 0 && Number.isFinite(w.start));
    return ok ? rec : undefined;
  } catch {
    return undefined;
  }
}

export function writeLearned(meta: MetaStore, account: string, rec: LearnedRecord): void {
  meta.setJson(learnedKey(account), rec);
}

const fmtWindow = (limit: number, windowMs: number): string =>
  `${limit}/${windowMs % 60_000 === 0 ? `${windowMs / 60_000}m` : windowMs % 1_000 === 0 ? `${windowMs / 1_000}s` : `${windowMs}ms`}`;

export interface LimitsInForce {
  account: string;
  windows: RateWindow[];
  /** given: TOPUP_RATE_LIMITS or the account's rate_limits, kept as given; learning: the start, nothing learned yet; learned. */
  source: 'given' | 'learning' | 'learned';
  /** One line: the limits and where they came from. */
  detail: string;
  learned: LearnedWindow[];
}

/**
 * The limits an account's gate applies now and where they came from, for `topup doctor` and the
 * console. `givenIn`: where the limits were set explicitly (TOPUP_RATE_LIMITS, or the account's
 * rate_limits in accounts.toml: AccountSetting.rateLimitsFrom), then nothing learned applies; null:
 * learned.
 */
export function limitsInForce(db: Db, account: string, configured: readonly RateWindow[], givenIn: string | null): LimitsInForce {
  const text = (ws: readonly RateWindow[]): string => ws.map((w) => fmtWindow(w.limit, w.windowMs)).join(',');
  if (givenIn !== null) return { account, windows: configured.map((w) => ({ ...w })), source: 'given', detail: `${text(configured)}, given in ${givenIn} (kept; not learned)`, learned: [] };
  const rec = readLearned(new MetaStore(db), account);
  const windows = effectiveWindows(configured, rec);
  if (!rec || rec.windows.length === 0) {
    const probed = rec?.last429At ? `; last 429 at ${new Date(rec.last429At).toISOString()}` : '';
    return { account, windows, source: 'learning', detail: `${text(windows)}, spec default, learning from 429s${probed}`, learned: [] };
  }
  const parts = rec.windows.map((w) => `${fmtWindow(w.limit, w.windowMs)} (was ${fmtWindow(w.start, w.windowMs)}; ${w.count} calls in the window at the 429; since ${new Date(w.at).toISOString()})`);
  return { account, windows, source: 'learned', detail: `${text(windows)}, learned from 429 at ${new Date(rec.last429At ?? rec.changedAt).toISOString()}: ${parts.join(', ')}; raised one step after every 10 min of use without a 429`, learned: rec.windows.map((w) => ({ ...w })) };
}
