/**
 * How a process stops (graphile-worker's `releasers`): every part registers, as it starts, what
 * releases it; the stop runs them last-first, each awaited, so a part is released before the parts
 * it was built on (the runner before the store, the store before the sandbox it talks to). A
 * releaser that fails is logged and the others still run: one stuck part must not keep the
 * database open.
 *
 * And one signal handler for every long-running command (`daemon`, `submit`, `retry --run`,
 * `cancel`): the first SIGINT/SIGTERM asks for a graceful stop, a second exits at once (exit 130),
 * which is as safe as a crash, which the store is built for.
 */
import type { Logger } from './log.js';

type Releaser = () => unknown;

export class Releasers {
  readonly #list: { name: string; release: Releaser }[] = [];

  /** `release` runs once, at the stop, after every part registered later than it. */
  add(name: string, release: Releaser): void {
    this.#list.push({ name, release });
  }

  /** Runs every releaser, last registered first; never throws. */
  async releaseAll(log?: Logger): Promise<void> {
    for (const { name, release } of this.#list.splice(0).reverse()) {
      try {
        await release();
      } catch (err) {
        log?.warn({ part: name, err: (err as Error).message }, 'could not release a part while stopping');
      }
    }
  }
}

export interface StopSignals {
  /** How many stop signals came (0: none). */
  readonly count: number;
  /** Stops listening (a releaser). */
  off(): void;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/**
 * `first(signal)` on the first SIGINT/SIGTERM; on the second, `second(signal)` (a last word) and
 * exit 130 at once.
 */
export function onStopSignals(first: (signal: NodeJS.Signals) => void, second?: (signal: NodeJS.Signals) => void): StopSignals {
  let count = 0;
  const handler = (signal: NodeJS.Signals): void => {
    count++;
    if (count > 1) {
      second?.(signal);
      process.exit(130);
    }
    first(signal);
  };
  for (const s of SIGNALS) process.on(s, handler);
  return {
    get count() {
      return count;
    },
    off: () => {
      for (const s of SIGNALS) process.off(s, handler);
    },
  };
}
