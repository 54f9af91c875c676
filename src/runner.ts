/**
 * One process's engine: takes batches (claim → store), funds them, sends their rows through the
 * rate-limited queue, follows placed orders, and writes the outbox once a batch has ended.
 * The daemon, `topup daemon --once` and `topup submit` all drive batches through a Runner.
 *
 * Everything it decides on lives in the store, so a Runner started after a kill simply carries
 * on: `sending` rows are resent with their stored body, `processing` rows are polled, finished
 * batches whose files were not written are written.
 */
import { EventEmitter, setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Priority } from './api/client.js';
import { coerceError } from './errors.js';
import type { Runtime } from './runtime.js';
import type { Batch } from './store/batches.js';
import { FINAL_ROW_STATES, type StateCounts } from './store/rows.js';
import { claimFile, recoverClaims, LEASE_MS } from './claim/claim.js';
import { keepLeases, ownerIsDead } from './store/owner.js';
import { loadBatch } from './claim/load.js';
import { FundsGate } from './dispatch/funds.js';
import { Pauses, type PauseKind } from './dispatch/pauses.js';
import { sendRow } from './dispatch/sender.js';
import { Poller } from './poll/poller.js';
import { verifyRow } from './poll/verify.js';
import { finishBatch } from './outbox/finish.js';
import { PartialResults } from './outbox/partial.js';
import { removeStaleTemps } from './outbox/atomic-write.js';
import type { BatchSummary } from './outbox/summary.js';
import type { SendScope } from './store/row-reads.js';

export interface RunnerEvents {
  'batch-finished': [summary: BatchSummary, batch: Batch];
  'balance-wait': [batch: Batch, detail: string];
  pause: [kind: PauseKind, code: string, detail: string];
  resume: [kind: PauseKind];
  progress: [batch: Batch, counts: StateCounts];
}

export interface RunnerOptions {
  /** Stop once nothing is left to do (daemon --once, submit). */
  once?: boolean;
  /** Drive only this batch (topup submit); otherwise every batch nobody else holds. */
  onlyBatch?: string;
  /** How long a graceful stop waits for calls in flight. */
  stopGraceMs?: number;
}

const RENEW_EVERY_MS = 5_000;
const IDLE_LOOK_MS = 30_000;
const PROGRESS_EVERY_MS = 10_000;
const CATALOG_RETRY_MS = 10_000;

export class Runner extends EventEmitter<RunnerEvents> {
  readonly #rt: Runtime;
  readonly #opts: RunnerOptions;
  readonly #pauses: Pauses;
  readonly #poller: Poller;
  readonly #inflight = new Map<string, Promise<void>>();
  readonly #claimQueue: string[] = [];
  readonly #abort = new AbortController();
  readonly #funds: FundsGate;
  readonly #nextLoadTry = new Map<string, number>();
  readonly #partials = new PartialResults();
  #polling: Promise<void> | null = null;
  #stopping = false;
  #wake: (() => void) | null = null;
  #lastRenew = 0;
  #lastProgress = 0;
  /** Batches that were allowed to send at the last step, and the in-flight cap then. */
  #scope: SendScope = { newOrders: [], resendsOnly: [] };
  #cap = 1;
  /** Set when a step changed something the next step must act on at once (a batch loaded). */
  #again = false;

