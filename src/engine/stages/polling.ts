/**
 * Polling: every placed order is followed to its end (poll/poller.ts), rows whose outcome a refusal
 * cannot prove are checked against history (poll/verify.ts), review rows are looked for again
 * (poll/review-recheck.ts), and while the account is paused a cheap probe (GET /balance) finds when it
 * works again. One round runs at a time, in the background; its end wakes the runner.
 */
import { Priority } from '../../api/client.js';
import { ApiError, coerceError } from '../../kernel/errors.js';
import type { EngineContext, Stage, StepBatches } from '../stage.js';
import { isAccountProblem, Poller } from '../../poll/poller.js';
import { verifyFailed, verifyRow } from '../../poll/verify.js';
import { ReviewRecheck } from '../../poll/review-recheck.js';
import { CHECKED_STATES, PLACED_STATES } from '../../store/row-states.js';

export class PollingStage implements Stage {
  readonly name = 'polling';
  readonly #e: EngineContext;
  readonly #poller: Poller;
  readonly #recheck: ReviewRecheck;
  /** The poll round in progress (one at a time). */
  #round: Promise<void> | null = null;
  /** The review recheck in progress: its own promise, it never holds up polls or sends. */
  #rechecking: Promise<void> | null = null;
  #probing: Promise<void> | null = null;
  /** Are orders waiting to be sent? Polls give way (half as often) only then. */
  #backlog: () => boolean;

  constructor(e: EngineContext, backlog: () => boolean) {
    this.#e = e;
    this.#poller = new Poller(e.rt);
    this.#recheck = new ReviewRecheck(e.rt);
    this.#backlog = backlog;
  }

  get busy(): boolean {
    return this.#round !== null;
  }

  running(): Promise<void>[] {
    return [this.#round, this.#rechecking, this.#probing].filter((p): p is Promise<void> => p !== null);
  }

  tick(now: number, b: StepBatches): void {
    if (this.#e.stopping()) return;
    this.#probeAccount();
    if (!this.#e.pauses.canPoll()) return;
    this.#poll(b.open.map((x) => x.id), now);
    if (!this.#e.onlyBatch) this.#recheckReviews(now);
  }

  nextDueAt(now: number, b: StepBatches): number | undefined {
    const due: number[] = [];
    const pause = this.#e.pauses.current;
    // The account probe: due at its time, unless it is on its way (its end wakes the runner).
    if (pause?.kind === 'account' && !this.#probing) due.push(now + (this.#e.pauses.untilProbe() ?? 0));
    // Polls and rechecks wait for the account probe: due ones are not work now. (Both found by the
    // simulator's spin check: the runner woke every 5 ms until the probe time, or its answer.)
    if (!this.#e.pauses.canPoll()) return due[0];
    const ids = b.open.map((x) => x.id);
    const poll = this.#round ? undefined : this.#e.rt.rows.nextPollAt(ids);
    if (poll !== undefined) due.push(poll);
    const recheck = this.#e.onlyBatch || this.#rechecking ? undefined : this.#recheck.nextDueAt(now);
    if (recheck !== undefined) due.push(recheck);
    return due.length > 0 ? Math.min(...due) : undefined;
  }

  #poll(batchIds: readonly string[], now: number): void {
    const { rt, signal } = this.#e;
    if (this.#round) return;
    const due = rt.rows.duePolls(batchIds, now, 2_000);
    if (due.length === 0) return;
    this.#round = (async () => {
      // One row's history check failing never holds back the polls of every processing row.
      for (const row of due.filter((r) => CHECKED_STATES.includes(r.state))) {
        try {
          await verifyRow(rt, row, signal);
        } catch (err) {
          if (isAccountProblem(err) || signal.aborted) throw err;
          verifyFailed(rt, row, err);
        }
      }
      const placed = due.filter((r) => PLACED_STATES.includes(r.state));
      await this.#poller.round(placed, rt.rows.countProcessing(batchIds), this.#backlog(), signal);
    })()
      .catch((err: unknown) => {
        if (isAccountProblem(err)) this.#e.accountProblem(err as ApiError);
        else rt.log.warn({ err: coerceError(err).message }, 'polling failed; will try again');
        for (const r of rt.rows.duePolls(batchIds, this.#e.clock.now(), 2_000)) rt.rows.schedulePoll(r.batchId, r.idx, this.#e.clock.now() + rt.config.pollIntervalMs);
      })
      .finally(() => {
        this.#round = null;
        this.#e.wake();
      });
  }

  #recheckReviews(now: number): void {
    const due = this.#recheck.nextDueAt(now);
    if (this.#rechecking || due === undefined || due > now) return;
    this.#rechecking = this.#recheck
      .tick(now, this.#e.signal)
      .then(() => undefined)
      .catch((err: unknown) => {
        if (isAccountProblem(err)) this.#e.accountProblem(err as ApiError);
        else this.#e.rt.log.warn({ err: coerceError(err).message }, 'review recheck failed; will try again');
      })
      .finally(() => {
        this.#rechecking = null;
        this.#e.wake();
      });
  }

  /** While the account is paused: one balance read per probe interval finds when it works again. */
  #probeAccount(): void {
    const { pauses, rt } = this.#e;
    const p = pauses.current;
    if (this.#probing || !p || p.kind !== 'account' || (pauses.untilProbe() ?? 0) > 0) return;
    this.#probing = rt.account.client
      .balance({ priority: Priority.lookup })
      .then(() => {
        pauses.clear();
        rt.log.info({ code: p.code }, 'account problem cleared: sending resumes');
        this.#e.emit('resume', 'account');
      })
      .catch((err: unknown) => void pauses.pause('account', p.code, coerceError(err).message))
      .finally(() => {
        this.#probing = null;
        this.#e.wake();
      });
  }
}
