/**
 * What a runner tells the world (like graphile-worker's WorkerEventMap): the notifier, the
 * foreground progress view, the console and /metrics listen here instead of querying around the
 * engine. Every event is emitted after the fact it reports is committed.
 */
import type { RouteName } from '../api/client.js';
import type { Batch } from '../store/batches.js';
import type { RowEvent, RowState } from '../store/row-states.js';
import type { StateCounts } from '../store/rows.js';
import type { BatchSummary } from '../outbox/summary.js';
import type { PauseKind } from '../account/pauses.js';

export interface RowMoved {
  batchId: string;
  idx: number;
  event: RowEvent;
  to: RowState;
}

export interface CallMade {
  route: RouteName;
  /** HTTP status, or undefined when no answer came (timeout, reset). */
  status: number | undefined;
  ms: number;
}

export interface RunnerEventMap {
  /** A row moved in the state machine (sent, settled, put in review …). */
  'row-moved': [RowMoved];
  /** One API call of this process ended. */
  call: [CallMade];
  /** A batch changed state, or its wait reason changed. */
  'batch-changed': [batch: Batch];
  'batch-finished': [summary: BatchSummary, batch: Batch];
  'balance-wait': [batch: Batch, detail: string];
  pause: [kind: PauseKind, code: string, detail: string];
  resume: [kind: PauseKind];
  /** Counts of a batch, every PROGRESS_EVERY_MS while it runs. */
  progress: [batch: Batch, counts: StateCounts];
  /** The wall clock stepped (ms; positive: forward); stored times were moved to fit. */
  'clock-step': [stepMs: number];
}

export type RunnerEventName = keyof RunnerEventMap;
