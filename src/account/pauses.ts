/**
 * Why orders are not being sent right now, for every batch of every process on this home:
 *  - `account`: the key, the account or the URL cannot work (401/403 on any route, a redirect).
 *    Polling stops too, since every route would fail; a cheap authenticated probe (GET /balance)
 *    runs every `probeMs` and sending resumes when it succeeds.
 *  - `maintenance`: MAINTENANCE / API_ORDER_DISABLED / a 503 without a code. Polling goes on;
 *    after a back-off growing from 1 s to 5 s one order is let through to see whether it ended.
 *
 * Per account: one supplier's maintenance does not stop another's orders (account `default` keeps
 * the key homes had before several accounts).
 *
 * The pause lives in the store (meta), not in one process's memory: what the daemon learns, a
 * `topup submit` beside it obeys at once, and the other way round. Its clock is the monotonic one
 * every process on the machine shares (kernel/clock.ts), so a wall-clock step neither freezes a pause
 * nor ends it early; `since` (wall time) is for people.
 */
import type { MetaStore } from '../store/meta.js';
import { systemClock, type Clock } from '../kernel/clock.js';

export type PauseKind = 'account' | 'maintenance';

export interface PauseState {
  kind: PauseKind;
  code: string;
  detail: string;
  /** Wall time it began (shown to people). */
  since: number;
  /** Monotonic time from which one call may probe whether it is over. */
  retryAtMono: number;
  /** Failed probes in a row (the back-off grows with them). */
  strikes: number;
}

/** The pause of account `default` keeps the key it had before homes had several accounts. */
export function pauseKey(account: string): string {
  return account === 'default' ? 'dispatch.pause' : `dispatch.pause:${account}`;
}
// Nothing else can be ordered during the window, so frequent probes cost no useful budget
// and shorten the time to resume once it ends.
const MAINTENANCE_BACKOFF_MS = [1_000, 2_000, 3_000, 5_000];

export class Pauses {
  readonly #meta: MetaStore;
  readonly #probeMs: number;
  readonly #clock: Clock;
  /** Each account pauses on its own: one supplier's maintenance does not stop another's orders. */
  readonly #key: string;

  constructor(meta: MetaStore, probeMs: number, clock: Clock = systemClock, account = 'default') {
    this.#meta = meta;
    this.#key = pauseKey(account);
    this.#probeMs = probeMs;
    this.#clock = clock;
  }

  /**
   * The last read of the store and the monotonic millisecond it was made in. A runner's step asks
   * many times within one millisecond (may it send? may it poll? when is the probe due?): one read
   * answers them all. What another process writes is seen a millisecond later at most (as if this
   * one had asked just before it wrote); what this object writes, at once.
   */
  #read: { mono: number; value: PauseState | null } | null = null;

  /** The pause in force on this home, if any (read from the store: another process may have set it). */
  get current(): PauseState | null {
    const mono = this.#clock.mono();
    if (this.#read?.mono !== mono) {
      const p = this.#meta.getJson<PauseState>(this.#key) ?? null;
      // A pause written before a reboot (or by an older version) carries a retry time far ahead of
      // the monotonic clock: probe now rather than wait for it.
      if (p && !(p.retryAtMono <= mono + Math.max(this.#probeMs, 60_000))) p.retryAtMono = mono;
      this.#read = { mono, value: p };
    }
    return this.#read.value === null ? null : { ...this.#read.value };
  }

  /** Milliseconds until a probe may leave (0: now), or undefined without a pause. */
  untilProbe(): number | undefined {
    const p = this.current;
    return p ? Math.max(0, p.retryAtMono - this.#clock.mono()) : undefined;
  }

  /** May an order leave now? (While paused, only as a probe after the back-off.) */
  canSend(): boolean {
    const wait = this.untilProbe();
    return wait === undefined || wait === 0;
  }

  /** May a poll or lookup leave now? Only an account problem stops them. */
  canPoll(): boolean {
    const p = this.current;
    return p?.kind !== 'account' || p.retryAtMono <= this.#clock.mono();
  }

  /** Returns true when this starts a new pause (for a one-time log line or notification). */
  pause(kind: PauseKind, code: string, detail: string): boolean {
    const cur = this.current;
    const mono = this.#clock.mono();
    const isNew = cur?.kind !== kind || cur.code !== code;
    // Only a probe (a call let through after the back-off) that fails again lengthens the
    // back-off; the other calls that were in flight when the pause began do not.
    const probeFailed = !isNew && cur !== null && mono >= cur.retryAtMono;
    if (!isNew && !probeFailed) return false;
    const strikes = isNew ? 0 : cur!.strikes + 1;
    const wait = kind === 'account' ? this.#probeMs : MAINTENANCE_BACKOFF_MS[Math.min(strikes, MAINTENANCE_BACKOFF_MS.length - 1)]!;
    const next: PauseState = { kind, code, detail, since: isNew ? this.#clock.now() : cur!.since, retryAtMono: mono + wait, strikes };
    this.#meta.setJson(this.#key, next);
    this.#read = null;
    return isNew;
  }

  /** Something went through: the pause is over for everyone. Returns the pause that ended, if any. */
  clear(): PauseState | null {
    const ended = this.current;
    if (ended) this.#meta.delete(this.#key);
    this.#read = null;
    return ended;
  }

  /** The pause as stored, for `topup status` in another process. */
  static read(meta: MetaStore, account = 'default'): PauseState | null {
    return meta.getJson<PauseState>(pauseKey(account)) ?? null;
  }
}
