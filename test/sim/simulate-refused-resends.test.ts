/**
 * A resend refused before the supplier's idempotency saw it (the `refuse-resend` class: the API
 * turns the same trxid away, e.g. INVALID REQUEST, while an earlier answer was lost) is rare in the
 * whole swarm: CI's fixed seeds of simulate-a/-b reach it in about one schedule in fifty, so their
 * small budgets (run-seeds.ts) often miss it. Here the world is narrowed to the classes that make
 * it (every class on, no swarm), so a short run goes through it every time, with every invariant.
 */
import { describe, expect, it } from 'vitest';
import { faultFilter } from '../../sim/world.js';
import { runSeeds } from './run-seeds.js';

describe('the simulator, refused resends', () => {
  it('seed 103: resends refused before idempotency happen, and no invariant is violated', async () => {
    await runSeeds([103], 10, expect, { faults: faultFilter('refuse-resend,lost,error,crash', undefined, false), mustHappen: ['resends refused before idempotency'] });
  }, 600_000);
});
