/**
 * A batch as the operator sees it: how far it is, what it cost so far, who runs it and why it
 * waits. Read from the store only, so `status` works while the API is down.
 */
import type { Batch } from '../store/batches.js';
import type { RowStore, StateCounts } from '../store/rows.js';
import type { PauseState } from '../dispatch/pauses.js';
import { roundCents } from '../money.js';

export interface BatchProgressSnapshot {
  rows: number;
  counts: StateCounts;
  /** Rows that have left for the API at least once. */
  sent: number;
  /** Rows that reached an end (completed, cancelled, rejected, invalid, skipped, review). */
  done: number;
  spentUsd: number;
}

export function snapshot(rows: RowStore, batchId: string): BatchProgressSnapshot {
  const counts = rows.counts(batchId);
  const p = rows.progress(batchId);
  const done = counts.completed + counts.cancelled + counts.rejected + counts.invalid + counts.skipped + counts.review;
  return { rows: p.rows, counts, sent: p.sent, done, spentUsd: roundCents(p.spentUsd) };
}

export type RunState = 'running' | 'waiting' | 'queued' | 'done' | 'failed' | 'duplicate';

/** Whether a live process holds the batch (its lease has not expired). */
export function heldByLiveProcess(b: Batch, now = Date.now()): boolean {
  return b.owner !== null && b.leaseUntil > now;
}

export function runState(b: Batch, pause: PauseState | null, now = Date.now()): RunState {
  if (b.state === 'done') return 'done';
  if (b.state === 'failed') return 'failed';
  if (b.state === 'duplicate' && b.finishedAt !== null) return 'duplicate';
  if (b.waitReason || pause) return 'waiting';
  return heldByLiveProcess(b, now) ? 'running' : 'queued';
}

/** One sentence: why an unfinished batch is not moving, or '' when it is. */
export function waitingWhy(b: Batch, pause: PauseState | null, now = Date.now()): string {
  if (b.finishedAt !== null || b.state === 'failed') return b.fileError ?? '';
  const parts: string[] = [];
  if (b.cancelRequested) parts.push('cancel requested');
  if (b.waitReason === 'balance') parts.push(b.waitDetail ?? 'waiting for balance');
  else if (b.waitReason) parts.push(`waiting: ${b.waitReason}${b.waitDetail ? ` (${b.waitDetail})` : ''}`);
  if (pause?.kind === 'account') parts.push(`sending stopped: account problem ${pause.code} (${pause.detail})`);
  else if (pause?.kind === 'maintenance') parts.push(`sending paused by the API: ${pause.code}`);
  if (!heldByLiveProcess(b, now)) parts.push('no process is running it: start the daemon, or topup daemon --once');
  return parts.join('; ');
}
