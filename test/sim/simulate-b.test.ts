/** Issue 20: the simulator in CI, the second half of the fixed seeds (see simulate-a.test.ts). */
import { describe, expect, it } from 'vitest';
import { runSeeds } from './run-seeds.js';

describe('the simulator, seeds 201 and 202', () => {
  it('620 schedules: no invariant violated, and the runs went through what the model can do', async () => {
    await runSeeds([201, 202], 90, expect);
  }, 900_000);
});
