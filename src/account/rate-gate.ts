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
 *
 * Per account: one gate per supplier account (`account`, default `default`). Every query of the
 * call log reads and writes only that account's calls (api_calls.account, index (account, t)),
 * the Retry-After hold is the account's own meta key (`rate.hold_until_mono` for `default`, as in
 * homes from before accounts, `rate.hold_until_mono:<account>` for others), and so is what it
 * learned. Everything above holds per account: another account's calls never fill this one's
 * windows, and data_version (which any write to the store bumps) only makes this gate count again.
 *
 * Learning (`learn`, when the account's limits were not given): on a 429 the client calls
 * onRateLimited; the gate judges from its call log which window the API enforces and lowers that
 * window's limit at once, for every process on the home (account/learned-limits.ts has the rule and
 * the re-probing upward). Learned limits only ever lower the configured ones within the configured
 * or probed window lengths, so the bounds above stay true: a lowered limit is checked against the
 * same counts, and a change of windows voids the bounds. Until every configured window's limit is
 * learned, at most SLOW_START_IN_FLIGHT calls this gate admitted are unanswered (slow start): the
 * calls already on their way when a 429 comes back are refused too, and far from the supplier a
 * free gate has many on their way (learned-limits.ts). Per gate, i.e. per process.
 */
import PQueue from 'p-queue';
import type { CallGate, CallInfo, RateLimitedInfo } from '../api/gate.js';
import type { RateWindow } from '../config/config.js';
import { unsynced, type Db } from '../store/db.js';
import type { Statement } from 'better-sqlite3';
import { MetaStore } from '../store/meta.js';
import { holdKey } from '../store/account-keys.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import {
  afterQuietUse,
  afterRefusal,
  candidateLengths,
  effectiveWindows,
  inferLimit,
  QUIET_USE_MS,
  readLearned,
  SLOW_START_IN_FLIGHT,
  slowStart,
  USE_GAP_CAP_MS,
  writeLearned,
  type Inference,
  type LearnedRecord,
  type LoggedCall,
} from './learned-limits.js';

/** Monotonic ms until which every call of the account is held (a Retry-After): `default` keeps the key of homes from before accounts (store/account-keys.ts). */
export { holdKey };

/** What the admission records for the console's rate picture: the wall-clock minute, whether the call places an order, since when it waited (monotonic). */
interface MinuteUse {
  wallNow: number;
  order: boolean;
  queuedAt: number;
}

export interface SchedulerStats {
  admitted: number;
  waitedMs: number;
  byRoute: Record<string, number>;
}

export interface SchedulerOptions {
  clock?: Clock;
  maxHoldMs?: number;
  /** The supplier account whose calls this gate admits (default `default`). */
  account?: string;
  /** Learn tighter limits from 429s (the account's limits were not given): learned-limits.ts. */
  learn?: boolean;
}

/**
 * Calls are spaced (see #applyLearned) only when the spacing is at least this long. A shorter one
 * (400 calls/s: 2 ms) is shorter than the event loop's turn on a busy machine, and every late timer
 * stretched a gap for good: the scale bench's trace of the gate's admissions (api_calls, 20,000
 * orders at 400/s) had a third of the gaps at the 2 ms spacing and most of the rest at 3–5 ms and
 * over, so dispatch ran below the ceiling with the loop partly idle. Such a rate's windows still
 * bound every call, and TOPUP_MAX_IN_FLIGHT the crowd between admission and the wire.
 */
export const MIN_SPACING_MS = 5;

/** Why a wait's timer is cancelled: the wait ended first. */
const WAIT_ENDED = Symbol('wait ended');

export class RateScheduler implements CallGate {
  readonly #db: Db;
  readonly #meta: MetaStore;
  readonly #account: string;
  readonly #holdKey: string;
  readonly #learn: boolean;
  /** The configured windows (learning starts from them and never goes above them). */
  readonly #configured: RateWindow[];
  /** The windows in force: the configured ones, lowered or added to by what was learned. */
  #windows: RateWindow[];
  /** Calls are spaced by the shortest window's limit (see the constructor). */
  #spacingMs = 0;
  readonly #marginMs: number;
  readonly #queue = new PQueue({ concurrency: 1 });
  /** Returns the new call's row id (> 0) when admitted, else minus the time to wait. */
  readonly #admitTx: { immediate(now: number, use: MinuteUse): number };
  readonly #markDone: Statement;
  readonly #prune: Statement;
  readonly #longestMs: number;
  readonly #timeoutMs: number;
  #sinceprune = 0;
  /** Per window: at least as many calls as it holds now (see the header); Infinity: count it. */
  #bounds: number[];
  /** PRAGMA data_version when the bounds were made: another connection's write voids them. */
  #boundsVersion = -1;
  /** The learned record as last applied (its JSON), to notice another process's change. */
  #learnedSeen = '';
  /** Use of this gate since the last change of what was learned (learned-limits.ts: re-probing). */
  #useMs = 0;
  #lastAdmit: number | null = null;
  /** Learning, and some configured window not learned yet: at most SLOW_START_IN_FLIGHT calls in flight (learned-limits.ts). */
  #slowStart = false;
  /** Admission times (monotonic) of the calls this gate admitted that are not answered yet. */
  readonly #inFlight = new Set<{ at: number }>();
  /** Wakes an admission waiting for a call in flight to be answered (slow start). */
  #answered: (() => void) | null = null;
  readonly stats: SchedulerStats = { admitted: 0, waitedMs: 0, byRoute: {} };

