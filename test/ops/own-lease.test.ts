/**
 * Issue 24, item 1: an operator action holds and gives back only its own lease. Resolving a
 * review row (which writes the batch's next result version) and claiming a retry's file each take
 * the batch they write under an owner name of their own (ops/lease.ts) and give back that lease
 * alone: run with a daemon's runtime (as the console and the simulator run them), the batches the
 * daemon's runner drives stay its own. Before, both released every lease of the runtime's owner,
 * so the console spread the runtime with a fresh owner id, and a caller that did not lost its leases.
 * Real store and result writer in a temp home; the supplier is a small HTTP server (fake-supplier.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/runtime.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { resolveReview } from '../../src/ops/review.js';
import { createRetryBatch } from '../../src/ops/retry.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';
import { openRuntime } from '../../src/runtime.js';
import { silentLogger } from '../../src/kernel/log.js';
import { actionOwner } from '../../src/store/owner.js';

async function world(): Promise<Runtime> {
  const rt = await supplierWorld((_req, res) => void res.end(JSON.stringify({ success: true, balanceUsd: 100, currency: 'USD' })), [pubgRow(0), pubgRow(1)]);
  rt.db.prepare(`UPDATE rows SET state = 'rejected', error = 'UNKNOWN PID', attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 0`).run();
  rt.db.prepare(`UPDATE rows SET state = 'review', error = 'REVIEW: unknown', attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 1`).run();
  await finishBatch(rt, rt.batches.get('b1')!);
  // Another batch this process's runner is driving.
  const now = Date.now();
  rt.batches.create({ id: 'b2', name: 'y', sourceName: 'y.csv', jobFile: 'jobs/b2/y.csv', contentHash: 'h2', origin: 'inbox', sandbox: false, owner: rt.owner, leaseUntil: now + 60_000, now });
  rt.batches.open('b2', ['pid', 'userId']);
  return rt;
}

describe('an operator action gives back only its own lease', () => {
  it('resolving a review row writes the next result version and leaves the runner its batches', async () => {
    const rt = await world();
    const r = await resolveReview(rt, { batchId: 'b1', line: 3, notCharged: true, by: 'ana' });
    expect(r.summary?.version).toBe(2);
    expect(rt.batches.get('b1')).toMatchObject({ state: 'done', owner: null });
    expect(rt.batches.get('b2')!.owner).toBe(rt.owner);
  });

  it('a retry claims its file under a lease of its own, gives it back, and leaves the runner its batches', async () => {
    const rt = await world();
    const r = await createRetryBatch(rt, 'b1');
    expect(rt.batches.get(r.batch.id)).toMatchObject({ state: 'claimed', owner: null });
    expect(rt.batches.get('b2')!.owner).toBe(rt.owner);
    // --run: the new batch stays with this process, whose runner drives it at once.
    const rt2 = await world();
    const kept = await createRetryBatch(rt2, 'b1', { keepLease: true });
    expect(rt2.batches.get(kept.batch.id)!.owner).toBe(rt2.owner);
  });

  it('an action\'s lease is dead when its process is: the next process takes the batch at once', async () => {
    const rt = await world();
    const dead = new Set(['sim-process-1']);
    const other = openRuntime(rt.config, silentLogger(), 'http://127.0.0.1:9', { owner: 'sim-process-2', ownerIsDead: (o) => dead.has(o) });
    try {
      // A process that died holding a batch under an action's own lease.
      const opOwner = actionOwner('sim-process-1');
      expect(rt.batches.release('b2', rt.owner)).toBe(true);
      expect(rt.batches.acquire('b2', opOwner, Date.now(), 60_000)).toBe(true);
      expect(other.ownerIsDead(opOwner)).toBe(true);
      expect(other.batches.takeOver('b2', other.owner, opOwner, Date.now(), 15_000)).toBe(true);
      // A live process's action is not taken from it.
      expect(other.ownerIsDead(actionOwner('sim-process-3'))).toBe(false);
    } finally {
      await other.close();
    }
  });
});
