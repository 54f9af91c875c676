/**
 * Funding: which open batches may send what (account/funds.ts decides, with every process's promises in
 * the store). A batch whose cancellation was asked for sends nothing new: its pending rows are
 * skipped here, before anything else could send them.
 */
import type { EngineContext, Stage, StepBatches } from '../stage.js';
import type { SendScope } from '../../store/row-reads.js';
import { FundsGate } from '../../account/funds.js';

export class FundingStage implements Stage {
  readonly name = 'funding';
  readonly #e: EngineContext;
  readonly #gate: FundsGate;
  /** What the dispatch stage may send, as of the last tick. */
  scope: SendScope = { newOrders: [], resendsOnly: [] };

  constructor(e: EngineContext) {
    this.#e = e;
    const recheckMs = Math.min(Math.max(e.rt.config.pollIntervalMs * 3, 1_000), 60_000);
    this.#gate = new FundsGate(e.rt, recheckMs, (batch, detail) => e.emit('balance-wait', batch, detail), (err, account) => e.accountProblem(err, account), e.clock);
  }

  get lastBalance(): { usd: number; at: number } | null {
    return this.#gate.lastBalance;
  }

  /** INSUFFICIENT BALANCE from the API: the batch waits (called by the dispatch stage). */
  short(batchId: string, detail: string): void {
    this.#gate.short(batchId, detail);
  }

  /** Rows of these batches moved to another account: judge them again at the next step. */
  recheckNow(batchIds: Iterable<string>): void {
    this.#gate.recheckNow(batchIds);
  }

  async tick(now: number, b: StepBatches): Promise<void> {
    const { rt, pauses } = this.#e;
    for (const batch of b.open) {
      if (!batch.cancelRequested) continue;
      rt.rows.cancelPending(batch.id, now);
      if (batch.waitReason === 'balance') rt.batches.setWait(batch.id, null, null); // nothing left to fund
    }
    this.scope = await this.#gate.sendable(b.open, (account) => pauses.of(account).canPoll());
  }

  nextDueAt(now: number): number | undefined {
    const wait = this.#gate.untilNextCheck();
    return wait === undefined ? undefined : now + wait;
  }
}
