/**
 * The money check: a batch sends nothing until the balance covers all of its unsent rows.
 * Batches are funded oldest first: an earlier batch's unsent total is set aside before a
 * later one is compared with the balance, so two batches never both start on the same money.
 * A batch that cannot be covered waits ("waiting for balance", visible in the store) and
 * starts by itself once a later check sees the balance topped up (outside the API).
 */
import { Priority } from '../api/client.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';

export interface FundsVerdict {
  funded: Batch[];
  waiting: { batch: Batch; needUsd: number; availableUsd: number }[];
  balanceUsd: number;
}

const cents = (n: number): number => Math.round(n * 100) / 100;

export async function checkFunds(rt: Runtime, batches: readonly Batch[]): Promise<FundsVerdict> {
  const { balanceUsd } = await rt.client.balance({ priority: Priority.lookup });
  const now = Date.now();
  let available = balanceUsd;
  const verdict: FundsVerdict = { funded: [], waiting: [], balanceUsd };
  for (const b of [...batches].sort((a, c) => a.seq - c.seq)) {
    const need = rt.rows.unsentTotal(b.id);
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
