/**
 * Who drives a batch: a lease in the batches table names its owner as host:pid:random.
 */
import { hostname } from 'node:os';
import type { BatchStore } from './batches.js';
import type { Logger } from '../kernel/log.js';
import type { Clock } from '../kernel/clock.js';
import { systemEntropy, type Entropy } from '../kernel/entropy.js';

/**
 * How long a lease runs without renewal. The holder renews every lease it holds every 5 s
 * (keepLeases, engine/runner.ts), so a lease lapses only when its process stopped or stalled that long.
 */
export const LEASE_MS = 15_000;

/** This process, as written in batch leases. */
export function newOwnerId(entropy: Entropy = systemEntropy): string {
  return `${hostname()}:${process.pid}:${entropy.hex(3)}`;
}

let actions = 0;

/**
 * A lease owner name for one operator action of the process `processOwner` (ops/lease.ts): unique
 * in the process, and dead when the process is (processOwnerOf), so a crash mid-action leaves a
 * lease the next process takes at once.
 */
export function actionOwner(processOwner: string): string {
  return `${processOwner}:op${++actions}`;
}

/** The process an owner name belongs to: itself, or the process whose action it names. */
export function processOwnerOf(owner: string): string {
  return owner.replace(/:op\d+$/, '');
}

/**
 * Leases are written as host:pid:random (an action's as host:pid:random:opN). A lease of a process on this host that no longer
 * exists is taken at once instead of waiting for it to expire (a restart after a crash).
 */
export function ownerIsDead(owner: string): boolean {
  const [host, pid] = owner.split(':');
  if (host !== hostname() || !pid || !/^\d+$/.test(pid)) return false;
  if (Number(pid) === process.pid) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}


/**
 * Renews every lease this process holds every `everyMs`, until the returned function is called.
 * `alsoEvery`: what else runs on the same timer (the home's wall-clock mark, store/wall-mark.ts).
 */
export function keepLeases(rt: { batches: BatchStore; owner: string; log: Logger; clock: Clock }, leaseMs: number, everyMs: number, alsoEvery?: (now: number) => void): () => void {
  return rt.clock.every(everyMs, () => {
    try {
      rt.batches.renewAll(rt.owner, rt.clock.now(), leaseMs);
    } catch (err) {
      rt.log.warn({ err: (err as Error).message }, 'could not renew batch leases');
    }
    if (!alsoEvery) return;
    try {
      alsoEvery(rt.clock.now());
    } catch (err) {
      rt.log.warn({ err: (err as Error).message }, 'could not compare the wall clock with the home\'s mark');
    }
  });
}
