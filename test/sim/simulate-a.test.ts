/**
 * Issue 20: the deterministic simulator runs in CI, a fixed set of seeds (this file and
 * simulate-b.test.ts, 620 schedules each since issue 29 made room for simulate-fresh.test.ts, run side by side): the whole engine under simulated
 * time, crashes, two processes and a model API that answers badly (sim/). Any invariant violated
 * fails the test with the shrunk schedule and the command that replays it.
 */
import { describe, expect, it } from 'vitest';
import { BUDGET, runSeeds } from './run-seeds.js';

describe('the simulator, seeds 101 and 102', () => {
  it(`${2 * BUDGET.oneAccount} schedules: no invariant violated, and the runs went through what the model can do`, async () => {
    await runSeeds([101, 102], BUDGET.oneAccount, expect);
  }, 900_000);
});
