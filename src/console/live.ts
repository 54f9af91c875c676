/**
 * Live progress for the pages (server-sent events on /events): one payload for every open page,
 * computed at most once per interval however many pages are open, and only while one is.
 *
 * The runner's events (a row moved, a batch changed) mark the figures stale; a page is sent new
 * figures at most every MIN_INTERVAL_MS, and less often when computing them takes long (a 100,000
 * row batch): never more than a twentieth of the time goes to it. Every HEARTBEAT_MS the figures
 * are read again anyway, since another process on the home (a `topup submit`) moves rows without
 * telling this one. Each payload is whole (not a difference), so a page that missed one (a slow
 * phone) just takes the next.
 */
import { systemClock } from '../kernel/clock.js';
import type { RunnerEvents } from '../engine/events.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import type { Listing } from '../store/listing.js';
import type { PauseState } from '../account/pauses.js';
import { accountPauses, type Figures, type FiguresCache } from './figures.js';
import type { AccountPause } from './layout.js';
import { etaSeconds } from '../ops/batch-view.js';
import { accountQueues, type AccountQueue } from '../ops/account-views.js';
import type { BalanceWatch } from './balance-watch.js';
import { roundCents } from '../kernel/money.js';

export interface BatchLive extends Figures {
  /** Seconds left, as `topup status` shows them (ops/batch-view.ts etaSeconds); null when unknown. */
  etaSec: number | null;
}

export interface LivePayload {
  at: number;
  pause: PauseState | null;
  reviewRows: number;
  batches: BatchLive[];
  /** Each account's rows waiting and USD reserved (ops/account-views.ts accountQueues, as `topup status`). */
  accounts: AccountQueue[];
  /**
   * Each account's balance as the Overview's Money shows it (balance-watch.ts: the freshest reading
   * of this process) and what is available for new files (balance less reserved, as overview.ts
   * moneyOf): before, only Reserved followed the feed, and Available stood still until a reload
   * (trial s34). Null figures: not read yet.
   */
  money: { account: string; balanceUsd: number | null; availableUsd: number | null }[];
}

const MIN_INTERVAL_MS = 1_000;
const HEARTBEAT_MS = 5_000;
/** Finished batches stay in the feed this long, so a page sees the end of what it follows. */
const KEEP_FINISHED_MS = 10 * 60_000;
const MAX_CLIENTS = 32;

type Send = (p: LivePayload) => Promise<void>;

export class LiveFeed {
  readonly #rt: Pick<Runtime, 'accounts' | 'batches' | 'log' | 'meta' | 'rows'>;
  readonly #listing: Listing;
  readonly #figures: FiguresCache;
  readonly #clients = new Map<number, { send: Send; busy: boolean }>();
  #nextId = 0;
  #dirty = true;
  #last: LivePayload | null = null;
  #lastAt = 0;
  #costMs = 0;
  #timer: NodeJS.Timeout | null = null;
  #off: (() => void) | null = null;

  readonly #balance: Pick<BalanceWatch, 'all'> | null;

  constructor(rt: Pick<Runtime, 'accounts' | 'batches' | 'log' | 'meta' | 'rows'>, listing: Listing, figures: FiguresCache, balance: Pick<BalanceWatch, 'all'> | null = null) {
    this.#rt = rt;
    this.#listing = listing;
    this.#figures = figures;
    this.#balance = balance;
  }

  follow(runner: RunnerEvents): void {
    const stale = (): void => {
      this.#dirty = true;
    };
    runner.on('row-moved', stale);
    runner.on('batch-changed', stale);
    runner.on('pause', stale);
    runner.on('resume', stale);
    this.#off = () => {
      runner.off('row-moved', stale);
      runner.off('batch-changed', stale);
      runner.off('pause', stale);
      runner.off('resume', stale);
    };
  }

  /** Adds a page; null when too many are open (each holds a connection). */
  subscribe(send: Send): (() => void) | null {
    if (this.#clients.size >= MAX_CLIENTS) return null;
    const id = this.#nextId++;
    const client = { send, busy: false };
    this.#clients.set(id, client);
    if (this.#last) this.#deliver(client, this.#last);
    this.#dirty = true;
    this.#schedule(0);
    return () => {
      this.#clients.delete(id);
      if (this.#clients.size === 0 && this.#timer) {
        clearTimeout(this.#timer);
        this.#timer = null;
      }
    };
  }

  close(): void {
    this.#off?.();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#clients.clear();
  }

  #schedule(delay: number): void {
    if (this.#timer || this.#clients.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#tick();
    }, delay);
    this.#timer.unref();
  }

  #tick(): void {
    if (this.#clients.size === 0) return;
    const now = systemClock.now();
    const interval = Math.max(MIN_INTERVAL_MS, 20 * this.#costMs);
    if (this.#dirty || now - this.#lastAt >= HEARTBEAT_MS) {
      const started = performance.now();
      try {
        this.#last = this.compute(now);
        this.#dirty = false;
        this.#lastAt = now;
        for (const c of this.#clients.values()) this.#deliver(c, this.#last);
      } catch (err) {
        this.#rt.log.warn({ err: (err as Error).message }, 'console: could not read live progress');
      }
      this.#costMs = performance.now() - started;
    }
    this.#schedule(interval);
  }

  #deliver(client: { send: Send; busy: boolean }, payload: LivePayload): void {
    // A page still receiving the previous payload skips this one: the next is whole anyway.
    if (client.busy) return;
    client.busy = true;
    client.send(payload).catch(() => undefined).finally(() => {
      client.busy = false;
    });
  }

  /** The figures of unfinished batches and of those finished in the last minutes. */
  compute(now = systemClock.now()): LivePayload {
    const pauses = accountPauses(this.#rt);
    const unfinished = this.#rt.batches.unfinished();
    const finished = this.#listing.finishedSince(now - KEEP_FINISHED_MS, 20).filter((b) => !unfinished.some((u) => u.id === b.id));
    const batches = [...unfinished, ...finished].map((b) => this.#batch(b, pauses, now));
    const accounts = accountQueues(this.#rt, this.#rt.accounts.map((a) => a.id));
    const reserved = new Map(accounts.map((q) => [q.account, q.reservedUsd]));
    const money = (this.#balance?.all() ?? []).map((b) => ({
      account: b.account,
      balanceUsd: b.reading?.usd ?? null,
      availableUsd: b.reading ? roundCents(b.reading.usd - (reserved.get(b.account) ?? 0)) : null,
    }));
    return { at: now, pause: pauses[0]?.pause ?? null, reviewRows: this.#listing.countInState('review'), batches, accounts, money };
  }

  #batch(b: Batch, pauses: readonly AccountPause[], now: number): BatchLive {
    const f = this.#figures.get(b, pauses, now);
    return { ...f, etaSec: f.finished ? 0 : etaSeconds(b, f, this.#figures.pauseFor(b, pauses)?.pause ?? null, now) };
  }
}

