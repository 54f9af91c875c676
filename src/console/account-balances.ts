/**
 * Each supplier account's balance for the console's overview, when the home has several
 * (accounts.toml). The BalanceWatch (balance-watch.ts) follows the first account for the money
 * figures and /metrics; this one reads the others too, lazily: a page view starts a read of each
 * account whose last reading is older than REFRESH_MS (at the lowest priority, within that
 * account's own rate budget), and the page shows the readings held. An idle console reads nothing.
 * Not while an account's sending is stopped for an account problem (the runner's probe covers it).
 */
import { systemClock } from '../kernel/clock.js';
import { Priority } from '../api/client.js';
import { coerceError } from '../kernel/errors.js';
import { Pauses } from '../account/pauses.js';
import type { Runtime } from '../runtime.js';
import { REFRESH_MS, type BalanceReading } from './balance-watch.js';

export interface AccountBalance {
  reading: BalanceReading | null;
  error: string | null;
}

export class AccountBalances {
  readonly #rt: Pick<Runtime, 'accounts' | 'log' | 'meta'>;
  readonly #held = new Map<string, AccountBalance>();
  readonly #reading = new Map<string, Promise<void>>();

  constructor(rt: Pick<Runtime, 'accounts' | 'log' | 'meta'>) {
    this.#rt = rt;
  }

  get(account: string): AccountBalance {
    return this.#held.get(account) ?? { reading: null, error: null };
  }

  /** Starts a read of every account whose reading is old (never two at once per account). */
  refreshIfOld(maxAgeMs = REFRESH_MS): Promise<void> {
    const now = systemClock.now();
    const reads: Promise<void>[] = [];
    for (const a of this.#rt.accounts) {
      const cur = this.#held.get(a.id)?.reading;
      if ((cur && now - cur.at < maxAgeMs) || Pauses.read(this.#rt.meta, a.id)?.kind === 'account') continue;
      let p = this.#reading.get(a.id);
      if (!p) {
        p = a.client
          .balance({ priority: Priority.report })
          .then((b) => void this.#held.set(a.id, { reading: { usd: b.balanceUsd, at: systemClock.now() }, error: null }))
          .catch((err: unknown) => {
            const error = coerceError(err).message;
            this.#held.set(a.id, { reading: this.#held.get(a.id)?.reading ?? null, error });
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
