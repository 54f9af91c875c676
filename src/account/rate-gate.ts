/**
 * The one gate every API call of every topup process on this home passes through.
 *
 * p-queue (concurrency 1) orders the waiting calls by priority: orders before polls before
 * lookups before reports. The head of the queue is admitted only when EVERY sliding window
 * has room, judged from the log of call start times kept in the store (table api_calls), so
 * the record survives restarts and is shared with a CLI command running beside the daemon.
 *
 * Sliding, not fixed: a fixed window lets 2×limit through around its edge, which the API
 * punishes. We cannot know when a call arrives at the server, only that it is between the
 * moment we admitted it and the moment its answer came back. So a call counts in every window
 * over that whole span: from admission until its answer (+ the window). A stall between
 * admission and the request leaving (GC, a long transaction) then costs throughput, never a 429.
 * The margin stretches each window by `marginMs` more (clock skew, network jitter): a margin in
 * time costs far less throughput than one in count. A call whose process died before it was
 * answered counts until its start + the request timeout. A Retry-After holds every call.
 *
 * All these times are on the monotonic clock every process on this machine shares (kernel/clock.ts), so
 * a step of the wall clock (NTP, a resumed VM) neither freezes the gate, when call times would lie
 * in the future, nor lets a burst through, when they would all look old. A stored time further
 * ahead than any wait could be (written before a reboot, or by a version that stored wall time)
 * is stale and dropped; no wait is ever longer than the longest window plus the request timeout.
 *
 * The log keeps only what a window can still need: calls older than the longest window plus the
 * request timeout are pruned at every start (so a process that makes a handful of calls, a
 * `topup balance` from cron, prunes too), every 200 calls, and by the daemon's idle upkeep
 * (store/upkeep.ts).
 *
 * Counting a window costs as many steps as it holds calls (24,000 for a 400/s tier's minute), so a
 * window is counted only when it might be full: after a count of n, each call this gate admits
 * adds one, and a call never comes back into a window it has left (it counts until the earlier of
 * its answer and its start + the timeout, plus the window), so n + admitted since is a bound.
 * While it is under the limit there is room. The bound holds while no other connection wrote
 * (PRAGMA data_version; while another process writes, every admission counts again). Nothing is
 * admitted that a full count would refuse. One gate per connection.
 */
import PQueue from 'p-queue';
import type { CallGate, CallInfo } from '../api/gate.js';
import type { RateWindow } from '../config/config.js';
import { unsynced, type Db } from '../store/db.js';
import type { Statement } from 'better-sqlite3';
import { MetaStore } from '../store/meta.js';
import { systemClock, type Clock } from '../kernel/clock.js';

/** Monotonic ms until which every call is held (a Retry-After). */
const HOLD_KEY = 'rate.hold_until_mono';

export interface SchedulerStats {
  admitted: number;
  waitedMs: number;
  byRoute: Record<string, number>;
}

export class RateScheduler implements CallGate {
  readonly #db: Db;
  readonly #meta: MetaStore;
  readonly #windows: RateWindow[];
  readonly #marginMs: number;
  readonly #queue = new PQueue({ concurrency: 1 });
  /** Returns the new call's row id (> 0) when admitted, else minus the time to wait. */
  readonly #admitTx: { immediate(now: number): number };
  readonly #markDone: Statement;
  readonly #prune: Statement;
  readonly #longestMs: number;
  readonly #timeoutMs: number;
  #sinceprune = 0;
  /** Per window: at least as many calls as it holds now (see the header); Infinity: count it. */
  readonly #bounds: number[];
  /** PRAGMA data_version when the bounds were made: another connection's write voids them. */
  #boundsVersion = -1;
  readonly stats: SchedulerStats = { admitted: 0, waitedMs: 0, byRoute: {} };

  /** Monotonic time (kernel/clock.ts): shared by every process on this machine, immune to wall-clock steps. */
  readonly #now: () => number;
  /** Its waits (a full window, a Retry-After hold) are the clock's, so a simulated clock ends them. */
  readonly #clock: Clock;
  /** Longest a Retry-After may hold calls; a stored hold further ahead is stale. */
  readonly #maxHoldMs: number;

