/**
 * Issue 20: the deterministic simulator runs in CI, a fixed set of seeds (this file and
 * simulate-b.test.ts, 620 schedules each since issue 29 made room for simulate-fresh.test.ts, run side by side): the whole engine under simulated
 * time, crashes, two processes and a model API that answers badly (sim/). Any invariant violated
 * fails the test with the shrunk schedule and the command that replays it.
 */
import { describe, expect, it } from 'vitest';
import { BUDGET, MUST_HAPPEN, runSeeds } from './run-seeds.js';

// Refused resends are rare in the whole swarm at this budget: simulate-refused-resends.test.ts runs them.
const MUST_HAPPEN_A = MUST_HAPPEN.filter((b) => b !== 'resends refused before idempotency');

describe('the simulator, seeds 101 and 102', () => {
  it(`${2 * BUDGET.oneAccount} schedules: no invariant violated, and the runs went through what the model can do`, async () => {
    await runSeeds([101, 102], BUDGET.oneAccount, expect, { mustHappen: MUST_HAPPEN_A });
  }, 900_000);
});
