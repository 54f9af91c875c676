/**
 * The money check: a batch sends nothing until the balance covers all of its unsent rows.
 * Batches are funded oldest first: an earlier batch's unsent total is set aside before a
 * later one is compared with the balance, so two batches never both start on the same money.
 * A batch that cannot be covered waits ("waiting for balance", visible in the store) and
 * starts by itself once a later check sees the balance topped up (outside the API).
 */
import { Priority } from '../api/client.js';
import type { Runtime } from '../runtime.js';
import type { SendScope } from '../store/row-reads.js';
import type { Batch } from '../store/batches.js';
import { ApiError, coerceError } from '../errors.js';
import { roundCents as cents } from '../money.js';

export interface FundsVerdict {
  funded: Batch[];
  waiting: { batch: Batch; needUsd: number; availableUsd: number }[];
  balanceUsd: number;
}


/**
 * `batches`: every open batch with rows still to send, oldest first. Only those in `judge` get a
 * verdict written; the others are already sending, and their unsent total is set aside first.
 */
export async function checkFunds(rt: Runtime, batches: readonly Batch[], judge: ReadonlySet<string>): Promise<FundsVerdict> {
  const { balanceUsd } = await rt.client.balance({ priority: Priority.lookup });
  const now = Date.now();
  let available = balanceUsd;
  const verdict: FundsVerdict = { funded: [], waiting: [], balanceUsd };
  for (const b of [...batches].sort((a, c) => a.seq - c.seq)) {
    const need = rt.rows.unsentTotal(b.id);
    if (!judge.has(b.id)) {
      available -= need;
      continue;
    }
    if (need <= available + 1e-9) {
      available -= need;
      rt.batches.setBalanceBefore(b.id, balanceUsd, now);
      rt.batches.setWait(b.id, null, null);
      verdict.funded.push(b);
    } else {
      const detail = `waiting for balance: needs ${cents(need)} USD for its unsent rows, ${cents(Math.max(available, 0))} USD available`;
      rt.batches.setWait(b.id, 'balance', detail);
      verdict.waiting.push({ batch: b, needUsd: cents(need), availableUsd: cents(Math.max(available, 0)) });
      // Later batches must not jump the queue and spend what this one waits for.
      available = Math.min(available, 0);
    }
  }
  return verdict;
}

/**
 * Decides, step by step, which open batches may send: those funded and not waiting for balance.
 * Checks the balance for a batch before its first order and, while it waits, every `recheckMs`.
 */
export class FundsGate {
  readonly #rt: Runtime;
  readonly #recheckMs: number;
  readonly #onWait: (batch: Batch, detail: string) => void;
  /** A 401/403 reading the balance: the account cannot work, which pauses everything (not just funding). */
  readonly #onAccountProblem: (err: ApiError) => void;
  readonly #nextCheck = new Map<string, number>();

  constructor(rt: Runtime, recheckMs: number, onWait: (batch: Batch, detail: string) => void, onAccountProblem: (err: ApiError) => void = () => {}) {
    this.#rt = rt;
    this.#recheckMs = recheckMs;
    this.#onWait = onWait;
    this.#onAccountProblem = onAccountProblem;
  }

  /**
   * The API refused a row with INSUFFICIENT BALANCE: the batch waits. It is checked again only
   * after `recheckMs`: our total said the money was there (a price rose, money left the account),
   * so an immediate check would pass and send the same refused orders again.
   */
  short(batchId: string, detail: string): void {
    const before = this.#rt.batches.get(batchId);
    this.#rt.batches.setWait(batchId, 'balance', detail);
    this.#nextCheck.set(batchId, Date.now() + this.#recheckMs);
    if (before && before.waitReason !== 'balance') this.#onWait(before, detail);
  }

  /** When a waiting batch is next checked (for the runner's sleep). */
  nextChecks(): number[] {
    return [...this.#nextCheck.values()];
  }

  async sendable(open: readonly Batch[], mayCall: boolean): Promise<SendScope> {
    const rt = this.#rt;
    const now = Date.now();
    const withUnsent = open.filter((b) => !b.cancelRequested && rt.rows.counts(b.id).pending > 0);
    const due = withUnsent.filter((b) => (b.balanceBefore === null || b.waitReason === 'balance') && (this.#nextCheck.get(b.id) ?? 0) <= now);
    if (due.length > 0 && mayCall) {
      try {
        const verdict = await checkFunds(rt, withUnsent, new Set(due.map((b) => b.id)));
        for (const w of verdict.waiting) {
          this.#nextCheck.set(w.batch.id, Date.now() + this.#recheckMs);
          if (w.batch.waitReason !== 'balance') {
            rt.log.warn({ batch: w.batch.id, needUsd: w.needUsd, availableUsd: w.availableUsd }, 'batch is waiting for balance');
            this.#onWait(w.batch, `needs ${w.needUsd} USD, balance covers ${w.availableUsd} USD`);
          }
        }
        for (const f of verdict.funded) {
          this.#nextCheck.delete(f.id);
          if (f.waitReason === 'balance') rt.log.info({ batch: f.id, balanceUsd: verdict.balanceUsd }, 'balance covers the batch: sending');
        }
      } catch (err) {
        if (err instanceof ApiError && err.classification === 'account') this.#onAccountProblem(err);
        else rt.log.warn({ err: coerceError(err).message }, 'cannot read the balance; will try again');
        for (const b of due) this.#nextCheck.set(b.id, Date.now() + 5_000);
      }
    }
    // A batch not (or no longer) covered by the balance holds back its new orders only: rows
    // already in doubt are resent, since only a resend tells whether they were charged.
    const newOrders: string[] = [];
    const resendsOnly: string[] = [];
    for (const b of open) {
      const cur = rt.batches.get(b.id)!;
      const funded = cur.waitReason !== 'balance' && cur.balanceBefore !== null;
      (funded || rt.rows.counts(b.id).pending === 0 ? newOrders : resendsOnly).push(b.id);
    }
    return { newOrders, resendsOnly };
  }
}
