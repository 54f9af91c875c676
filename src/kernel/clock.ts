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
 * Tests pass a clock whose wall time steps while its monotonic time runs on (test/unit/clock.ts);
 * the simulator (src/sim/) passes one whose time moves only when the schedule says so.
 *
 * Nothing outside this module reads the wall clock or sets a timer of its own: a test holds
 * src/ to that (test/unit/world.test.ts).
 */

export interface Clock {
  now(): number;
  mono(): number;
  /**
   * Resolves after `ms` (on the monotonic clock); rejects with the signal's reason when it is
   * aborted first. Every wait of the engine goes through here, so a simulated clock
   * (sim/scheduler.ts) decides when each one ends.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` every `ms` until the returned function is called; never keeps the process alive. */
  every(ms: number, fn: () => void): () => void;
  /**
   * Lets everything else that is ready run first (the next turn of the event loop). The engine
   * yields at the points where another process's work may come between two of its steps (after
   * the intent to send is committed, before a batch opens, between a claim's record and its
   * move, before a finished batch is marked done): the simulator puts other events there.
   */
  yield(): Promise<void>;
}

export const systemClock: Clock = Object.freeze({
  now: () => Date.now(),
  mono: () => Number(process.hrtime.bigint() / 1_000_000n),
  sleep: (ms: number, signal?: AbortSignal) => sleepFor(Math.max(0, ms), signal),
  every: (ms: number, fn: () => void) => {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
  yield: () => new Promise<void>((resolve) => setImmediate(resolve)),
});

/**
 * A timer that a signal cuts short, rejecting with the signal's reason. Not node:timers/promises'
 * setTimeout: on an abort it builds a new AbortError (a stack trace captured) whatever the reason,
 * and the engine cuts sleeps short all the time: each request's timeout timer when its answer
 * comes, the runner's sleep at every wake. At 400 orders/s that was 2–4 % of the main thread
 * (a profile of `npm run bench -- --parts scale`, docs/bench.md).
 */
function sleepFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The clock file times are compared with: the operating system's, whatever clock the engine runs
 * on, because the operating system stamps a file's mtime. For "is this temporary file or staging
 * folder old enough to be a leftover", never for what the engine decides about orders.
 */
export const fileClock: Pick<Clock, 'now'> = systemClock;

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
