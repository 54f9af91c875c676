/**
 * Running the part of a waiting batch the balance covers (`topup run-covered`, the console): a file
 * the balance cannot cover waits whole (account/funds.ts: one customer's set of orders, half bought,
 * is harder to reason about than one that waits). The operator may say otherwise for one batch:
 * the rows the balance covers run now, the others end `skipped` (TOPUP_NOT_COVERED, nothing bought)
 * and `topup retry BATCH` buys them after a top-up.
 *
 * The word is a flag on the batch (batches.run_covered). The process holding the batch decides which
 * rows run, in its funds judgement's transaction, with the balance it has just read: so what runs is
 * never more than the money there is then, whoever asked and however long ago. What is said before
 * (coveredPreview) is the same judgement with the balance read now, written nowhere.
 */
import { NotFoundError, UsageError } from '../kernel/errors.js';
import { coveredPreview, type CoveredAccount, type CoveredSplit } from '../account/funds.js';
import type { Batch } from '../store/batches.js';
import type { Runtime } from '../runtime.js';
import { Priority } from '../api/client.js';
import { heldByLiveProcess } from './batch-view.js';

export interface RunCoveredPreview {
  batch: Batch;
  /**
   * With the balance read now: the rows that would run and those that would be skipped, and each
   * account the unsent rows wait on (named; balanceUsd and availableUsd are over those accounts only).
   */
  split: CoveredSplit & { balanceUsd: number; availableUsd: number; accounts: CoveredAccount[] };
}

/** The batch, if the operator may ask it to run the part the balance covers; else why not. */
function askable(rt: Pick<Runtime, 'batches'>, batchId: string): Batch {
  const b = rt.batches.get(batchId);
  if (!b) throw new NotFoundError(`no batch ${batchId} (see topup status)`);
  if (b.apiDay !== null) throw new UsageError(`batch ${batchId} is the order API's batch of ${b.apiDay}: each order is a shop's own, answered 402 or queued when the balance is short; nothing to run in part`);
  if (b.finishedAt !== null || b.state !== 'open') throw new UsageError(`batch ${batchId} is not ordering (${b.state}${b.finishedAt !== null ? ', finished' : ''}): nothing to run`);
  if (b.cancelRequested) throw new UsageError(`batch ${batchId} is being cancelled: nothing more of it is bought`);
  if (b.waitReason !== 'balance') throw new UsageError(`batch ${batchId} is not waiting for balance${b.waitReason ? ` (it waits for ${b.waitReason})` : ''}: it runs whole, nothing to skip`);
  return b;
}

/** Each account's balance read now (one account: a number), as the funds gate reads them. */
async function balancesNow(rt: Pick<Runtime, 'account' | 'accounts'>): Promise<number | Map<string, number>> {
  if (rt.accounts.length <= 1) return (await rt.account.client.balance({ priority: Priority.lookup })).balanceUsd;
  const out = new Map<string, number>();
  // An account that cannot be read covers nothing (as in the judgement).
  for (const a of rt.accounts) {
    try {
      out.set(a.id, (await a.client.balance({ priority: Priority.lookup })).balanceUsd);
    } catch {
      /* left out */
    }
  }
  return out;
}

export async function runCoveredPreview(rt: Runtime, batchId: string): Promise<RunCoveredPreview> {
  const batch = askable(rt, batchId);
  const split = coveredPreview(rt, batchId, await balancesNow(rt));
  // A home with one account keys it '' in the judgement: say its name.
  return { batch, split: { ...split, accounts: split.accounts.map((a) => (a.account === '' ? { ...a, account: rt.account.id } : a)) } };
}

/** Records the operator's word; the holder of the batch acts on it at its next step (or the next process to take it). */
export function requestRunCovered(rt: Pick<Runtime, 'batches' | 'clock'>, batchId: string): { batch: Batch; heldByLive: boolean } {
  askable(rt, batchId);
  if (!rt.batches.requestRunCovered(batchId)) throw new UsageError(`batch ${batchId} changed meanwhile (see topup status ${batchId})`);
  const b = rt.batches.get(batchId)!;
  return { batch: b, heldByLive: heldByLiveProcess(b, rt.clock.now()) };
}

/** Line numbers as short ranges: 2-5, 9, 12-14. */
export function lineRanges(lines: readonly number[], max = 40): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length && out.length < max) {
    let j = i;
    while (j + 1 < lines.length && lines[j + 1] === lines[j]! + 1) j++;
    out.push(i === j ? String(lines[i]) : `${lines[i]}-${lines[j]}`);
    i = j + 1;
  }
  return out.join(', ') + (i < lines.length ? ', …' : '');
}
