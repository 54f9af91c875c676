/**
 * The order API's batch of a day. API orders are rows like a file's (the same state machine, trxid
 * rules, funding, review, results), stored in one batch per UTC day: `api-2026-11-26`, created by
 * the first order of the day (store/batches.ts apiBatch; the unique index on api_day makes it one
 * batch whichever process accepts first). It stays open while its day lasts, so orders can be
 * appended; once the day is over and every order in it has ended, its result is written like any
 * batch's (outbox/api-2026-11-26.result.csv) and it is done. The store refuses both mistakes a
 * clock could cause (migration 12): an order appended to a batch that is not open, and an API
 * batch marked done with an order still live.
 */
import { join } from 'node:path';
import { newBatchId } from '../claim/claim.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import { LEASE_MS } from '../store/owner.js';
import { API_COLUMNS, API_COLUMNS_ACCOUNTS } from './view.js';

/** How long after midnight (UTC) a day's API batch may be finished: no acceptance of that day can still be committing. */
export const API_DAY_GRACE_MS = 60_000;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function apiColumns(rt: Pick<Runtime, 'accounts'>): readonly string[] {
  return rt.accounts.length > 1 ? API_COLUMNS_ACCOUNTS : API_COLUMNS;
}

/**
 * Is this batch the order API's, still taking orders (its day has not ended, with a minute's
 * grace)? Such a batch is never finished, even with every order ended: more may come.
 */
export function apiBatchOpenForOrders(b: Pick<Batch, 'apiDay'>, now: number): boolean {
  return b.apiDay !== null && utcDay(now - API_DAY_GRACE_MS) <= b.apiDay;
}

/** When the day's API batch stops taking orders and may be finished (wall ms). */
export function apiBatchClosesAt(b: Pick<Batch, 'apiDay'>): number | undefined {
  return b.apiDay === null ? undefined : Date.parse(`${b.apiDay}T00:00:00Z`) + 86_400_000 + API_DAY_GRACE_MS;
}

/**
 * The day's API batch, made if needed, and held by this process unless another live one holds it.
 * Call inside the acceptance's transaction.
 */
export function todaysApiBatch(rt: Pick<Runtime, 'accounts' | 'batches' | 'config' | 'entropy' | 'owner'>, now: number): Batch {
  const day = utcDay(now);
  const b = rt.batches.apiBatch(day, () => {
    const name = `api-${day}`;
    const plain = join(rt.config.outboxDir, `${name}.result.csv`);
    const id = newBatchId(`api:${day}`, now, rt.entropy);
    return {
      id,
      name,
      sourceName: name,
      jobFile: '',
      contentHash: `api:${day}:${id}`,
      origin: 'submit',
      sandbox: rt.config.sandbox,
      owner: rt.owner,
      leaseUntil: now + LEASE_MS,
      now,
      header: [...apiColumns(rt)],
      resultFile: rt.batches.resultFileTaken(plain) ? join(rt.config.outboxDir, `${name}.${id}.result.csv`) : plain,
    };
  });
  // Its runner sends from it: taken now if nobody holds it (a restarted daemon's first order), so
  // the order need not wait for the lease stage's next look. A live holder keeps it (guarded UPDATE).
  if (b.owner === null || b.leaseUntil < now) rt.batches.acquire(b.id, rt.owner, now, LEASE_MS);
  return b;
}
