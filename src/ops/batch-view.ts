/**
 * A batch as the operator sees it: how far it is, what it cost so far, who runs it and why it
 * waits. Read from the store only, so `status` works while the API is down.
 */
import { systemClock } from '../kernel/clock.js';
import type { Batch } from '../store/batches.js';
import { FINAL_ROW_STATES, type RowStore, type StateCounts } from '../store/rows.js';
import type { PauseState } from '../account/pauses.js';
import { roundCents } from '../kernel/money.js';

export interface BatchProgressSnapshot {
  rows: number;
  counts: StateCounts;
  /** Rows that have left for the API at least once. */
  sent: number;
  /** Rows that reached an end (completed, cancelled, rejected, invalid, skipped, review). */
  done: number;
  spentUsd: number;
}

/**
 * A batch's progress: its counts (from the counters, or as given by a `progress` event), the rows
 * sent, the rows ended, and what it spent (store/cost.ts: the rule SPENT).
 */
export function snapshot(rows: RowStore, batchId: string, counts: StateCounts = rows.counts(batchId)): BatchProgressSnapshot {
  const p = rows.progress(batchId);
  const done = FINAL_ROW_STATES.reduce((n, st) => n + counts[st], 0);
  return { rows: p.rows, counts, sent: p.sent, done, spentUsd: roundCents(p.spentUsd) };
}

/** `45s`, `3m20s`, `1h05m`; `?` when unknown. */
export function durationText(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '?';
  const sec = Math.max(0, Math.round(ms / 1000));
  if (sec >= 3600) return `${Math.floor(sec / 3600)}h${String(Math.round((sec % 3600) / 60)).padStart(2, '0')}m`;
  return sec >= 60 ? `${Math.floor(sec / 60)}m${String(sec % 60).padStart(2, '0')}s` : `${sec}s`;
}

/**
 * Time left for a batch, from its pace since a starting point: `elapsedMs` to end `doneSince`
 * rows, `left` rows to go. 0 when nothing is left; null until the pace is known.
 */
export function etaMs(elapsedMs: number, doneSince: number, left: number): number | null {
  if (left <= 0) return 0;
  if (doneSince <= 0 || elapsedMs <= 0) return null;
  return (elapsedMs / doneSince) * left;
}

/**
 * Paces of batches followed from outside the store (the daemon's progress log, the submit bar):
 * each batch's pace counts from when it was first seen here, so rows ended before (by another
 * process, or instantly as invalid) do not make it look faster than it is.
 */
export class EtaBook {
  readonly #first = new Map<string, { at: number; done: number }>();

  eta(batchId: string, s: Pick<BatchProgressSnapshot, 'rows' | 'done'>, now = systemClock.now()): number | null {
    let first = this.#first.get(batchId);
    if (!first) {
      first = { at: now, done: s.done };
      this.#first.set(batchId, first);
    }
    return etaMs(now - first.at, s.done - first.done, s.rows - s.done);
  }

  forget(batchId: string): void {
    this.#first.delete(batchId);
  }
}

/**
 * Time left for a batch as `topup status` sees it, from the store alone: the pace of the rows
 * that went through the API since the batch started sending. Null for a batch nobody is running
 * or that waits (it moves at no pace then).
 */
export function storedEtaMs(b: Batch, s: EtaFigures, pause: PauseState | null, now = systemClock.now()): number | null {
  if (b.finishedAt !== null || b.state === 'failed') return null;
  if (b.startedAt === null || b.waitReason || pause || !heldByLiveProcess(b, now)) return null;
  const viaApi = s.counts.completed + s.counts.cancelled + s.counts.rejected + s.counts.review; // ended through the API
  return etaMs(now - b.startedAt, viaApi, s.rows - s.done);
}

/** What the ETA is computed from: a snapshot, or the console's figures of one. */
export type EtaFigures = Pick<BatchProgressSnapshot, 'rows' | 'done'> & { counts: Pick<StateCounts, 'completed' | 'cancelled' | 'rejected' | 'review'> };

/**
 * The ETA, in whole seconds, that `topup status` and the console both show: one function, so the
 * two never disagree at the same moment (the console had its own pace over the last two minutes
 * and showed another figure than status, or none for its first five seconds).
 */
export function etaSeconds(b: Batch, s: EtaFigures, pause: PauseState | null, now = systemClock.now()): number | null {
  const ms = storedEtaMs(b, s, pause, now);
  return ms === null ? null : Math.round(ms / 1000);
}

export type RunState = 'running' | 'waiting' | 'queued' | 'done' | 'failed' | 'duplicate';

/** Whether a live process holds the batch (its lease has not expired). */
export function heldByLiveProcess(b: Batch, now = systemClock.now()): boolean {
  return b.owner !== null && b.leaseUntil > now;
}

export function runState(b: Batch, pause: PauseState | null, now = systemClock.now()): RunState {
  if (b.state === 'done') return 'done';
  if (b.state === 'failed') return 'failed';
  if (b.state === 'duplicate' && b.finishedAt !== null) return 'duplicate';
  if (b.waitReason || pause) return 'waiting';
  return heldByLiveProcess(b, now) ? 'running' : 'queued';
}

/**
 * One sentence: why an unfinished batch is not moving, or '' when it is. `daemon`: the daemon
 * running on this home (store/presence.ts), if the caller looked: a batch no process holds yet
 * (a retry just made, a file just claimed) is then one the daemon takes up at its next look, not
 * one nobody will run; `starting`: a daemon process that has not announced itself yet
 * (kernel/starting-mark.ts: a start after a kill -9 took ~38 s at load, trial s36 D7).
 */
export function waitingWhy(b: Batch, pause: PauseState | null, now = systemClock.now(), daemon?: { pid: number; starting?: boolean } | null): string {
  if (b.finishedAt !== null || b.state === 'failed') return b.fileError ?? '';
  const parts: string[] = [];
  if (b.cancelRequested) parts.push('cancel requested');
  if (b.waitReason === 'balance') parts.push(b.waitDetail ?? 'waiting for balance');
  else if (b.waitReason) parts.push(`waiting: ${b.waitReason}${b.waitDetail ? ` (${b.waitDetail})` : ''}`);
  if (pause?.kind === 'account') parts.push(`sending stopped: account problem ${pause.code} (${pause.detail})`);
  else if (pause?.kind === 'maintenance') parts.push(`sending paused by the API: ${pause.code}`);
  else if (pause?.kind === 'operator') parts.push('sending paused by the operator (topup account resume)');
  if (!heldByLiveProcess(b, now)) {
    parts.push(
      daemon?.starting
        ? `not started yet: a daemon is starting on this home (pid ${daemon.pid}) and takes it up once started`
        : daemon
          ? `not started yet: the daemon running on this home (pid ${daemon.pid}) takes it up at its next look`
          : 'no process is running it: start the daemon, or topup daemon --once',
    );
  }
  return parts.join('; ');
}
