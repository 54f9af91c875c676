/**
 * A batch's figures (rows by state, sent, spent) for every page and the live feed, kept so that
 * showing them does not read a 100,000-row batch again and again (one count takes ~70 ms there,
 * and it runs on the daemon's own thread):
 *  - a finished batch's figures cannot change until it is reopened (a review row resolved), so
 *    they are read once per (finishedAt, result version);
 *  - a running batch's are read again when its rows moved (the runner's events) but at most every
 *    max(1 s, 20 × what the last read took), and every 5 s anyway, since another process on the
 *    home (a `topup submit`) moves rows without telling this one.
 * What is cheap and changes with time (the run state, why it waits) is worked out fresh each time.
 */
import { systemClock } from '../kernel/clock.js';
import type { RunnerEvents } from '../engine/events.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import { FOLLOWED_STATES, IN_FLIGHT_STATES, type RowState } from '../store/row-states.js';
import type { StateCounts } from '../store/rows.js';
import { Pauses } from '../account/pauses.js';
import type { AccountPause } from './layout.js';
import { runState, snapshot, waitingWhy, type BatchProgressSnapshot, type RunState } from '../ops/batch-view.js';

const sum = (c: StateCounts, states: readonly RowState[]): number => states.reduce((n, st) => n + c[st], 0);

const MIN_AGE_MS = 1_000;
const MAX_AGE_MS = 5_000;
const KEPT = 2_000;

interface Entry {
  key: string;
  at: number;
  costMs: number;
  s: BatchProgressSnapshot;
}

/** A batch's figures as every page shows them (the live feed adds the time left: live.ts). */
export interface Figures {
  id: string;
  file: string;
  state: RunState;
  why: string;
  rows: number;
  sent: number;
  done: number;
  /** pending · in flight (sending, resending) · followed (verifying … unseen) · and the ends. */
  counts: Record<'pending' | 'inFlight' | 'followed' | 'completed' | 'cancelled' | 'rejected' | 'invalid' | 'skipped' | 'review', number>;
  spentUsd: number;
  finished: boolean;
  cancelRequested: boolean;
}

export class FiguresCache {
  readonly #rt: Pick<Runtime, 'rows' | 'accounts'>;
  readonly #entries = new Map<string, Entry>();
  readonly #dirty = new Set<string>();
  #off: (() => void) | null = null;

  constructor(rt: Pick<Runtime, 'rows' | 'accounts'>) {
    this.#rt = rt;
  }

  follow(runner: RunnerEvents): void {
    const moved = (m: { batchId: string }): void => void this.#dirty.add(m.batchId);
    runner.on('row-moved', moved);
    this.#off = () => runner.off('row-moved', moved);
  }

  close(): void {
    this.#off?.();
    this.#entries.clear();
  }

  #snapshot(b: Batch, now: number): BatchProgressSnapshot {
    const finished = b.finishedAt !== null || b.state === 'failed';
    const key = finished ? `${b.state}:${b.finishedAt}:${b.resultVersion}` : 'running';
    const e = this.#entries.get(b.id);
    if (e && e.key === key) {
      const age = now - e.at;
      const fresh = finished || (this.#dirty.has(b.id) ? age < Math.max(MIN_AGE_MS, 20 * e.costMs) : age < MAX_AGE_MS);
      if (fresh) return e.s;
    }
    const started = performance.now();
    const s = snapshot(this.#rt.rows, b.id);
    this.#dirty.delete(b.id);
    this.#entries.delete(b.id);
    this.#entries.set(b.id, { key, at: now, costMs: performance.now() - started, s });
    if (this.#entries.size > KEPT) this.#entries.delete(this.#entries.keys().next().value!);
    return s;
  }

  /**
   * The pause that holds this batch back: with one account, that account's; with several, the
   * pause of an account the batch's unsent rows are on (one grouped read, only while some account
   * is paused). Before, every page read the `default` account's pause alone, which a home with
   * accounts.toml does not have: a batch whose rows waited on a paused account showed "running"
   * and no reason on its page and in the list, while the Overview said it waited (a trial walk).
   */
  pauseFor(b: Batch, pauses: readonly AccountPause[]): AccountPause | null {
    if (pauses.length === 0 || b.finishedAt !== null || b.state === 'failed') return null;
    if (this.#rt.accounts.length === 1) return pauses[0]!;
    const on = this.#rt.rows.unsentByAccount(b.id);
    return pauses.find((p) => on.has(p.account)) ?? null;
  }

  get(b: Batch, pauses: readonly AccountPause[], now = systemClock.now()): Figures {
    const s = this.#snapshot(b, now);
    const c = s.counts;
    const held = this.pauseFor(b, pauses);
    const pause = held?.pause ?? null;
    // With several accounts the reason names the account (the pause banner does too).
    const several = this.#rt.accounts.length > 1;
    const onAccount = held && several
      ? held.pause.kind === 'account'
        ? `sending stopped on account ${held.account}: account problem ${held.pause.code} (${held.pause.detail})`
        : held.pause.kind === 'operator'
          ? `sending paused by the operator on account ${held.account}`
          : `sending paused by the API on account ${held.account}: ${held.pause.code}`
      : '';
    // The console is served by the daemon: a batch no process holds yet is queued for it.
    const why = waitingWhy(b, several ? null : pause, now, { pid: process.pid });
    return {
      id: b.id,
      file: b.sourceName,
      state: runState(b, pause, now),
      why: [onAccount, why].filter((x) => x !== '').join('; '),
      rows: s.rows,
      sent: s.sent,
      done: s.done,
      counts: {
        pending: c.pending, inFlight: sum(c, IN_FLIGHT_STATES), followed: sum(c, FOLLOWED_STATES),
        completed: c.completed, cancelled: c.cancelled, rejected: c.rejected, invalid: c.invalid, skipped: c.skipped, review: c.review,
      },
      spentUsd: s.spentUsd,
      finished: b.finishedAt !== null || b.state === 'failed',
      cancelRequested: b.cancelRequested,
    };
  }
}

/** Every account's pause in force, in the order of the accounts (the banner and the batches read it). */
export function accountPauses(rt: Pick<Runtime, 'accounts' | 'meta'>): AccountPause[] {
  return rt.accounts.flatMap((a) => {
    const pause = Pauses.read(rt.meta, a.id);
    return pause ? [{ account: a.id, pause }] : [];
  });
}
