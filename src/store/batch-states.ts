/**
 * THE batch state machine, as row-states.ts is for rows: the states, the events, and every
 * (from, event, to) edge. BatchStore's state changes are built from this table; a test drives
 * every edge and refuses every other pair; docs/state-machine.md's diagram is generated from it.
 *
 *   claimed    the batch record is committed and its file is (being) moved into jobs/<batch>/
 *   open       every row is stored; rows are funded, sent and followed (a claimed batch's rows,
 *              written in chunks, are never sent)
 *   done       every row reached an end and the results are written (a later version may follow)
 *   failed     the file could not be read: outbox/<name>.error.txt says why; nothing was sent
 *   duplicate  the file's bytes match an earlier batch: every row skipped, results name it
 * A claim whose file move failed (another process took the file) is deleted, not moved.
 * The order API's batch of a day (batches.api_day, orders/api-batch.ts) has no file: it is born
 * `claimed` and `stored` at once, takes orders while its day lasts, and is `finished` only after
 * its day, once every order in it has ended (a trigger refuses `done` with a live order).
 * Waiting (for balance, the catalog …), cancellation and the lease are attributes, not states.
 */

export const BATCH_STATES = ['claimed', 'open', 'done', 'failed', 'duplicate'] as const;
export type BatchState = (typeof BATCH_STATES)[number];

export const BATCH_EVENTS = ['stored', 'file-failed', 'duplicate-stored', 'finished', 'reopened'] as const;
export type BatchEvent = (typeof BATCH_EVENTS)[number];

export interface BatchEdge {
  readonly from: BatchState;
  readonly event: BatchEvent;
  readonly to: BatchState;
  readonly why: string;
}

export const BATCH_EDGES: readonly BatchEdge[] = Object.freeze(
  [
    { from: 'claimed', event: 'stored', to: 'open', why: 'every row stored (in chunks while claimed); opened in one transaction' },
    { from: 'claimed', event: 'file-failed', to: 'failed', why: 'the file cannot be read; .error.txt written first' },
    { from: 'claimed', event: 'duplicate-stored', to: 'duplicate', why: 'the same bytes as an earlier batch: rows stored as skipped' },
    { from: 'open', event: 'finished', to: 'done', why: 'every row ended; results written' },
    { from: 'duplicate', event: 'finished', to: 'duplicate', why: 'its results (all skipped) written' },
    { from: 'done', event: 'reopened', to: 'open', why: 'a review row settled later: results are written again as the next version' },
  ].map((e) => Object.freeze(e as BatchEdge)),
);

/** Batches not finished: claimed, open, or a duplicate whose results are not written yet (the states a lease is held in). */
export const UNFINISHED_BATCH_STATES: readonly BatchState[] = Object.freeze(['claimed', 'open', 'duplicate']);
/** Batches whose rows may still be ordered: being stored, or open. A cancel stops them; their unsent rows are promised money. */
export const ORDERING_BATCH_STATES: readonly BatchState[] = Object.freeze(['claimed', 'open']);
/** Batches that ordered nothing from their file: a duplicate (every row skipped), a file that failed (no row stored). */
export const NOTHING_ORDERED_BATCH_STATES: readonly BatchState[] = Object.freeze(['duplicate', 'failed']);
