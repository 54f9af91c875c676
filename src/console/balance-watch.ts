/**
 * Each supplier account's balance as the console and /metrics show it: the freshest reading this
 * process has of that account (any read through its client: the runner's funding checks, a batch's
 * balance after, a report, `Account.lastBalance`), or a read of its own, with when it was read. One
 * figure per account, never a sum passed off as one account's (issue 30: the overview showed the
 * first account's balance beside the accounts' sum).
 *
 * The runner reads a balance only while batches wait to be funded, so an idle daemon would show a
 * reading hours old, and the "no balance read for 30 min" alert could not tell an idle daemon from
 * an API that cannot be reached. So when an account's freshest reading is older than REFRESH_MS it
 * is read again at the lowest priority (Priority.report: orders and polls go first, within that
 * account's own rate budget): at most 12 calls an hour per account. Not while the account's sending
 * is stopped for an account problem (the runner's probe covers that).
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

export interface AccountBalance {
  account: string;
  /** The freshest reading; null until the first. */
  reading: BalanceReading | null;
  /** Why the last read of our own failed, while no newer reading exists. */
  error: string | null;
}

export class BalanceWatch {
  readonly #rt: Pick<Runtime, 'accounts' | 'log' | 'meta'>;
  readonly #own = new Map<string, BalanceReading>();
  readonly #errors = new Map<string, string>();
  /** When each error happened: shown only while no reading is newer. */
  readonly #errorAt = new Map<string, number>();
  readonly #reading = new Map<string, Promise<void>>();
  #timer: NodeJS.Timeout | null = null;

  constructor(rt: Pick<Runtime, 'accounts' | 'log' | 'meta'>) {
    this.#rt = rt;
  }

  /** The account's freshest reading (null until the first). */
  latest(account: string): BalanceReading | null {
    const seen = this.#rt.accounts.find((a) => a.id === account)?.lastBalance;
    const a = seen ? { usd: seen.usd, at: seen.at } : null;
    const b = this.#own.get(account) ?? null;
    if (!a) return b;
    if (!b) return a;
    return a.at >= b.at ? a : b;
  }

  /** Every account, in the order of accounts.toml. */
  all(): AccountBalance[] {
    return this.#rt.accounts.map((a) => {
      const reading = this.latest(a.id);
      const error = this.#errors.get(a.id) ?? null;
      return { account: a.id, reading, error: error !== null && (reading === null || this.#errorAt.get(a.id)! > reading.at) ? error : null };
    });
  }

  /** A reading made elsewhere in this process. */
  record(account: string, usd: number, at = systemClock.now()): void {
    const cur = this.#own.get(account);
    if (!cur || at >= cur.at) this.#own.set(account, { usd, at });
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

  /** Reads each account whose freshest reading is older than `maxAgeMs`; never two reads of one account at once. */
  refreshIfOld(maxAgeMs = REFRESH_MS): Promise<void> {
    const now = systemClock.now();
    const reads: Promise<void>[] = [];
    for (const a of this.#rt.accounts) {
      const cur = this.latest(a.id);
      if ((cur && now - cur.at < maxAgeMs) || Pauses.read(this.#rt.meta, a.id)?.kind === 'account') continue;
      let p = this.#reading.get(a.id);
      if (!p) {
        p = a.client
          .balance({ priority: Priority.report })
          .then((b) => this.record(a.id, b.balanceUsd))
          .catch((err: unknown) => {
            const error = coerceError(err).message;
            this.#errors.set(a.id, error);
            this.#errorAt.set(a.id, systemClock.now());
            this.#rt.log.warn({ account: a.id, err: error }, 'console: could not read this account\'s balance; will try again');
          })
          .finally(() => void this.#reading.delete(a.id));
        this.#reading.set(a.id, p);
      }
      reads.push(p);
    }
    return Promise.all(reads).then(() => undefined);
  }
}