  constructor(rt: Runtime, opts: RunnerOptions = {}) {
    super();
    this.#rt = rt;
    this.#opts = opts;
    this.#pauses = new Pauses(rt.meta, Math.min(Math.max(rt.config.pollIntervalMs * 6, 2_000), 60_000));
    this.#poller = new Poller(rt);
    const recheckMs = Math.min(Math.max(rt.config.pollIntervalMs * 3, 1_000), 60_000);
    this.#funds = new FundsGate(rt, recheckMs, (batch, detail) => this.emit('balance-wait', batch, detail));
    // Every call in flight listens on this one signal (for a bounded stop).
    setMaxListeners(0, this.#abort.signal);
  }

  get pauses(): Pauses {
    return this.#pauses;
  }

  /** A settled file in the inbox (from the watcher). */
  offerFile(path: string): void {
    if (!this.#claimQueue.includes(path)) this.#claimQueue.push(path);
    this.#wakeUp();
  }

  /** Graceful: no new sends; calls in flight may finish (bounded); leases are released. */
  stop(): void {
    this.#stopping = true;
    this.#wakeUp();
  }

  async run(): Promise<void> {
    recoverClaims(this.#rt);
    removeStaleTemps(this.#rt.config.outboxDir);
    // Leases are renewed on their own clock: a step waiting on the API (a long Retry-After, a full
    // window) must not let another process take batches this one is still driving.
    const stopRenewing = keepLeases(this.#rt, LEASE_MS, RENEW_EVERY_MS);
    try {
      while (!this.#stopping) {
        const idle = await this.#step();
        if (idle && this.#opts.once) break;
        await this.#sleepUntilNext();
      }
    } finally {
      stopRenewing();
      await this.#drain();
    }
  }

  async #drain(): Promise<void> {
    const grace = this.#opts.stopGraceMs ?? 8_000;
    const pending = [...this.#inflight.values(), ...(this.#polling ? [this.#polling] : [])];
    const cancelTimer = new AbortController();
    const timer = sleep(grace, 'timeout' as const, { signal: cancelTimer.signal }).catch(() => 'done' as const);
    const outcome = await Promise.race([Promise.allSettled(pending).then(() => 'done' as const), timer]);
    cancelTimer.abort();
    if (outcome === 'timeout') this.#abort.abort();
    await Promise.allSettled(pending);
    this.#rt.batches.releaseAll(this.#rt.owner);
  }

  /** One pass over everything. Returns true when there is nothing left to do. */
  async #step(): Promise<boolean> {
    const rt = this.#rt;
    const now = Date.now();
    if (now - this.#lastRenew >= RENEW_EVERY_MS) {
      rt.batches.renewAll(rt.owner, now, LEASE_MS);
      this.#lastRenew = now;
    }
    await this.#claimQueued();
    this.#adopt(now);

    for (const b of rt.batches.ownedBy(rt.owner)) {
      // A batch just stored (or a duplicate just written) changes what the next step does: go again at once.
      if (b.state === 'claimed' && (await this.#load(b))) this.#again = true;
      else if (b.state === 'duplicate') await this.#finish(b);
    }
    const open = rt.batches.ownedBy(rt.owner).filter((b) => b.state === 'open');
    for (const b of open) {
      if (!b.cancelRequested) continue;
      rt.rows.skipPending(b.id, Date.now());
      if (b.waitReason === 'balance') rt.batches.setWait(b.id, null, null); // nothing left to fund
    }

    await this.#probeAccount();
    this.#scope = await this.#funds.sendable(open, this.#pauses.canPoll(Date.now()));
    this.#dispatch(this.#scope);
    // Polls give way (half as often) only while orders are actually waiting to be sent.
    this.#poll(open.map((b) => b.id), rt.rows.countUnsent(this.#scope.newOrders) > 0);

    let unfinished = 0;
    for (const b of open) {
      const counts = rt.rows.counts(b.id);
      const live = counts.pending + counts.sending + counts.processing + counts.verifying;
      if (live === 0 && ![...this.#inflight.keys()].some((k) => k.startsWith(`${b.id}#`))) await this.#finish(b);
      else {
        unfinished++;
        await this.#partials.update(rt, b, counts); // throttled inside: mostly returns at once
      }
      if (Date.now() - this.#lastProgress >= PROGRESS_EVERY_MS) this.#progress(b, counts);
    }
    if (Date.now() - this.#lastProgress >= PROGRESS_EVERY_MS) this.#lastProgress = Date.now();

    // Idle only when no batch is left unfinished anywhere: one held by another live process
    // (topup submit, a daemon) is waited for, since --once promises every row reaches its end.
    const left = this.#opts.onlyBatch
      ? rt.batches.get(this.#opts.onlyBatch)?.finishedAt === null
      : rt.batches.unfinished().length > 0;
    return unfinished === 0 && !left && this.#claimQueue.length === 0 && this.#inflight.size === 0 && this.#polling === null;
  }

  async #claimQueued(): Promise<void> {
    while (this.#claimQueue.length > 0 && !this.#stopping) {
      const path = this.#claimQueue.shift()!;
      try {
        await claimFile(this.#rt, path);
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'ENOENT') continue; // taken by another process, or removed by the user
        this.#rt.log.error({ file: path, err: coerceError(err) }, 'could not claim a file');
      }
    }
  }

  #adopt(now: number): void {
    const rt = this.#rt;
    const candidates = this.#opts.onlyBatch ? [rt.batches.get(this.#opts.onlyBatch)].filter((b) => b !== undefined) : rt.batches.unfinished();
    for (const b of candidates) {
      if (b.owner === rt.owner || b.finishedAt !== null) continue;
      const taken =
        rt.batches.acquire(b.id, rt.owner, now, LEASE_MS) ||
        (b.owner !== null && ownerIsDead(b.owner) && rt.batches.takeOver(b.id, rt.owner, b.owner, now, LEASE_MS));
      if (!taken) continue;
      // Requests of the previous owner died with it: resend its rows in doubt at once.
      if (b.owner !== null) rt.rows.resendNow(b.id);
      rt.log.info({ batch: b.id, file: b.sourceName, previousOwner: b.owner }, 'took batch');
    }
  }

  /** Parses, validates and stores a claimed batch. True when its state changed. */
  async #load(b: Batch): Promise<boolean> {
    if ((this.#nextLoadTry.get(b.id) ?? 0) > Date.now() || !this.#pauses.canPoll(Date.now())) return false;
    try {
      const outcome = await loadBatch(this.#rt, b);
      if (outcome.loaded || outcome.reason !== 'catalog') return true;
      this.#rt.log.warn({ batch: b.id, why: outcome.message }, 'batch waits for the catalog');
    } catch (err) {
      // Not the file's fault (it would be a file error): keep the daemon up and try again.
      this.#rt.log.error({ batch: b.id, err: coerceError(err) }, 'could not store the batch; will try again');
    }
    this.#nextLoadTry.set(b.id, Date.now() + CATALOG_RETRY_MS);
    return false;
  }

  async #finish(b: Batch): Promise<void> {
    try {
      const summary = await finishBatch(this.#rt, this.#rt.batches.get(b.id)!);
      this.emit('batch-finished', summary, b);
    } catch (err) {
      this.#rt.log.error({ batch: b.id, err: coerceError(err) }, 'could not write the results; will try again');
    }
  }

  #dispatch(scope: SendScope): void {
    const rt = this.#rt;
    const now = Date.now();
    if (this.#stopping || !this.#pauses.canSend(now)) return;
    // While paused, one order at a time probes whether the pause is over.
    const cap = this.#pauses.current ? 1 : rt.config.maxInFlight;
    this.#cap = cap;
    if (this.#inflight.size >= cap) return;
    const candidates = rt.rows.sendable(scope, now, cap + this.#inflight.size);
    for (const row of candidates) {
      if (this.#inflight.size >= cap) break;
      const key = `${row.batchId}#${row.idx}`;
      if (this.#inflight.has(key)) continue;
      const p = sendRow(
        {
          rt,
          pauses: this.#pauses,
          onBalanceShort: (batchId, detail) => this.#funds.short(batchId, detail),
          onPause: (kind, code, detail) => {
            rt.log.error({ pause: kind, code, detail }, kind === 'account' ? 'sending stopped: account problem' : 'sending paused by the API');
            this.emit('pause', kind, code, detail);
          },
        },
        row,
        this.#abort.signal,
      )
        .then(() => undefined)
        .catch((err: unknown) => rt.log.error({ batch: row.batchId, line: row.line, err: coerceError(err) }, 'send failed unexpectedly'))
        .finally(() => {
          this.#inflight.delete(key);
          this.#wakeUp();
        });
      this.#inflight.set(key, p);
    }
  }

  #poll(batchIds: readonly string[], sendBacklog: boolean): void {
    const rt = this.#rt;
    if (this.#polling || this.#stopping || !this.#pauses.canPoll(Date.now())) return;
    const due = rt.rows.duePolls(batchIds, Date.now(), 2_000);
    if (due.length === 0) return;
    this.#polling = (async () => {
      const verifying = due.filter((r) => r.state === 'verifying');
      for (const row of verifying) await verifyRow(rt, row, this.#abort.signal);
      const processing = due.filter((r) => r.state === 'processing');
      await this.#poller.round(processing, rt.rows.countProcessing(batchIds), sendBacklog, this.#abort.signal);
    })()
      .catch((err: unknown) => {
        const e = coerceError(err);
        rt.log.warn({ err: e.message }, 'polling failed; will try again');
        for (const r of due) if (r.nextPollAt <= Date.now()) rt.rows.schedulePoll(r.batchId, r.idx, Date.now() + rt.config.pollIntervalMs);
      })
      .finally(() => {
        this.#polling = null;
        this.#wakeUp();
      });
  }

  async #probeAccount(): Promise<void> {
    const p = this.#pauses.current;
    if (!p || p.kind !== 'account' || Date.now() < p.retryAt) return;
    try {
      await this.#rt.client.balance({ priority: Priority.lookup });
      this.#pauses.clear();
      this.#rt.log.info({ code: p.code }, 'account problem cleared: sending resumes');
      this.emit('resume', 'account');
    } catch (err) {
      const e = coerceError(err);
      this.#pauses.pause('account', p.code, e.message, Date.now());
    }
  }

  #progress(b: Batch, counts: StateCounts): void {
    const done = FINAL_ROW_STATES.reduce((n, s) => n + counts[s], 0);
    this.#rt.log.info({ batch: b.id, file: b.sourceName, counts, done, waiting: b.waitReason }, 'progress');
    this.emit('progress', b, counts);
  }

  async #sleepUntilNext(): Promise<void> {
    if (this.#stopping) return;
    if (this.#again) {
      this.#again = false;
      return;
    }
    const rt = this.#rt;
    const ids = rt.batches.ownedBy(rt.owner).map((b) => b.id);
    const now = Date.now();
    // With nothing to drive, wake rarely: new files wake us through offerFile(), and a batch left
    // by a process that died is found at the next idle look.
    const busy = ids.length > 0 || this.#claimQueue.length > 0 || rt.batches.unfinished().length > 0;
    const candidates = [now + (busy ? RENEW_EVERY_MS : IDLE_LOOK_MS)];
    // Sends finishing wake us up; a timer is only needed for rows waiting out a back-off.
    const t1 = this.#inflight.size < this.#cap ? rt.rows.nextTryAt(this.#scope) : undefined;
    if (t1 !== undefined && this.#pauses.canSend(now)) candidates.push(t1);
    const t2 = rt.rows.nextPollAt(ids);
    if (t2 !== undefined && !this.#polling && this.#pauses.canPoll(now)) candidates.push(t2);
    const pause = this.#pauses.current;
    if (pause && pause.retryAt > now) candidates.push(pause.retryAt);
    for (const t of this.#funds.nextChecks()) if (t > now) candidates.push(t);
    const wait = Math.max(5, Math.min(...candidates) - now);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, wait);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.#wake = null;
        resolve();
      }
      this.#wake = done;
    });
  }

  #wakeUp(): void {
    if (this.#wake) this.#wake();
    else this.#again = true;
  }
}
