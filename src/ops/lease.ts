/**
 * An operator action's own lease on one batch. An action (resolving a review row, claiming a
 * retry's file) that must hold a batch while it writes takes the lease under an owner name of its
 * own, derived from its process's (store/owner.ts actionOwner: it dies with the process), and
 * gives back that one lease and nothing else. It never runs under the process's own name: in the
 * daemon that name holds every batch the runner drives, and an action releasing "its" leases
 * would release them all (the console once spread the runtime with a new owner for that reason).
 */
import { LEASE_MS, actionOwner } from '../store/owner.js';
import type { BatchStore } from '../store/batches.js';
import type { Clock } from '../kernel/clock.js';

/**
 * Runs `fn` while holding batch `batchId` under an owner name of its own, then gives back that
 * lease alone. Returns null, without running `fn`, when another live process holds the batch.
 */
export async function withOwnLease<T>(
  home: { batches: BatchStore; clock: Pick<Clock, 'now'>; owner: string },
  batchId: string,
  fn: (owner: string) => Promise<T>,
): Promise<T | null> {
  const owner = actionOwner(home.owner);
  if (!home.batches.acquire(batchId, owner, home.clock.now(), LEASE_MS)) return null;
  try {
    return await fn(owner);
  } finally {
    home.batches.release(batchId, owner);
  }
}