  constructor(db: Db, windows: readonly RateWindow[], marginMs: number, requestTimeoutMs = 15_000, opts: { clock?: Clock; maxHoldMs?: number } = {}) {
    if (windows.length === 0) throw new TypeError('RateScheduler needs at least one window');
    this.#db = db;
    const clock = opts.clock ?? systemClock;
    this.#clock = clock;
    this.#now = () => clock.mono();
    this.#maxHoldMs = (opts.maxHoldMs ?? 300_000) + marginMs;
    this.#meta = new MetaStore(db);
    this.#windows = [...windows];
    this.#marginMs = marginMs;
    this.#longestMs = Math.max(...windows.map((w) => w.windowMs)) + marginMs;
    // A call's end: its answer, or (in flight / owner died) now, but never past start + timeout.
    const end = 'coalesce(done, min(@now, t + @timeout))';
    const inWindow = `t > @since - @timeout AND ${end} > @since`;
    const oldestToExpire = db.prepare(`SELECT ${end} AS e FROM api_calls WHERE ${inWindow} ORDER BY e LIMIT 1 OFFSET @offset`);
    const countSince = db.prepare(`SELECT count(*) AS n FROM api_calls WHERE ${inWindow}`);
    const insert = db.prepare('INSERT INTO api_calls (t) VALUES (?)');
    const lastStart = db.prepare('SELECT max(t) AS t FROM api_calls');
    // Calls are spaced by the shortest window's limit (25 ms for 40/1 s): the same throughput
    // as a burst over any window, but never a crowd of calls between admission and the wire
    // when the API answers 429 with a Retry-After.
    const shortest = this.#windows.reduce((a, b) => (a.windowMs <= b.windowMs ? a : b));
    const spacingMs = Math.floor(shortest.windowMs / shortest.limit);
    this.#prune = db.prepare('DELETE FROM api_calls WHERE t <= ?');
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.#bounds = this.#windows.map(() => Number.POSITIVE_INFINITY);
    this.#markDone = db.prepare('UPDATE api_calls SET done = ? WHERE rowid = ?');
    const timeout = requestTimeoutMs;
    this.#timeoutMs = timeout;
    // Nothing a window needs can lie ahead of now: such times were written before a reboot (the
    // monotonic clock restarted) or by a version that stored wall time. They would freeze the gate.
    const longestWait = this.#longestMs + timeout;
    const start = this.#now();
    db.prepare('DELETE FROM api_calls WHERE t > ?').run(start + 1_000);
    if (Number(this.#meta.get(HOLD_KEY) ?? 0) > start + this.#maxHoldMs) this.#meta.delete(HOLD_KEY);
    this.prune(start);
    // Returns 0 when the call was recorded (admitted), else how long to wait.
    this.#admitTx = db
      .transaction((now: number): number => {
        const hold = Number(this.#meta.get(HOLD_KEY) ?? 0);
        if (hold > now) return -Math.min(hold - now, this.#maxHoldMs);
        let wait = 0;
        const last = (lastStart.get() as { t: number | null }).t;
        if (last !== null && now - last < spacingMs) wait = last + spacingMs - now;
        const version = dataVersion.get() as number;
        if (version !== this.#boundsVersion) {
          this.#bounds.fill(Number.POSITIVE_INFINITY);
          this.#boundsVersion = version;
        }
        for (const [i, w] of this.#windows.entries()) {
          if (this.#bounds[i]! < w.limit) continue; // certainly room: no count needed
          const since = now - (w.windowMs + this.#marginMs);
          const n = (countSince.get({ since, now, timeout }) as { n: number }).n;
          this.#bounds[i] = n;
          if (n >= w.limit) {
            // The window has room once the (n - limit + 1)-th call to end in it has left.
            const e = (oldestToExpire.get({ since, now, timeout, offset: n - w.limit }) as { e: number } | undefined)?.e ?? now;
            wait = Math.max(wait, e + w.windowMs + this.#marginMs - now + 1);
          }
        }
        if (wait > 0) return -Math.min(wait, longestWait);
        const id = Number(insert.run(now).lastInsertRowid);
        this.#grow();
        if (++this.#sinceprune >= 200) {
          this.#sinceprune = 0;
          this.prune(now);
        }
        return id;
      });
  }

  /** Drops calls no window can need any more; returns how many. */
  prune(now = this.#now()): number {
    return this.#prune.run(now - this.#longestMs - this.#timeoutMs - 1000).changes;
  }

  /** One more call may be in every window. */
  #grow(): void {
    for (let i = 0; i < this.#bounds.length; i++) this.#bounds[i]!++;
  }

  /** Waiting calls (not yet admitted). */
  get waiting(): number {
    return this.#queue.size + this.#queue.pending;
  }

  acquire(call: CallInfo, signal?: AbortSignal): Promise<() => void> {
    return this.#queue.add(
      async () => {
        const started = this.#now();
        let id: number;
        for (;;) {
          signal?.throwIfAborted();
          const at = this.#now();
          // The call log is not fsynced: see unsynced(). A submit's intent, committed with a full
          // sync before its request leaves, puts this admission on disk with it.
          id = unsynced(this.#db, () => this.#admitTx.immediate(at));
          if (id > 0) break;
          await this.#clock.sleep(-id, signal);
        }
        this.stats.admitted++;
        this.stats.waitedMs += this.#now() - started;
        this.stats.byRoute[call.route] = (this.stats.byRoute[call.route] ?? 0) + 1;
        let answered = false;
        return () => {
          if (answered) return;
          answered = true;
          try {
            unsynced(this.#db, () => this.#markDone.run(this.#now(), id));
          } catch {
            // The store is closing: the call then counts until its start + timeout, the safe side.
          }
        };
      },
      { priority: call.priority, ...(signal ? { signal } : {}) },
    );
  }

  holdOff(ms: number): void {
    const until = this.#now() + Math.min(ms + this.#marginMs, this.#maxHoldMs);
    this.#db.transaction(() => {
      const current = Number(this.#meta.get(HOLD_KEY) ?? 0);
      if (until > current) this.#meta.set(HOLD_KEY, String(until));
    }).immediate();
  }

  async untilClear(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const wait = this.holdRemainingMs();
      if (wait <= 0) return;
      await this.#clock.sleep(wait, signal);
    }
  }

  /** When the next call could be admitted, ignoring priority: 0 when now. For status displays. */
  holdRemainingMs(now = this.#now()): number {
    return Math.min(this.#maxHoldMs, Math.max(0, Number(this.#meta.get(HOLD_KEY) ?? 0) - now));
  }

  /** Calls started in the last `ms` (for status displays and metrics). */
  callsWithin(ms: number): number {
    return (this.#db.prepare('SELECT count(*) AS n FROM api_calls WHERE t > ?').get(this.#now() - ms) as { n: number }).n;
  }

  async onIdle(): Promise<void> {
    await this.#queue.onIdle();
  }
}

/**
 * p-queue's own fixed windows (interval/intervalCap), one queue per window, chained. Not used in
 * production: it exists so that the benchmark can show, side by side, what a fixed window costs
 * (it admits up to twice the limit around a window edge, and the API answers 429). Selected with
 * TOPUP_RATE_WINDOW_MODE=fixed.
 */
export class FixedWindowGate implements CallGate {
  readonly #queues: PQueue[];
  readonly #clock: Clock;
  #holdUntil = 0;

  constructor(windows: readonly RateWindow[], clock: Clock = systemClock) {
    this.#queues = windows.map((w) => new PQueue({ interval: w.windowMs, intervalCap: w.limit }));
    this.#clock = clock;
  }

  async acquire(call: CallInfo, signal?: AbortSignal): Promise<void> {
    const hold = this.#holdUntil - this.#clock.mono();
    if (hold > 0) await this.#clock.sleep(hold, signal);
    for (const q of this.#queues) await q.add(async () => {}, { priority: call.priority, ...(signal ? { signal } : {}) });
  }

  holdOff(ms: number): void {
    this.#holdUntil = Math.max(this.#holdUntil, this.#clock.mono() + ms);
  }
}
