/**
 * Cancelling a batch, for `topup cancel` and the console alike: the request is recorded on the
 * batch (the holder of its lease, whichever process that is, skips its unsent rows at its next
 * step: engine/stages/funding.ts) and rows already sent are followed to their end, since they may still
 * be charged. What a cancel would skip and what may still be charged is told before it is asked.
 */
import { NotFoundError, TopupError, ErrorCode, UsageError } from '../kernel/errors.js';
import type { Store } from '../store/store.js';
import type { Clock } from '../kernel/clock.js';
import type { Batch } from '../store/batches.js';
import { IN_FLIGHT_STATES, FOLLOWED_STATES, type RowState } from '../store/row-states.js';
import { heldByLiveProcess } from './batch-view.js';
import { roundCents } from '../kernel/money.js';

export interface CancelPreview {
  batch: Batch;
  /** Already finished (or refused whole): nothing to cancel. */
  finished: boolean;
  /** Rows not sent yet: they end `skipped`, nothing is bought for them. */
  skip: { rows: number; usd: number };
  /** Rows sent whose outcome is not known yet: they are followed to their end and may be charged. */
  mayCharge: { rows: number; usd: number };
}

const MAY_CHARGE: readonly RowState[] = [...IN_FLIGHT_STATES, ...FOLLOWED_STATES];

export function cancelPreview(rt: Pick<Store, 'batches' | 'rows'>, batchId: string): CancelPreview {
  const batch = rt.batches.get(batchId);
  if (!batch) throw new NotFoundError(`no batch ${batchId} (see topup status)`);
  const counts = rt.rows.counts(batchId);
  const followed = rt.rows.inStates(batchId, MAY_CHARGE);
  return {
    batch,
    finished: batch.finishedAt !== null || batch.state === 'failed',
    skip: { rows: counts.pending, usd: rt.rows.unsentTotal(batchId) },
    mayCharge: { rows: followed.length, usd: roundCents(followed.reduce((s, r) => s + (r.expectedUsd ?? 0), 0)) },
  };
}

export type CancelOutcome = { kind: 'already-finished'; batch: Batch } | { kind: 'requested'; batch: Batch; heldByLive: boolean };

/**
 * Records the cancel. The process holding the batch (or the next to take it) carries it out; this
 * takes no lease: the request is a flag on the batch, set in one guarded UPDATE.
 */
export function requestCancel(rt: Pick<Store, 'batches'> & { clock: Pick<Clock, 'now'> }, batchId: string): CancelOutcome {
  const b = rt.batches.get(batchId);
  if (!b) throw new NotFoundError(`no batch ${batchId} (see topup status)`);
  if (b.finishedAt !== null || b.state === 'failed') return { kind: 'already-finished', batch: b };
  // A copy of a file already taken orders nothing itself: its results are the original's. Saying
  // so beats an internal error (found by the simulator: an operator cancelling the newest batch).
  if (b.state === 'duplicate') {
    throw new UsageError(`batch ${batchId} is a copy of batch ${b.duplicateOf ?? '(unknown)'} (the same file): it orders nothing itself; to stop those orders, cancel ${b.duplicateOf ?? 'that batch'}`);
  }
  if (!rt.batches.requestCancel(batchId)) throw new TopupError(ErrorCode.Internal, `batch ${batchId} cannot be cancelled in state ${b.state}`);
  const held = rt.batches.get(batchId)!;
  return { kind: 'requested', batch: held, heldByLive: heldByLiveProcess(held, rt.clock.now()) };
}
