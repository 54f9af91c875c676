/**
 * Time, injected. Two clocks, for two jobs:
 *  - `now()`: the wall clock (ms since 1970), for what is stored and shown: when a row was sent,
 *    since when it is in doubt, when a batch finished. It can step (NTP, a VM resumed, an
 *    operator), back or forward, by seconds or hours.
 *  - `mono()`: a monotonic clock in ms (CLOCK_MONOTONIC, which every process on this machine
 *    shares), for what must never stall or burst when the wall clock steps: the rate windows of
 *    the call log, the Retry-After hold, pauses and their back-off, sleeps. It restarts at boot,
 *    so a value written before a reboot is larger than any value after it: readers treat a
 *    stored monotonic time in the future beyond its longest possible wait as stale.
 * Tests pass a clock whose wall time steps while its monotonic time runs on (test/unit/clock.ts).
 */
export interface Clock {
  now(): number;
  mono(): number;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  mono: () => Number(process.hrtime.bigint() / 1_000_000n),
});

/**
 * Notices steps of the wall clock: the wall clock and the monotonic one should advance together;
 * when they part by more than `toleranceMs` between two looks, the wall clock stepped. Returns
 * the size of the step (positive: forward), or 0.
 */
export class StepWatch {
  readonly #clock: Clock;
  readonly #toleranceMs: number;
  /** The two clocks at the last look: their difference is what a step changes. */
  #offset: number;

  constructor(clock: Clock, toleranceMs = 2_000) {
    this.#clock = clock;
    this.#toleranceMs = toleranceMs;
    this.#offset = clock.now() - clock.mono();
  }

  look(): number {
    const offset = this.#clock.now() - this.#clock.mono();
    const step = offset - this.#offset;
    this.#offset = offset;
    return Math.abs(step) > this.#toleranceMs ? step : 0;
  }
}
