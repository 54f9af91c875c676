/**
 * The balance as the console and /metrics show it: the freshest reading this process has (the
 * runner's funding checks, or a read of its own), with when it was read.
 *
 * Batches read it when they finish (their "balance after"), which is recorded here too.
 * The runner reads the balance only while batches wait to be funded, so an idle daemon would
 * show a reading hours old, and the "no balance read for 30 min" alert could not tell an idle
 * daemon from an API that cannot be reached. So when the freshest reading is older than
 * REFRESH_MS, it is read again at the lowest priority (Priority.report: orders and polls go
 * first, within the same rate budget): at most 12 calls an hour. Not while sending is stopped
 * for an account problem (the runner's own probe covers that).
 */
import { systemClock } from '../kernel/clock.js';
import { Priority } from '../api/client.js';
import { coerceError } from '../kernel/errors.js';
import { Pauses } from '../account/pauses.js';
import type { Runtime } from '../runtime.js';

export const REFRESH_MS = 5 * 60_000;
const LOOK_EVERY_MS = 30_000;

export interface BalanceReading {
  usd: number;
  at: number;
}

export class BalanceWatch {
  readonly #rt: Pick<Runtime, 'account' | 'log' | 'meta'>;
  readonly #fromRunner: () => BalanceReading | null;
  #own: BalanceReading | null = null;
  #lastError: string | null = null;
  #reading: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(rt: Pick<Runtime, 'account' | 'log' | 'meta'>, fromRunner: () => BalanceReading | null) {
    this.#rt = rt;
    this.#fromRunner = fromRunner;
  }

  latest(): BalanceReading | null {
    const a = this.#fromRunner();
    const b = this.#own;
    if (!a) return b;
    if (!b) return a;
    return a.at >= b.at ? a : b;
  }

  /** Why the last read of our own failed, while no newer reading exists. */
  get lastError(): string | null {
    return this.#lastError;
  }

  /** A reading made elsewhere in this process (a batch's balance after, read when it finished). */
  record(usd: number, at = systemClock.now()): void {
    if (!this.#own || at >= this.#own.at) this.#own = { usd, at };
    this.#lastError = null;
  }

  start(): void {
    void this.refreshIfOld();
    this.#timer = setInterval(() => void this.refreshIfOld(), LOOK_EVERY_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Reads the balance when the freshest reading is older than `maxAgeMs`; never two reads at once. */
  refreshIfOld(maxAgeMs = REFRESH_MS): Promise<void> {
    const cur = this.latest();
    if (cur && systemClock.now() - cur.at < maxAgeMs) return Promise.resolve();
    if (Pauses.read(this.#rt.meta)?.kind === 'account') return Promise.resolve();
    this.#reading ??= this.#rt.account.client
      .balance({ priority: Priority.report })
      .then((b) => {
        this.#own = { usd: b.balanceUsd, at: systemClock.now() };
        this.#lastError = null;
      })
      .catch((err: unknown) => {
        this.#lastError = coerceError(err).message;
        this.#rt.log.warn({ err: this.#lastError }, 'console: could not read the balance; will try again');
      })
      .finally(() => {
        this.#reading = null;
      });
    return this.#reading;
  }
}
