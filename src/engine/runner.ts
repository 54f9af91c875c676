/**
 * One process's engine. The daemon, `topup daemon --once` and `topup submit` all drive batches
 * through a Runner: a loop over the stages of the flow,
 *
 *   leases → intake (claim, store) → funding → dispatch → polling → finishing
 *
 * each doing what is due and saying when it next has work (stage.ts); the runner sleeps until the
 * earliest of those, or until a background job (a send, a poll round) wakes it. Everything the
 * stages decide on lives in the store, so a Runner started after a kill simply carries on.
 *
 * Typed events (events.ts) report what happened; snapshot() tells the live state, for the
 * console, /metrics and progress views. A stop is bounded: no new work, calls in flight may
 * finish for `stopGraceMs`, then they are aborted; the leases are released.
 */
import { isStoreUnwritable } from '../dispatch/store-health.js';
import { EventEmitter, setMaxListeners } from 'node:events';
import { ApiError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import type { Clock } from '../kernel/clock.js';
import { recoverClaims } from '../claim/claim.js';
import { keepLeases, LEASE_MS } from '../store/owner.js';
import { AccountPauses } from './account-pauses.js';
import { removeStaleTemps } from '../outbox/atomic-write.js';
import type { RunnerEventMap, RunnerSnapshot, RunnerView } from './events.js';
import type { EngineContext, Stage, StepBatches } from './stage.js';
import { LeaseStage } from './stages/leases.js';
import { IntakeStage } from './stages/intake.js';
import { FundingStage } from './stages/funding.js';
import { DispatchStage } from './stages/dispatch.js';
import { PollingStage } from './stages/polling.js';
import { FinishingStage } from './stages/finishing.js';
import { apiBatchOpenForOrders } from '../orders/api-batch.js';
import { HistoryCache, lookUpClaims, lookUpOrders, reconcileIfRestored } from '../ops/restore-reconcile.js';
import { pruneKeptHistories } from '../ops/restore-history-prune.js';
import { coerceError } from '../kernel/errors.js';
import { claimLookups, hasOrderLookups, orderLookups } from '../store/backup.js';

export type { RunnerEventMap, RunnerEvents, RunnerSnapshot, RunnerView } from './events.js';

export interface RunnerOptions {
  /** Stop once nothing is left to do (daemon --once, submit). */
  once?: boolean;
  /** Drive only this batch (topup submit); otherwise every batch nobody else holds. */
  onlyBatch?: string;
  /** How long a graceful stop waits for calls in flight. */
  stopGraceMs?: number;
  clock?: Clock;
  /** The daemon's: accepts the journal's API orders again during the reconcile after a restore (ops/restore-reconcile.ts). */
  recoverJournal?: () => Promise<unknown>;
}

const RENEW_EVERY_MS = 5_000;
/**
 * Longest sleep while batches run (so a batch another process left is found soon) and while idle.
 * The first is what `topup cancel` and `topup run-covered` promise: the process running a batch
 * reads a word given for it at its next step, at most this long after the last one ended.
 */
export const BUSY_SLEEP_MS = 5_000;
const IDLE_SLEEP_MS = 30_000;
/** A lookup of files claimed after a restore that could not read every account: tried again after this. */
const RETRY_CLAIMS_MS = 15_000;
/** How often the loop asks whether the histories kept for a restore window can go (ops/restore-history-prune.ts). */
const PRUNE_HISTORIES_MS = 60_000;
/**
 * While answers pour in, the background jobs (a send or a poll round ending, a file stored) wake
 * the runner at most once per this many ms, counted from the start of the last step: one step then
 * takes every answer of those ms. Each send's end used to start a step of its own (about one per
 * answer at 400 orders/s: the step's reads, the restore-window look, the next-due reads and the
 * sleep's abort, per order; a profile put the loop at ~1.3 CPU-ms per order). A wake from outside
 * the loop (an order of the order API, a file in the inbox, the console, a stop) is never held: a
 * lone order after a quiet spell goes at once. The cost is a freed in-flight slot waiting at most
 * this long, while TOPUP_MAX_IN_FLIGHT (32) slots turn over every ~80 ms at 400/s.
 */
export const STEP_GAP_MS = 5;
/** The reason a sleep is cut short by a wake: a constant, so no DOMException is built per wake. */
const WOKEN = Symbol('woken');

export class Runner extends EventEmitter<RunnerEventMap> implements RunnerView {
  readonly #rt: Runtime;
  readonly #opts: RunnerOptions;
  readonly #clock: Clock;
  /** Each account's pause (one account's trouble never stops another's orders). */
  readonly #pauses: AccountPauses;
  /** Every call in flight listens on this one signal (for a bounded stop). */
  readonly #abort = new AbortController();
  readonly #leases: LeaseStage;
  readonly #intake: IntakeStage;
  readonly #funding: FundingStage;
  readonly #dispatch: DispatchStage;
  readonly #polling: PollingStage;
  readonly #finishing: FinishingStage;
  /** In the order they run each step. */
  readonly #stages: readonly Stage[];
  /** What to undo on the way out (listeners on the shared store and client), last first. */
  readonly #releasers: (() => void)[] = [];
  #stopping = false;
  #claimsRetryAt = 0;
  /** Cuts the current sleep short; `now`: a wake from outside the loop (never held by STEP_GAP_MS). */
  #wake: ((now: boolean) => void) | null = null;
  /**
   * Set when something woke the runner while it was not asleep: the next sleep is skipped ('now'),
   * or shortened to the rest of STEP_GAP_MS ('soon', a background job's).
   */
  #again: false | 'soon' | 'now' = false;
  /** Monotonic time the last step began (STEP_GAP_MS is counted from it). */
  #stepAt = Number.NEGATIVE_INFINITY;
  /** API orders accepted in the window after a restore: their lookup, running beside the loop (one at a time). */
  #ordersLookup: Promise<void> | null = null;
  #ordersRetryAt = 0;
  readonly #histories = new HistoryCache();
  #historiesPruneAt = 0;

  constructor(rt: Runtime, opts: RunnerOptions = {}) {
    super();
    this.#rt = rt;
    this.#opts = opts;
    this.#clock = opts.clock ?? rt.clock;
    this.#pauses = new AccountPauses(rt.accounts, this.#clock);
    setMaxListeners(0, this.#abort.signal);
    const e: EngineContext = {
      rt,
      clock: this.#clock,
      pauses: this.#pauses,
      emit: (name, ...args) => void this.emit(name, ...(args as never)),
      signal: this.#abort.signal,
      stopping: () => this.#stopping,
      wake: () => this.#wakeUp(false),
      onlyBatch: opts.onlyBatch,
      accountProblem: (err, account) => this.#accountProblem(err, account),
      handBack: (why) => this.#handBack(why),
    };
    this.#leases = new LeaseStage(e);
    this.#intake = new IntakeStage(e);
    this.#funding = new FundingStage(e);
    this.#dispatch = new DispatchStage(e, this.#funding);
    this.#polling = new PollingStage(e, () => rt.rows.countUnsent(this.#funding.scope.newOrders) > 0);
    this.#finishing = new FinishingStage(e, (id) => this.#dispatch.inFlightFor(id));
    this.#stages = [this.#leases, this.#intake, this.#funding, this.#dispatch, this.#polling, this.#finishing];
    this.#releasers.push(
      rt.rows.onMove((batchId, idx, event, to, money) => this.emit('row-moved', { batchId, idx, event, to, money })),
      ...rt.accounts.map((a) => a.onCall((call) => this.emit('call', call))),
    );
  }

  get pauses(): AccountPauses {
    return this.#pauses;
  }

  /**
   * A settled file in the inbox (from the watcher). `hash`: the bytes it settled with; the claim
   * takes the file only while it still has them (claim.ts).
   */
  offerFile(path: string, hash?: string): void {
    this.#intake.offer(path, hash);
    this.#wakeUp(true);
  }

  /** Something changed in the store outside the loop (a cancel or a retry from the console): look now. */
  wake(): void {
    this.#wakeUp(true);
  }

  /** Graceful: no new sends; calls in flight may finish (bounded); leases are released. */
  stop(): void {
    this.#stopping = true;
    this.#wakeUp(true);
  }

  async run(): Promise<void> {
    // The warm standby's fence (standby/fence.ts): a home taken over by another node runs nothing
    // that can send (E_FENCED), whichever command runs the runner (daemon, submit, retry --run).
    this.#rt.fence?.claim(this.#clock.now());
    await recoverClaims(this.#rt);
    removeStaleTemps(this.#rt.config.outboxDir);
    // Leases are renewed on their own clock, the one place they are: a step waiting on the API
    // (a long Retry-After, a full window) must not let another process take batches this one drives.
    // On the same timer, the home's wall-clock mark (store/wall-mark.ts): a step back found there
    // moves the stored waits back by it, and the runner looks again at once.
    this.#releasers.push(keepLeases(this.#rt, LEASE_MS, RENEW_EVERY_MS, (now) => {
      if (this.#leases.markWallClock(now) !== null) this.#wakeUp(false);
    }));
    try {
      // A store restored from a copy (its meta says so: ops/restore-reconcile.ts) is reconciled
      // with every supplier account before the loop below starts, so nothing is sent before every
      // open row has been looked up under each trxid it may have been bought under. It returns
      // only once done, or when the runner stops (then the next start reconciles).
      await reconcileIfRestored(this.#rt, { signal: this.#abort.signal, stopping: () => this.#stopping, ...(this.#opts.recoverJournal ? { recoverJournal: this.#opts.recoverJournal } : {}) });
      while (!this.#stopping) {
        this.#pruneHistories();
        // Files claimed in the window after a restore (store/backup.ts markClaimInRestoreWindow):
        // their rows are looked up at every account before any of them is sent (the store refuses
        // their intents until then; the dispatch stage leaves them out). Other batches go on. An
        // account that cannot be read: tried again in RETRY_CLAIMS_MS.
        if (this.#clock.now() >= this.#claimsRetryAt) {
          try {
            await lookUpClaims(this.#rt, this.#abort.signal, this.#histories);
          } catch (err) {
            this.#claimsRetryAt = this.#clock.now() + RETRY_CLAIMS_MS;
            this.#rt.log.warn({ err: coerceError(err).message, againInMs: RETRY_CLAIMS_MS }, 'files claimed after a restore could not be looked up at every account yet: nothing of them is sent until they are');
          }
        }
        this.#startOrderLookup();
        let batches: StepBatches;
        this.#stepAt = this.#clock.mono();
        try {
          batches = await this.#step();
        } catch (err) {
          // The store cannot be written (disk full, read-only, gone: dispatch/store-health.ts): a
          // pause, not an end and not a spin. Nothing is sent until the back-off ends; then a step
          // tries again, and work resumes by itself once a write succeeds.
          if (!isStoreUnwritable(err)) throw err;
          const store = this.#dispatch.store;
          store.failed(err, this.#clock.now(), this.#clock.mono());
          await this.#sleepFor(Math.max(5, (store.blockedUntil ?? this.#clock.mono()) - this.#clock.mono()));
          continue;
        }
        if (this.#opts.once && this.#idle()) break;
        // A file claimed in this step after a restore: looked up now, not after the idle sleep.
        if (this.#clock.now() >= this.#claimsRetryAt && this.#claimsDue()) continue;
        await this.#sleepUntilNext(batches);
      }
    } finally {
      await this.#drain();
      for (const release of this.#releasers.splice(0).reverse()) release();
    }
  }

  /**
   * `batches: false` leaves out the batches this process runs (their counts are one lookup each,
   * from the counters): for a view that wants only the runner's own figures.
   */
  snapshot(opts: { batches?: boolean } = {}): RunnerSnapshot {
    const rt = this.#rt;
    const mine = opts.batches === false ? [] : rt.batches.ownedBy(rt.owner);
    return {
      at: this.#clock.now(),
      owner: rt.owner,
      stopping: this.#stopping,
      pause: this.#pauses.current,
      rate: {
        lastSecond: rt.account.scheduler.callsWithin(1_000),
        lastMinute: rt.account.scheduler.callsWithin(60_000),
        limits: rt.account.scheduler.windows,
        holdMs: rt.account.scheduler.holdRemainingMs(),
        waitingCalls: rt.account.scheduler.waiting,
      },
      inFlight: this.#dispatch.inFlight,
      storeDown: this.#dispatch.store.down,
      balance: this.#funding.lastBalance,
      queuedFiles: this.#intake.queued,
      batches: mine.map((b) => ({
        id: b.id, file: b.sourceName, state: b.state, waitReason: b.waitReason, waitDetail: b.waitDetail, cancelRequested: b.cancelRequested,
        counts: rt.rows.counts(b.id), inFlight: this.#dispatch.inFlightFor(b.id),
      })),
    };
  }

  /**
   * API orders accepted in the window after a restore (store/backup.ts markOrderInRestoreWindow):
   * looked up beside the loop, not in it, so the other batches' sends and polls go on while the
   * histories are read; the orders themselves are held by the store until their lookup is done.
   * It wakes the loop when it ends (its orders may be sent now, or more came in meanwhile).
   */
  #startOrderLookup(): void {
    if (this.#ordersLookup !== null || this.#stopping || this.#clock.now() < this.#ordersRetryAt) return;
    if (!hasOrderLookups(this.#rt.db)) return;
    const owned = new Set(this.#rt.batches.ownedBy(this.#rt.owner).map((b) => b.id));
    if (!orderLookups(this.#rt.db).some((o) => owned.has(o.batchId))) return;
    this.#ordersLookup = lookUpOrders(this.#rt, this.#histories, this.#abort.signal)
      .then(
        () => undefined,
        (err: unknown) => {
          this.#ordersRetryAt = this.#clock.now() + RETRY_CLAIMS_MS;
          if (!this.#abort.signal.aborted) this.#rt.log.warn({ err: coerceError(err).message, againInMs: RETRY_CLAIMS_MS }, 'API orders accepted after a restore could not be looked up at every account yet: they are not sent until they are');
        },
      )
      .finally(() => {
        this.#ordersLookup = null;
        this.#wakeUp(false);
      });
  }

  /**
   * The account histories kept for the window after a restore, once it is over and no lookup is
   * left (ops/restore-history-prune.ts): from the store, and from memory when no lookup of this
   * process is running. Never a reason to stop: tried again at the next interval.
   */
  #pruneHistories(): void {
    const now = this.#clock.now();
    if (now < this.#historiesPruneAt) return;
    this.#historiesPruneAt = now + PRUNE_HISTORIES_MS;
    try {
      const gone = pruneKeptHistories(this.#rt.db, now);
      if (gone === 0) return;
      if (this.#ordersLookup === null) this.#histories.forget();
      this.#rt.log.info({ readings: gone }, 'restore window over: the account histories kept for its lookups were removed from the store');
    } catch (err) {
      if (isStoreUnwritable(err)) return;
      this.#rt.log.warn({ err: coerceError(err).message }, 'the account histories kept for a restore window could not be removed now; tried again later');
    }
  }

  /** Batches of this process claimed after a restore, loaded and waiting for their lookup (ops/restore-reconcile.ts lookUpClaims). */
  #claimsDue(): boolean {
    const held = claimLookups(this.#rt.db);
    if (held.length === 0) return false;
    const open = new Set(this.#rt.batches.ownedBy(this.#rt.owner).filter((b) => b.state === 'open').map((b) => b.id));
    return held.some((c) => open.has(c.batchId));
  }

  /** One pass over every stage. */
  async #step(): Promise<StepBatches> {
    let batches = this.#batches();
    for (const stage of this.#stages) {
      // Leases and intake change which batches are ours and open: read again for the rest when they say so.
      if ((await stage.tick(this.#clock.now(), batches)) === true) batches = this.#batches();
    }
    return batches;
  }

  #batches(): StepBatches {
    const owned = this.#rt.batches.ownedBy(this.#rt.owner);
    return { owned, open: owned.filter((b) => b.state === 'open') };
  }

  /**
   * Nothing left to do: no batch left unfinished anywhere (one held by another live process is
   * waited for, since --once promises every row reaches its end), nothing queued or in flight.
   */
  #idle(): boolean {
    const rt = this.#rt;
    const now = this.#clock.now();
    // The order API's batch of a day with no order live is not work left: it only waits for orders.
    const left = this.#opts.onlyBatch
      ? rt.batches.get(this.#opts.onlyBatch)?.finishedAt === null
      : rt.batches.unfinished().some((b) => !apiBatchOpenForOrders(b, now) || rt.rows.hasLive(b.id));
    return this.#finishing.unfinished === 0 && !left && this.#intake.queued === 0 && this.#dispatch.inFlight === 0 && !this.#polling.busy;
  }

  async #drain(): Promise<void> {
    const grace = this.#opts.stopGraceMs ?? 8_000;
    const pending = [...this.#stages.flatMap((s) => s.running?.() ?? []), ...(this.#ordersLookup ? [this.#ordersLookup] : [])];
    const cancelTimer = new AbortController();
    const timer = this.#clock.sleep(grace, cancelTimer.signal).then(() => 'timeout' as const, () => 'done' as const);
    const outcome = await Promise.race([Promise.allSettled(pending).then(() => 'done' as const), timer]);
    cancelTimer.abort();
    if (outcome === 'timeout') this.#abort.abort();
    await Promise.allSettled(pending);
    this.#rt.batches.releaseAll(this.#rt.owner);
  }

  /**
   * Batches this process holds and cannot drive (EngineContext.handBack). A runner that stops when
   * done stops: its lease is released (#drain), and the daemon started on the accounts file as it
   * is now takes the batch within seconds (engine/stages/leases.ts); held, it would wait for ever,
   * since no other process takes a batch a live process holds. A daemon is the process that
   * carries batches on: it keeps them and says so (their wait reason, the log), until restarted.
   */
  #handBack(why: string): void {
    if (this.#stopping) return;
    this.#rt.log.error({ why }, this.#opts.once ? 'this process stops and hands its batch back: an account was renamed under it' : 'an account was renamed under this daemon by a process started since: restart it');
    if (this.#opts.once) this.stop();
  }

  /**
   * A 401/403 on any route (a poll, the balance, the catalog) means the account cannot work now:
   * its sending and calls stop, as a refused order does, until a probe succeeds. Other accounts go on.
   */
  #accountProblem(err: ApiError, account: string): void {
    const code = err.codeOrStatus;
    if (this.#pauses.of(account).pause('account', code, err.reason)) {
      this.#rt.log.error({ account, pause: 'account', code, detail: err.reason }, 'sending stopped: account problem');
      this.emit('pause', 'account', code, err.reason, account);
    }
  }

  /**
   * Sleeps `ms` on the clock, cut short by a stop or a wake (with `urgentOnly`, by a wake from
   * outside the loop only). Says whether a background job woke it, and none from outside.
   */
  async #sleepFor(ms: number, urgentOnly = false): Promise<'soon' | 'now' | 'slept'> {
    if (this.#stopping) return 'now';
    const woken = new AbortController();
    let by: 'soon' | 'now' | 'slept' = 'slept';
    this.#wake = (now) => {
      if (now) by = 'now';
      else if (by === 'slept') by = 'soon';
      if (now || !urgentOnly) woken.abort(WOKEN);
    };
    try {
      await this.#clock.sleep(ms, woken.signal);
    } catch {
      // woken
    } finally {
      this.#wake = null;
    }
    return by;
  }

  /** A background job woke the runner: the next step begins no sooner than STEP_GAP_MS after the last one began. */
  async #holdForGap(): Promise<void> {
    const left = this.#stepAt + STEP_GAP_MS - this.#clock.mono();
    if (left > 0) await this.#sleepFor(left, true);
  }

  async #sleepUntilNext(batches: StepBatches): Promise<void> {
    if (this.#stopping) return;
    if (this.#again) {
      const soon = this.#again === 'soon';
      this.#again = false;
      if (soon) await this.#holdForGap();
      return;
    }
    const now = this.#clock.now();
    const busy = batches.owned.length > 0 || this.#intake.queued > 0;
    let until = now + (busy ? BUSY_SLEEP_MS : IDLE_SLEEP_MS);
    for (const stage of this.#stages) {
      const due = stage.nextDueAt(now, batches);
      if (due !== undefined) until = Math.min(until, due);
    }
    const wait = Math.max(5, until - now);
    // The sleep is the clock's (a simulated clock decides when it ends); a wake cuts it short.
    if ((await this.#sleepFor(wait)) === 'soon') await this.#holdForGap();
  }

  /** `now`: a wake from outside the loop; otherwise a background job's (held to STEP_GAP_MS while busy). */
  #wakeUp(now: boolean): void {
    if (this.#wake) this.#wake(now);
    else if (now) this.#again = 'now';
    else if (this.#again === false) this.#again = 'soon';
  }
}