  /** Monotonic time (kernel/clock.ts): shared by every process on this machine, immune to wall-clock steps. */
  readonly #now: () => number;
  /** Its waits (a full window, a Retry-After hold) are the clock's, so a simulated clock ends them. */
  readonly #clock: Clock;
  /** Longest a Retry-After may hold calls; a stored hold further ahead is stale. */
  readonly #maxHoldMs: number;
  readonly #callLog: Statement;

  constructor(db: Db, windows: readonly RateWindow[], marginMs: number, requestTimeoutMs = 15_000, opts: SchedulerOptions = {}) {
    if (windows.length === 0) throw new TypeError('RateScheduler needs at least one window');
    this.#db = db;
    const clock = opts.clock ?? systemClock;
    this.#clock = clock;
    this.#now = () => clock.mono();
    this.#maxHoldMs = (opts.maxHoldMs ?? 300_000) + marginMs;
    this.#meta = new MetaStore(db);
    const account = opts.account ?? 'default';
    this.#account = account;
    this.#holdKey = holdKey(account);
    this.#learn = opts.learn === true;
    this.#configured = windows.map((w) => ({ ...w }));
    this.#windows = [...this.#configured];
    this.#bounds = this.#windows.map(() => Number.POSITIVE_INFINITY);
    this.#marginMs = marginMs;
    // Learning judges a 429 on the second and the minute too: the log keeps what they need.
    const lengths = this.#learn ? candidateLengths(windows) : windows.map((w) => w.windowMs);
    this.#longestMs = Math.max(...lengths) + marginMs;
    // A call's end: its answer, or (in flight / owner died) now, but never past start + timeout.
    const end = 'coalesce(done, min(@now, t + @timeout))';
    const inWindow = `account = @account AND t > @since - @timeout AND ${end} > @since`;
    const oldestToExpire = db.prepare(`SELECT ${end} AS e FROM api_calls WHERE ${inWindow} ORDER BY e LIMIT 1 OFFSET @offset`);
    const countSince = db.prepare(`SELECT count(*) AS n FROM api_calls WHERE ${inWindow}`);
    const insert = db.prepare('INSERT INTO api_calls (t, account) VALUES (?, ?)');
    // The console's rate picture (store/pictures.ts): calls per wall-clock minute, and how long
    // order calls waited for the budget, in the admission's own transaction (no write of its own).
    const minuteUse = db.prepare(
      `INSERT INTO rate_minutes (account, minute, calls, orders, order_wait_ms, order_wait_max_ms) VALUES (@account, @minute, 1, @order, @wait, @wait)
       ON CONFLICT (account, minute) DO UPDATE SET calls = calls + 1, orders = orders + excluded.orders,
         order_wait_ms = order_wait_ms + excluded.order_wait_ms, order_wait_max_ms = max(order_wait_max_ms, excluded.order_wait_max_ms)`,
    );
    const lastStart = db.prepare('SELECT max(t) AS t FROM api_calls WHERE account = ?');
    this.#callLog = db.prepare('SELECT t, done FROM api_calls WHERE account = ?');
    this.#prune = db.prepare('DELETE FROM api_calls WHERE account = ? AND t <= ?');
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.#markDone = db.prepare('UPDATE api_calls SET done = ? WHERE rowid = ?');
    const timeout = requestTimeoutMs;
    this.#timeoutMs = timeout;
    // Nothing a window needs can lie ahead of now: such times were written before a reboot (the
    // monotonic clock restarted) or by a version that stored wall time. They would freeze the gate.
    // (Of every account: the monotonic clock restarted for all of them.)
    const longestWait = this.#longestMs + timeout;
    const start = this.#now();
    db.prepare('DELETE FROM api_calls WHERE t > ?').run(start + 1_000);
    if (Number(this.#meta.get(this.#holdKey) ?? 0) > start + this.#maxHoldMs) this.#meta.delete(this.#holdKey);
    // Given limits are kept as given: nothing learned applies (nor is learned).
    this.#applyLearned(this.#learn ? readLearned(this.#meta, account) : undefined);
    this.prune(start);
    const params = { account, timeout };
    // Returns 0 when the call was recorded (admitted), else how long to wait.
    this.#admitTx = db
      .transaction((now: number, use: MinuteUse): number => {
        const hold = Number(this.#meta.get(this.#holdKey) ?? 0);
        if (hold > now) return -Math.min(hold - now, this.#maxHoldMs);
        const version = dataVersion.get() as number;
        if (version !== this.#boundsVersion) {
          // Another process wrote: it may have learned (one read per foreign write, not per call).
          if (this.#learn) this.#applyLearned(readLearned(this.#meta, account));
          this.#bounds.fill(Number.POSITIVE_INFINITY);
          this.#boundsVersion = version;
        }
        let wait = 0;
        if (this.#spacingMs >= MIN_SPACING_MS) {
          const last = (lastStart.get(account) as { t: number | null }).t;
          if (last !== null && now - last < this.#spacingMs) wait = last + this.#spacingMs - now;
        }
        for (const [i, w] of this.#windows.entries()) {
          if (this.#bounds[i]! < w.limit) continue; // certainly room: no count needed
          const since = now - (w.windowMs + this.#marginMs);
          const n = (countSince.get({ ...params, since, now }) as { n: number }).n;
          this.#bounds[i] = n;
          if (n >= w.limit) {
            // The window has room once the (n - limit + 1)-th call to end in it has left.
            const e = (oldestToExpire.get({ ...params, since, now, offset: n - w.limit }) as { e: number } | undefined)?.e ?? now;
            wait = Math.max(wait, e + w.windowMs + this.#marginMs - now + 1);
          }
        }
        if (wait > 0) return -Math.min(wait, longestWait);
        const id = Number(insert.run(now, account).lastInsertRowid);
        minuteUse.run({ account, minute: Math.floor(use.wallNow / 60_000), order: use.order ? 1 : 0, wait: use.order ? Math.max(0, Math.round(now - use.queuedAt)) : 0 });
        this.#grow();
        if (this.#learn) this.#noteUse(now);
        if (++this.#sinceprune >= 200) {
          this.#sinceprune = 0;
          this.prune(now);
        }
        return id;
      });
  }

  /** The supplier account this gate admits calls of. */
  get account(): string {
    return this.#account;
  }

  /** The windows in force now (configured, lowered by what was learned). */
  get windows(): RateWindow[] {
    return this.#windows.map((w) => ({ ...w }));
  }

  /**
   * Puts the learned record in force: the windows, the spacing, and (when they changed) fresh
   * bounds. Another process's change of the record also restarts the use count of re-probing.
   */
  #applyLearned(rec: LearnedRecord | undefined): void {
    const seen = rec ? JSON.stringify(rec.windows) + rec.changedAt : '';
    if (seen !== this.#learnedSeen) this.#useMs = 0;
    this.#learnedSeen = seen;
    const windows = effectiveWindows(this.#configured, rec);
    this.#slowStart = this.#learn && slowStart(this.#configured, rec);
    if (JSON.stringify(windows) !== JSON.stringify(this.#windows) || this.#spacingMs === 0) {
      this.#windows = windows;
      this.#bounds = windows.map(() => Number.POSITIVE_INFINITY);
    }
    // Calls are spaced by the shortest window's limit (25 ms for 40/1 s): the same throughput
    // as a burst over any window, but never a crowd of calls between admission and the wire
    // when the API answers 429 with a Retry-After.
    const shortest = this.#windows.reduce((a, b) => (a.windowMs <= b.windowMs ? a : b));
    this.#spacingMs = Math.floor(shortest.windowMs / shortest.limit);
  }

  /** Re-probing (learned-limits.ts): after QUIET_USE_MS of use without a 429, learned limits go one step up. Inside the admission's transaction. */
  #noteUse(now: number): void {
    if (this.#lastAdmit !== null) this.#useMs += Math.min(Math.max(0, now - this.#lastAdmit), USE_GAP_CAP_MS);
    this.#lastAdmit = now;
    if (this.#useMs < QUIET_USE_MS) return;
    this.#useMs = 0;
    const rec = readLearned(this.#meta, this.#account);
    if (!rec || rec.windows.length === 0) return;
    const next = afterQuietUse(rec, this.#clock.now());
    writeLearned(this.#meta, this.#account, next);
    this.#applyLearned(next);
  }

  /** Drops this account's calls no window can need any more; returns how many. */
  prune(now = this.#now()): number {
    return this.#prune.run(this.#account, now - this.#longestMs - this.#timeoutMs - 1000).changes;
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
    // Waiting for the budget starts here, behind the calls queued before it, not when its turn comes.
    const queuedAt = this.#now();
    return this.#queue.add(
      async () => {
        const started = this.#now();
        let id: number;
        for (;;) {
          signal?.throwIfAborted();
          if (this.#slowStart) {
            const wait = this.#slowStartWait();
            if (wait > 0) {
              await this.#untilAnswered(wait, signal);
              continue;
            }
          }
          const at = this.#now();
          // The call log is not fsynced: see unsynced(). A submit's intent, committed with a full
          // sync before its request leaves, puts this admission on disk with it.
          id = unsynced(this.#db, () => this.#admitTx.immediate(at, { wallNow: this.#clock.now(), order: call.route === 'submit', queuedAt }));
          if (id > 0) break;
          await this.#clock.sleep(-id, signal);
        }
        this.stats.admitted++;
        this.stats.waitedMs += this.#now() - started;
        this.stats.byRoute[call.route] = (this.stats.byRoute[call.route] ?? 0) + 1;
        let answered = false;
        const flight = { at: this.#now() };
        this.#inFlight.add(flight);
        return () => {
          if (answered) return;
          answered = true;
          this.#inFlight.delete(flight);
          const wake = this.#answered;
          this.#answered = null;
          wake?.();
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

  /**
   * Slow start: 0 when fewer than SLOW_START_IN_FLIGHT recent calls are unanswered, else how long
   * until the oldest of them stops counting. A call unanswered for longer than the shortest window
   * is slow (a hung request waits out its timeout), not on its way at the rate the cap is about:
   * it must not stop every other call of the account until then.
   */
  #slowStartWait(): number {
    const now = this.#now();
    const slowAfter = Math.min(...this.#configured.map((w) => w.windowMs));
    let recent = 0;
    let oldest = Number.POSITIVE_INFINITY;
    for (const f of this.#inFlight) {
      if (now - f.at >= slowAfter) continue;
      recent++;
      oldest = Math.min(oldest, f.at);
    }
    return recent < SLOW_START_IN_FLIGHT ? 0 : Math.max(1, oldest + slowAfter - now);
  }

  /** Resolves when a call in flight is answered or after `ms` (rejects when the signal aborts). */
  async #untilAnswered(ms: number, signal?: AbortSignal): Promise<void> {
    const timer = new AbortController();
    const onAbort = (): void => timer.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const answered = new Promise<void>((resolve) => {
        const prev = this.#answered;
        this.#answered = () => {
          prev?.();
          resolve();
        };
      });
      await Promise.race([answered, this.#clock.sleep(ms, timer.signal).catch(() => undefined)]);
      signal?.throwIfAborted();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // A constant reason: abort() without one builds a DOMException, on every wait of every call.
      timer.abort(WAIT_ENDED);
    }
  }

  holdOff(ms: number): void {
    const until = this.#now() + Math.min(ms + this.#marginMs, this.#maxHoldMs);
    this.#db.transaction(() => {
      const current = Number(this.#meta.get(this.#holdKey) ?? 0);
      if (until > current) this.#meta.set(this.#holdKey, String(until));
    }).immediate();
  }

  /**
   * A call admitted at or before `info.startedMono` was answered 429 RATE_LIMIT. With learning on,
   * judge which window the API enforces from this account's call log and lower it at once (for
   * every process on the home); returns the judgement (null: learning off, or nothing to judge).
   */
  onRateLimited(info: RateLimitedInfo): Inference | null {
    if (!this.#learn) return null;
    let inference: Inference | null = null;
    this.#db.transaction(() => {
      const calls = this.#callLog.all(this.#account) as LoggedCall[];
      // The refused call: the last one this account started by the time the client saw it leave.
      let refusedAt: number | undefined;
      for (const c of calls) if (c.t <= info.startedMono && (refusedAt === undefined || c.t > refusedAt)) refusedAt = c.t;
      if (refusedAt === undefined) return;
      const rec = readLearned(this.#meta, this.#account);
      const refused = new Set([...(rec?.refused ?? []), refusedAt]);
      inference = inferLimit(calls, refusedAt, refused, this.#configured);
      const keepSince = this.#now() - this.#longestMs - this.#timeoutMs;
      const next = afterRefusal(rec, inference, refusedAt, this.#configured, this.#clock.now(), keepSince);
      writeLearned(this.#meta, this.#account, next);
      this.#applyLearned(next);
      this.#useMs = 0;
    }).immediate();
    return inference;
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
    return Math.min(this.#maxHoldMs, Math.max(0, Number(this.#meta.get(this.#holdKey) ?? 0) - now));
  }

  /** Calls of this account started in the last `ms` (for status displays and metrics). */
  callsWithin(ms: number): number {
    return (this.#db.prepare('SELECT count(*) AS n FROM api_calls WHERE account = ? AND t > ?').get(this.#account, this.#now() - ms) as { n: number }).n;
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
