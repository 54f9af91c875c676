/**
 * Per-account rate limits over exact sliding windows of call timestamps (spec §8), plus the
 * call log the admin reads to check a client's pacing after the fact.
 *
 * A call at time t is in a window of length w at time now when t > now - w; so a call made at
 * 0.9 s stops counting at exactly 1.9 s. A 429'd call does not consume budget (otherwise a
 * client that retries too early would lock itself out for ever) but it is logged.
 */
import type { CallLogEntry, RateWindow } from './types.js';

export const MAX_CALL_LOG = 500_000;

export type Admission = { ok: true } | { ok: false; retryAfterSec: number };

export interface RateStats {
  worstPerWindow: { windowMs: number; limit: number; worstAdmitted: number; worstArrivals: number }[];
  rateLimited: number;
  /** Calls that arrived while a forced Retry-After (faults.forceRateLimit) had not yet run out. */
  earlyAfterForced: { t: number; method: string; route: string; account: string; msEarly: number }[];
}

export class RateLimiter {
  #limits: RateWindow[];
  #admitted = new Map<string, number[]>();
  #calls: CallLogEntry[] = [];
  #rateLimited = 0;
  #forcedUntil = 0;
  #early: RateStats['earlyAfterForced'] = [];

  constructor(limits: readonly RateWindow[]) {
    this.#limits = validateLimits(limits);
  }

  get limits(): RateWindow[] { return this.#limits.map((l) => ({ ...l })); }
  set limits(l: readonly RateWindow[]) { this.#limits = validateLimits(l); }

  /** Admits (and books) a call for `account` at `now`, or says how long until every window has room. */
  admit(account: string, now: number): Admission {
    const longest = Math.max(0, ...this.#limits.map((l) => l.windowMs));
    const log = (this.#admitted.get(account) ?? []).filter((t) => t > now - longest);
    let waitMs = 0;
    for (const { limit, windowMs } of this.#limits) {
      const inWindow = log.filter((t) => t > now - windowMs);
      if (inWindow.length >= limit) {
        // Room comes back when the oldest call that keeps the window full leaves it.
        const pivot = inWindow[inWindow.length - limit] ?? now;
        waitMs = Math.max(waitMs, pivot + windowMs - now);
      }
    }
    if (waitMs > 0) {
      this.#admitted.set(account, log);
      this.#rateLimited++;
      return { ok: false, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    log.push(now);
    this.#admitted.set(account, log);
    return { ok: true };
  }

  /** Counts a 429 that did not come from the windows (forced by the fault settings). */
  noteForced(now: number, retryAfterSec: number): void {
    this.#rateLimited++;
    this.#forcedUntil = Math.max(this.#forcedUntil, now + retryAfterSec * 1000);
  }

  /** Records early arrivals against a forced Retry-After; call before deciding the answer. */
  noteArrival(now: number, method: string, route: string, account: string): void {
    if (now < this.#forcedUntil) this.#early.push({ t: now, method, route, account, msEarly: this.#forcedUntil - now });
  }

  /** The log keeps the newest MAX_CALL_LOG calls so a long rehearsal cannot exhaust memory. */
  record(entry: CallLogEntry): void {
    this.#calls.push(entry);
    if (this.#calls.length > MAX_CALL_LOG) this.#calls.splice(0, this.#calls.length - MAX_CALL_LOG);
  }

  get calls(): CallLogEntry[] { return this.#calls.slice(); }
  get rateLimited(): number { return this.#rateLimited; }

  reset(): void {
    this.#calls = [];
    this.#rateLimited = 0;
    this.#early = [];
    this.#forcedUntil = 0;
  }

  stats(): RateStats {
    return {
      worstPerWindow: this.#limits.map(({ limit, windowMs }) => ({
        windowMs, limit,
        worstAdmitted: worstWindow(this.#calls.filter((c) => c.admitted), windowMs),
        worstArrivals: worstWindow(this.#calls, windowMs),
      })),
      rateLimited: this.#rateLimited,
      earlyAfterForced: this.#early.slice(),
    };
  }
}

/** Largest number of one account's calls inside any window of length `windowMs` (t_j - t_i < windowMs). */
export function worstWindow(calls: readonly { t: number; account: string }[], windowMs: number): number {
  const byAccount = new Map<string, number[]>();
  for (const c of calls) {
    const list = byAccount.get(c.account) ?? [];
    list.push(c.t);
    byAccount.set(c.account, list);
  }
  let worst = 0;
  for (const times of byAccount.values()) {
    times.sort((a, b) => a - b);
    let i = 0;
    for (let j = 0; j < times.length; j++) {
      while ((times[j] as number) - (times[i] as number) >= windowMs) i++;
      worst = Math.max(worst, j - i + 1);
    }
  }
  return worst;
}

function validateLimits(limits: readonly RateWindow[]): RateWindow[] {
  if (!Array.isArray(limits)) throw new TypeError('rate limits must be an array of { limit, windowMs }');
  return limits.map((l) => {
    if (!Number.isInteger(l?.limit) || l.limit < 1 || !Number.isFinite(l?.windowMs) || l.windowMs <= 0) {
      throw new TypeError(`invalid rate limit ${JSON.stringify(l)}: limit must be an integer >= 1, windowMs > 0`);
    }
    return { limit: l.limit, windowMs: l.windowMs };
  });
}

/** Parses `40/1s,200/1m` (units ms, s, m, h). */
export function parseRateLimits(text: string): RateWindow[] {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  return validateLimits(text.split(',').map((part) => {
    const m = /^\s*(\d+)\s*\/\s*(\d*(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(part);
    if (!m) throw new TypeError(`invalid rate limit "${part}": expected COUNT/DURATION such as 40/1s`);
    const n = m[2] === '' ? 1 : Number(m[2]);
    return { limit: Number(m[1]), windowMs: n * (units[m[3] as string] as number) };
  }));
}
