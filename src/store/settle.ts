/**
 * A review row settled (its order found by the recheck, or an operator's decision) and its batch
 * reopened, as ONE decision: one transaction. As two statements, a process dying between them left
 * a settled row in a `done` batch whose results nothing writes again (the finishing stage drives
 * open batches only, and the row, no longer in review, cannot be settled again). Now either both
 * happen or neither: a crash leaves the row in review, settled by the next round or decision.
 */
import type { Store } from './store.js';
import type { RowStore } from './rows.js';

export type SettleTo = Parameters<RowStore['settleReview']>[2];
export type SettleResolution = Parameters<RowStore['settleReview']>[3];

/**
 * Settles the review row (RowStore.settleReview: only from `review`, only once) and, if it moved,
 * reopens its batch when it had ended (`done` → `open`, the next result version). `settled` false:
 * the row was not in review any more (another process settled it), and nothing changed.
 */
export function settleAndReopen(
  store: Pick<Store, 'db' | 'rows' | 'batches'>,
  batchId: string,
  idx: number,
  to: SettleTo,
  resolution: SettleResolution,
  answer: string | null,
): { settled: boolean; reopened: boolean } {
  return store.db.transaction(() => {
    if (!store.rows.settleReview(batchId, idx, to, resolution, answer)) return { settled: false, reopened: false };
    return { settled: true, reopened: store.batches.reopen(batchId) };
  }).immediate();
}
