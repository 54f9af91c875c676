/**
 * The runner's parts. Each stage of the flow (intake → funding → dispatch → polling → finishing,
 * plus leases) does what is due when ticked and says when it next has something to do; the runner
 * only sleeps until the earliest of those, or until a background job (a send, a poll round) wakes
 * it. The context is what the stages share, handed to each once.
 */
import type { ApiError } from '../kernel/errors.js';
import type { Clock } from '../kernel/clock.js';
import type { AccountPauses } from './account-pauses.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import type { RunnerEventMap, RunnerEventName } from './events.js';

export interface EngineContext {
  rt: Runtime;
  clock: Clock;
  /** Every account's pause (each account pauses on its own). */
  pauses: AccountPauses;
  emit<K extends RunnerEventName>(name: K, ...args: RunnerEventMap[K]): void;
  /** Aborted on a hard stop (the grace period ran out): every call in flight listens to it. */
  signal: AbortSignal;
  stopping(): boolean;
  /** A background job ended or found work: step again at once. */
  wake(): void;
  /** Only this batch (topup submit), else every batch nobody else holds. */
  onlyBatch: string | undefined;
  /** A 401/403 on any route of this account: pause its sending and calls (every process on the home). */
  accountProblem(err: ApiError, account: string): void;
  /**
   * This process cannot drive batches it holds (an account renamed under it: DispatchStage
   * #tellGoneAccounts), and says why: a runner that stops when done (submit, retry, cancel,
   * daemon --once) stops now, so its lease goes and a process that can drive them takes them; a
   * daemon keeps them, waiting with the reason on their batches, until it is restarted.
   */
  handBack(why: string): void;
}

/** The batches this process holds, read once per step. */
export interface StepBatches {
  owned: readonly Batch[];
  /** The owned batches in `open` (rows stored, being funded, sent, followed). */
  open: readonly Batch[];
}

export interface Stage {
  readonly name: string;
  /** Does what is due. May say `true`: the batches this process holds changed (the runner reads them again). */
  tick(now: number, batches: StepBatches): Promise<boolean | void> | boolean | void;
  /** Wall time (ms) when this stage next has something to do, or undefined (only an event can give it work). */
  nextDueAt(now: number, batches: StepBatches): number | undefined;
  /** Work it started that is still running (for a bounded stop). */
  running?(): Promise<unknown>[];
}
