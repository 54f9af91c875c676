/**
 * The simulator's world: one virtual time for every simulated process, and the queue of
 * everything that will happen in it (a process's timer, a request reaching the model API, an
 * answer coming back, an operator's action, a crash). Time moves only when the queue says so:
 * the run jumps from one due event to the next, so a day of supplier outages costs milliseconds.
 *
 * Determinism. Before each event the run waits until the processes have done all they can
 * without it (quiesce(): every promise chain parked on an event of this queue, no real file I/O
 * outstanding). Then ONE event fires. Events due at the same instant are taken in an order the
 * seed picks, so a seed explores one interleaving and replays it exactly.
 *
 * A crashed process's timers and answers are dropped from the queue: the promise chains waiting
 * on them never resume, which is what a SIGKILL does to a process at that await.
 */
import type { Clock } from '../src/kernel/clock.js';
import type { Entropy } from '../src/kernel/entropy.js';

/** A simulated process (an engine) or the world itself (`null`): what a crash takes away. */
export type Owner = string | null;

interface Pending {
  at: number;
  seq: number;
  owner: Owner;
  what: string;
  fire: () => void;
  /** Removed (a crash, an aborted sleep): skipped when its time comes. */
  dead: boolean;
  /** Starts no asynchronous work (a synchronous callback): no need to wait for it to settle. */
  quiet: boolean;
  /** A sleep of at most SPIN_SLEEP_MS (the runner's shortest). */
  short?: boolean;
  /** Held by a pause of its process (`pause`): when it fell due; those held run in that order when the process resumes. */
  heldFrom?: number;
}

/** The runner's shortest sleep: a process that keeps waking after it has nothing to do is spinning. */
const SPIN_SLEEP_MS = 5;
/**
 * Short sleeps of one process in a row, with nothing else of its own between them (an answer, a
 * yield, a lease renewal), after which it is spinning: in a real process that is a core woken 200
 * times a second to find nothing to do (half a second of it here).
 */
const SPIN_LIMIT = 100;

/** The wall clock the simulated time starts at: 2026-11-26 00:00:00 UTC. */
export const SIM_EPOCH = Date.UTC(2026, 10, 26);

export class SimScheduler {
  /** Monotonic simulated time, ms since the run began. */
  #mono = 0;
  /** Wall time minus monotonic time: a step of the wall clock changes only this. */
  #wallOffset = SIM_EPOCH;
  #seq = 0;
  readonly #queue: Pending[] = [];
  readonly #rand: Entropy;
  /** Events fired, for the run's figures and the stall guard. */
  fired = 0;
  /** The last events fired, newest last: the trace a failing run prints. */
  readonly trace: string[] = [];
  readonly #traceKeep: number;

  constructor(rand: Entropy, traceKeep = 400) {
    this.#rand = rand;
    this.#traceKeep = traceKeep;
  }

  get mono(): number {
    return this.#mono;
  }

  get now(): number {
    return this.#wallOffset + this.#mono;
  }

  /** The wall clock steps (NTP, a resumed VM); monotonic time runs on. */
  stepWall(ms: number): void {
    this.#wallOffset += ms;
  }

  /** The true time the run starts at (the model API's clock follows it); SIM_EPOCH unless a schedule starts elsewhere (before UTC midnight: sim/shop.ts). Call before anything runs. */
  epoch = SIM_EPOCH;
  startAt(wallMs: number): void {
    this.#wallOffset += wallMs - this.epoch;
    this.epoch = wallMs;
  }

  /** Processes that died: nothing of theirs happens any more, even what is scheduled later (an answer to a request that arrives after the crash). */
  readonly #gone = new Set<string>();

