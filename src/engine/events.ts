/**
 * What a runner tells the world (like graphile-worker's WorkerEventMap): the notifier, the
 * foreground progress view, the console and /metrics listen here instead of querying around the
 * engine. Every event is emitted after the fact it reports is committed.
 */
import type { EventEmitter } from 'node:events';
import type { RouteName } from '../api/client.js';
import type { RateWindow } from '../config/config.js';
import type { Batch, BatchState, WaitReason } from '../store/batches.js';
import type { RowEvent, RowState } from '../store/row-states.js';
import type { MovedMoney, StateCounts } from '../store/rows.js';
import type { BatchSummary } from '../outbox/summary.js';
import type { PauseKind, PauseState } from '../account/pauses.js';
import type { StoreDown } from '../dispatch/store-health.js';

export interface RowMoved {
  batchId: string;
  idx: number;
  event: RowEvent;
  to: RowState;
  /** What the row cost as the move left it (store/rows.ts MovedMoney). */
  money: MovedMoney;
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
  /** A pause began on `account` (each account pauses on its own). */
  pause: [kind: PauseKind, code: string, detail: string, account: string];
  resume: [kind: PauseKind];
  /** Counts of a batch, every PROGRESS_EVERY_MS while it runs. */
  progress: [batch: Batch, counts: StateCounts];
  /** The wall clock stepped (ms; positive: forward); stored times were moved to fit. */
  'clock-step': [stepMs: number];
  /** The store cannot be written (full, read-only, gone: sending stopped), or (null) it can again. */
  store: [down: StoreDown | null];
}

export type RunnerEventName = keyof RunnerEventMap;

/**
 * What a listener needs of a runner: its typed events, to follow and to stop following. The
 * notifier, the console, /metrics and the daemon's progress log depend on this, not on the Runner
 * class, so they can be handed any emitter of these events (a test's, a simulator's).
 */
export type RunnerEvents = Pick<EventEmitter<RunnerEventMap>, 'on' | 'off'>;

/** The live state of a runner, for the console, /metrics and progress views. */
export interface RunnerSnapshot {
  at: number;
  owner: string;
  stopping: boolean;
  pause: PauseState | null;
  rate: { lastSecond: number; lastMinute: number; limits: readonly RateWindow[]; holdMs: number; waitingCalls: number };
  inFlight: number;
  /** The store cannot be written since (dispatch/store-health.ts): sending stopped. null: it can. */
  storeDown: StoreDown | null;
  balance: { usd: number; at: number } | null;
  queuedFiles: number;
  batches: {
    id: string;
    file: string;
    state: BatchState;
    waitReason: WaitReason;
    waitDetail: string | null;
    cancelRequested: boolean;
    counts: StateCounts;
    inFlight: number;
  }[];
}

/** A running engine as the console and /metrics see it: its events, its live state, and a nudge. */
export interface RunnerView extends RunnerEvents {
  /** `batches: false` leaves out the batches it runs (their counts): for the runner's own figures only. */
  snapshot(opts?: { batches?: boolean }): RunnerSnapshot;
  /** Something changed in the store outside its loop (an operator's action): look now. */
  wake(): void;
  /** A settled file in the inbox (a console upload moved there): claim it now. */
  offerFile(path: string, hash?: string): void;
}
