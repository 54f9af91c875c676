/**
 * Issue 22: the simulator in CI with two supplier accounts in every schedule (two model APIs,
 * two ledgers, routing, failover, faults per account; sim/schedule.ts SecondAccount). Sized to
 * add about 30 s beside simulate-a and simulate-b, which run one-account schedules.
 */
import { describe, expect, it } from 'vitest';
import { BUDGET, MUST_HAPPEN_TWO, runSeeds } from './run-seeds.js';

describe('the simulator with two accounts, seeds 301 and 302', () => {
  it(`${2 * BUDGET.twoAccounts} schedules: no invariant violated against either ledger, and the runs went through what two accounts can do`, async () => {
    await runSeeds([301, 302], BUDGET.twoAccounts, expect, { accounts: 'two', mustHappen: MUST_HAPPEN_TWO });
  }, 900_000);
});