  /** Something happens `delayMs` from now. Returns a handle that cancels it. */
  at(delayMs: number, owner: Owner, what: string, fire: () => void, quiet = false, short = false): () => void {
    const p: Pending = { at: this.#mono + Math.max(0, delayMs), seq: this.#seq++, owner, what, fire, dead: owner !== null && this.#gone.has(owner), quiet, short };
    const until = owner === null ? undefined : this.#pausedUntil.get(owner);
    if (until !== undefined && p.at < until) Object.assign(p, { heldFrom: p.at, at: until });
    this.#queue.push(p);
    return () => void (p.dead = true);
  }

  /** Processes stopped (`pause`), and until when (monotonic). */
  readonly #pausedUntil = new Map<string, number>();

  /**
   * A process stops for `ms` and then goes on (SIGSTOP and SIGCONT, a stop-the-world GC pause, a
   * VM frozen by its host): nothing of its own happens meanwhile, not its timers (a lease renewal
   * among them), not the answers that reach it; the world and the other processes go on (a lease
   * lapses, another process takes the batch). When it resumes, what fell due meanwhile happens in
   * the order it fell due, before anything else at that instant: an answer that arrived just before
   * the stop is acted on first, with what the process had read before it (its `now` among it).
   */
  pause(owner: string, ms: number): void {
    const until = Math.max(this.#mono + ms, this.#pausedUntil.get(owner) ?? 0);
    this.#pausedUntil.set(owner, until);
    for (const p of this.#queue) if (p.owner === owner && !p.dead && p.at < until) Object.assign(p, { heldFrom: p.heldFrom ?? p.at, at: until });
  }

  /** A stopped process goes on `delayMs` from now (sooner than its pause said; never later). */
  resume(owner: string, delayMs: number): void {
    const until = this.#pausedUntil.get(owner);
    if (until === undefined || until <= this.#mono) return;
    const at = Math.min(until, this.#mono + Math.max(0, delayMs));
    this.#pausedUntil.set(owner, at);
    for (const p of this.#queue) {
      if (p.owner !== owner || p.heldFrom === undefined || p.at !== until) continue;
      if (p.heldFrom < at) p.at = at;
      else {
        // Falls due after the resume: at its own time, as if never held.
        p.at = p.heldFrom;
        delete p.heldFrom;
      }
    }
  }

  /** Whether a process is stopped now (`pause`). */
  paused(owner: string): boolean {
    return (this.#pausedUntil.get(owner) ?? -1) > this.#mono;
  }

  /** A process died: nothing of its own will happen any more. */
  drop(owner: string): void {
    this.#gone.add(owner);
    for (const p of this.#queue) if (p.owner === owner) p.dead = true;
  }

  /** Pending events of the living. */
  get pending(): number {
    return this.#queue.reduce((n, p) => n + (p.dead ? 0 : 1), 0);
  }

  /** When the next event is due (monotonic), or undefined when nothing is pending. */
  nextAt(): number | undefined {
    let min: number | undefined;
    for (const p of this.#queue) if (!p.dead && (min === undefined || p.at < min)) min = p.at;
    return min;
  }

  /** Whether the last event fired started no asynchronous work. */
  lastQuiet = false;

  /** Short sleeps in a row, per process (see SPIN_LIMIT). */
  readonly #shortRun = new Map<string, number>();
  /** The first process found spinning, with the events that show it; null while none has. */
  spin: string | null = null;

  /**
   * Fires the next event: the earliest; among those due at the same instant, one the seed picks.
   * Time jumps to it. False when nothing is pending.
   */
  step(): boolean {
    let min = Number.POSITIVE_INFINITY;
    for (let i = this.#queue.length - 1; i >= 0; i--) {
      const p = this.#queue[i]!;
      if (p.dead) this.#queue.splice(i, 1);
      else if (p.at < min) min = p.at;
    }
    if (this.#queue.length === 0) return false;
    const due = this.#queue.filter((p) => p.at === min);
    // What a resumed process held runs first, in the order it fell due (no draw taken: schedules without a pause draw as before).
    const held = due.filter((p) => p.heldFrom !== undefined);
    const pick =
      held.length > 0
        ? held.reduce((a, b) => (b.heldFrom! < a.heldFrom! || (b.heldFrom === a.heldFrom && b.seq < a.seq) ? b : a))
        : due.length === 1
          ? due[0]!
          : due[Math.floor(this.#rand.random() * due.length)]!;
    this.#queue.splice(this.#queue.indexOf(pick), 1);
    this.#mono = pick.at;
    this.fired++;
    this.lastQuiet = pick.quiet;
    if (this.trace.length >= this.#traceKeep) this.trace.shift();
    this.trace.push(`${(pick.at / 1000).toFixed(3)}s ${pick.owner ?? 'world'}: ${pick.what}`);
    if (process.env.QDEBUG) process.stderr.write(`EVENT ${this.trace[this.trace.length - 1]}\n`);
    if (pick.owner !== null) {
      const run = pick.short ? (this.#shortRun.get(pick.owner) ?? 0) + 1 : 0;
      this.#shortRun.set(pick.owner, run);
      if (run > SPIN_LIMIT && this.spin === null) this.spin = `${pick.owner} woke ${run} times in a row after ${SPIN_SLEEP_MS} ms with nothing else happening to it (last: ${this.trace.slice(-2).join(' | ')})`;
    }
    pick.fire();
    return true;
  }

  /** The clock a simulated process runs on: its sleeps are events it owns. */
  clockFor(owner: string): Clock {
    const clock: Clock = {
      now: () => this.now,
      mono: () => this.#mono,
      sleep: (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason as Error);
          const cancel = this.at(ms, owner, `timer ${Math.round(ms)} ms`, () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          }, false, ms <= SPIN_SLEEP_MS);
          const onAbort = (): void => {
            cancel();
            reject(signal!.reason as Error);
          };
          signal?.addEventListener('abort', onAbort, { once: true });
        }),
      // A yield is an event a little later (0–20 ms, the seed's choice): what another process has
      // due meanwhile may run first, as the operating system's scheduler would let it.
      yield: () => new Promise<void>((resolve) => void this.at(Math.floor(this.#rand.random() * 21), owner, 'yield', resolve)),
      every: (ms, fn) => {
        let stopped = false;
        // The engine's `every` callbacks are synchronous (lease renewal): quiet events.
        const arm = (): void => {
          this.at(ms, owner, `every ${ms} ms`, () => {
            if (stopped) return;
            fn();
            arm();
          }, true);
        };
        arm();
        return () => void (stopped = true);
      },
    };
    return clock;
  }
}

/**
 * What a process may be waiting on outside the queue: a libuv request of real I/O (a file read,
 * a write, an fsync), or a macrotask it queued (setImmediate: the result writer and the client
 * yield with one). While any is pending, the run waits. (Long-lived handles, an open file or a
 * pipe, are not waits.)
 */
const REAL_IO = /^(FSReq|FileHandleCloseReq|CloseReq|Zlib|GetAddrInfo|Immediate)/;

/**
 * Waits until every simulated process has done all it can without the next event: microtasks
 * drained, real file I/O finished (a CSV read in chunks, a result file written). Two quiet turns
 * of the event loop in a row, because a stream issues its next read one turn after the last.
 */
/**
 * Real-time jitter (ms) added to every turn of quiesce(): a machine under load, made on purpose.
 * A run is deterministic only if nothing it decides reads real time; with jitter on, real time
 * between two events grows by a random amount, so a schedule run with and without it must give
 * the same events (sim/determinism.ts checks that). 0: off.
 */
let jitterMs = 0;
export function setRealJitter(ms: number): void {
  jitterMs = ms;
}

/**
 * Turns of the event loop that look again at once (setImmediate) while real I/O is pending; after
 * that many in a row, each turn waits on a 1 ms timer instead. A pending setImmediate makes the
 * loop poll for I/O without blocking, so looking again at once spins a core until the thread pool
 * finishes (the profile: 15 turns per event, 93 % of them finding I/O pending); a timer lets the
 * loop block in its poll, where the I/O's own callback runs the moment it completes. Only real
 * time between two events changes, which a run must not depend on (setRealJitter, determinism.ts).
 */
const SPIN_TURNS = 4;

export async function quiesce(maxRealMs = 10_000): Promise<boolean> {
  let quiet = 0;
  // Chains of promises alone are done after one turn (microtasks run before the next macrotask);
  // once real I/O was seen, two quiet turns in a row (a stream reads again one turn after a read).
  let need = 1;
  // Turns in a row that found real I/O pending (see SPIN_TURNS).
  let busyTurns = 0;
  const started = performance.now();
  for (let turn = 0; quiet < need; turn++) {
    // A process that never waits for the queue is in a busy loop: in a real process that burns a
    // core until a timer of the real clock ends it; here time cannot move, so it is reported.
    // (Real milliseconds, not turns: a slow disk under load must not look like a loop.)
    if ((turn & 255) === 255 && performance.now() - started > maxRealMs) return false;
    if (jitterMs > 0 && Math.random() < 0.3) await new Promise<void>((r) => setTimeout(r, Math.random() * jitterMs));
    else if (busyTurns >= SPIN_TURNS) await new Promise<void>((r) => setTimeout(r, 1));
    else await new Promise<void>((r) => setImmediate(r));
    const busy = process.getActiveResourcesInfo().some((r) => REAL_IO.test(r));
    if (busy) need = 2;
    busyTurns = busy ? busyTurns + 1 : 0;
    quiet = busy ? 0 : quiet + 1;
  }
  return true;
}
