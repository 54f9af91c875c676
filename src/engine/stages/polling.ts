/**
 * Polling: every placed order is followed to its end (poll/poller.ts), rows whose outcome a refusal
 * cannot prove are checked against history (poll/verify.ts), review rows are looked for again
 * (poll/review-recheck.ts), and while an account is paused a read probe (GET /balance, never an order)
 * finds when it works again. One round runs at a time, in the background; its end wakes the runner.
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
  /** One poller per account: each reads its own account's orders and history. */
  readonly #pollers: ReadonlyMap<string, Poller>;
  readonly #recheck: ReviewRecheck;
  /** The poll round in progress (one at a time). */
  #round: Promise<void> | null = null;
  /** The review recheck in progress: its own promise, it never holds up polls or sends. */
  #rechecking: Promise<void> | null = null;
  /** Per account, its probe in progress while an account problem pauses it. */
  readonly #probing = new Map<string, Promise<void>>();
  /** Are orders waiting to be sent? Polls give way (half as often) only then. */
  #backlog: () => boolean;

  constructor(e: EngineContext, backlog: () => boolean) {
    this.#e = e;
    this.#pollers = new Map(e.rt.accounts.map((a) => [a.id, new Poller(e.rt, a)]));
    this.#recheck = new ReviewRecheck(e.rt, (err, account) => e.accountProblem(err, account));
    this.#backlog = backlog;
  }

  get busy(): boolean {
    return this.#round !== null;
  }

  running(): Promise<void>[] {
    return [this.#round, this.#rechecking, ...this.#probing.values()].filter((p): p is Promise<void> => p !== null);
  }

  tick(now: number, b: StepBatches): void {
    if (this.#e.stopping()) return;
    for (const account of this.#e.pauses.names) this.#probeAccount(account);
    if (this.#e.pauses.pollable().length === 0) return;
    this.#poll(b.open.map((x) => x.id), now);
    if (!this.#e.onlyBatch) this.#recheckReviews(now);
  }

  nextDueAt(now: number, b: StepBatches): number | undefined {
    const due: number[] = [];
    const { pauses } = this.#e;
    for (const account of pauses.names) {
      // A paused account's read probe: due at its time, unless it is on its way (its end wakes the runner).
      const probe = this.#probing.has(account) ? undefined : pauses.of(account).untilReadProbe();
      if (probe !== undefined) due.push(now + probe);
    }
    // Polls and rechecks wait for the account probe: due ones are not work now. (Both found by the
    // simulator's spin check: the runner woke every 5 ms until the probe time, or its answer.) With
    // several accounts, the rows of an account that cannot poll are rescheduled by its round.
    if (pauses.pollable().length === 0) return due.length > 0 ? Math.min(...due) : undefined;
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
    const { pauses } = this.#e;
    const one = pauses.plain;
    this.#round = (async () => {
      // Each account's rows are followed through that account, one account after the other; an
      // account that cannot be asked now (an account problem) has its rows looked at again later,
      // and one account's failure never holds back another's polls.
      // Rows of an account this home no longer has (renamed or removed from accounts.toml) cannot be
      // followed: they wait, said in the log, until the account is configured again; never read
      // through another account, whose order ids mean other orders.
      if (!one) {
        const orphans = due.filter((r) => !this.#pollers.has(r.account));
        for (const r of orphans) rt.rows.schedulePoll(r.batchId, r.idx, this.#e.clock.now() + 60_000);
        if (orphans.length > 0) rt.log.error({ accounts: [...new Set(orphans.map((r) => r.account))], rows: orphans.length }, 'rows are on an account this home does not have (accounts.toml): they wait until it is configured again');
      }
      for (const [account, poller] of this.#pollers) {
        const mine = one ? due : due.filter((r) => r.account === account);
        if (mine.length === 0) continue;
        if (!pauses.of(account).canPoll()) {
          for (const r of mine) rt.rows.schedulePoll(r.batchId, r.idx, this.#e.clock.now() + rt.config.pollIntervalMs);
          continue;
        }
        try {
          // One row's history check failing never holds back the polls of every processing row.
          for (const row of mine.filter((r) => CHECKED_STATES.includes(r.state))) {
            try {
              await verifyRow(rt, row, signal);
            } catch (err) {
              if (isAccountProblem(err) || signal.aborted) throw err;
              verifyFailed(rt, row, err);
            }
          }
          const placed = mine.filter((r) => PLACED_STATES.includes(r.state));
          await poller.round(placed, rt.rows.countProcessing(batchIds, one ? undefined : account), this.#backlog(), signal);
        } catch (err) {
          if (signal.aborted) throw err;
          if (isAccountProblem(err)) this.#e.accountProblem(err as ApiError, account);
          else rt.log.warn({ account, err: coerceError(err).message }, 'polling failed; will try again');
          const later = this.#e.clock.now() + rt.config.pollIntervalMs;
          for (const r of rt.rows.duePolls(batchIds, this.#e.clock.now(), 2_000)) if (one || r.account === account) rt.rows.schedulePoll(r.batchId, r.idx, later);
        }
      }
    })()
      .catch((err: unknown) => {
        rt.log.warn({ err: coerceError(err).message }, 'polling failed; will try again');
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
        this.#e.rt.log.warn({ err: coerceError(err).message }, 'review recheck failed; will try again');
      })
      .finally(() => {
        this.#rechecking = null;
        this.#e.wake();
      });
  }

  /**
   * Every paused account is probed by a read on a schedule (account/pauses.ts), through its own rate
   * gate, never with an order: an account no row goes to would otherwise stay paused for ever. A read
   * that answers ends an account problem; a maintenance pause it lifts on trial (the next order
   * decides), since reads may answer while orders do not. What it showed is kept for the console and
   * `topup doctor`.
   */
  #probeAccount(account: string): void {
    const { rt } = this.#e;
    const pauses = this.#e.pauses.of(account);
    if (this.#probing.has(account)) return;
    const p = pauses.claimReadProbe();
    if (!p) return;
    this.#probing.set(
      account,
      rt
        .accountOf(account)
        .client.balance({ priority: Priority.lookup })
        .then((b) => {
          if (p.kind === 'account') {
            pauses.clear();
            pauses.probed(true, `answered (balance ${b.balanceUsd} ${b.currency}): the account works again; sending resumed`);
            rt.log.info({ account, code: p.code }, 'account problem cleared: sending resumes');
          } else {
            const lifted = pauses.lift();
            if (!lifted) return; // ended meanwhile (an order went through)
            if (!lifted.lifted) {
              pauses.probed(true, `answered (balance ${b.balanceUsd} ${b.currency}), but ${lifted.reason}: still paused`);
              return;
            }
            pauses.probed(true, `answered (balance ${b.balanceUsd} ${b.currency}): orders are tried again; the next order tells whether ${p.code} is over`);
            rt.log.info({ account, code: p.code, since: new Date(p.since).toISOString() }, 'paused account answers a read again: its orders are tried again (routing returns to it)');
          }
          this.#e.emit('resume', p.kind);
        })
        .catch((err: unknown) => {
          const message = coerceError(err).message;
          pauses.probed(false, message);
          if (p.kind === 'account') pauses.pause('account', p.code, message);
          else if (isAccountProblem(err)) this.#e.accountProblem(err as ApiError, account);
          else rt.log.info({ account, code: p.code, err: message }, 'paused account: its read probe failed; probing again later');
        })
        .finally(() => {
          this.#probing.delete(account);
          this.#e.wake();
        }),
    );
  }
}
