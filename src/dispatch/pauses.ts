/**
 * Why this process is not sending orders right now, for every batch at once:
 *  - `account`: the key or the account cannot send (401/403). Polling stops too, since every
 *    route would fail; a cheap authenticated probe (GET /balance) runs every `probeMs` and
 *    sending resumes when it succeeds.
 *  - `maintenance`: MAINTENANCE / API_ORDER_DISABLED. Polling goes on; after a back-off growing
 *    from 1 s to 5 s one order is let through to see whether the window has ended.
 * The current pause is mirrored into the store so `topup status` in another process can say why.
 */
import type { MetaStore } from '../store/meta.js';

export type PauseKind = 'account' | 'maintenance';

export interface PauseState {
  kind: PauseKind;
  code: string;
  detail: string;
  since: number;
  retryAt: number;
}

const META_KEY = 'dispatch.pause';
// Nothing else can be ordered during the window, so frequent probes cost no useful budget
// and shorten the time to resume once it ends.
const MAINTENANCE_BACKOFF_MS = [1_000, 2_000, 3_000, 5_000];

export class Pauses {
  readonly #meta: MetaStore;
  readonly #probeMs: number;
  #state: PauseState | null = null;
  #strikes = 0;

  constructor(meta: MetaStore, probeMs: number) {
    this.#meta = meta;
    this.#probeMs = probeMs;
  }

  get current(): PauseState | null {
    return this.#state;
  }

  /** May an order leave now? */
  canSend(now: number): boolean {
    return this.#state === null || now >= this.#state.retryAt;
  }

  /** May a poll or lookup leave now? Only an account problem stops them. */
  canPoll(now: number): boolean {
    return this.#state?.kind !== 'account' || now >= this.#state.retryAt;
  }

  /** Returns true when this starts a new pause (for a one-time log line or notification). */
  pause(kind: PauseKind, code: string, detail: string, now: number): boolean {
    const isNew = this.#state?.kind !== kind || this.#state.code !== code;
    // Only a probe (a send let through after the back-off) that fails again lengthens the
    // back-off; the other orders that were in flight when the pause began do not.
    const probeFailed = !isNew && this.#state !== null && now >= this.#state.retryAt;
    if (!isNew && !probeFailed) return false;
    this.#strikes = isNew ? 0 : this.#strikes + 1;
    const wait = kind === 'account' ? this.#probeMs : MAINTENANCE_BACKOFF_MS[Math.min(this.#strikes, MAINTENANCE_BACKOFF_MS.length - 1)]!;
    this.#state = { kind, code, detail, since: isNew ? now : (this.#state?.since ?? now), retryAt: now + wait };
    this.#meta.setJson(META_KEY, this.#state);
    return isNew;
  }

  /** Something went through: the pause is over. Returns the pause that ended, if any. */
  clear(): PauseState | null {
    const ended = this.#state;
    if (ended) {
      this.#state = null;
      this.#strikes = 0;
      this.#meta.delete(META_KEY);
    }
    return ended;
  }

  static read(meta: MetaStore): PauseState | null {
    return meta.getJson<PauseState>(META_KEY) ?? null;
  }
}
