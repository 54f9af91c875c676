/**
 * Issue 23: the simulator in CI with a shop placing orders through the order desk in every
 * schedule (sim/shop.ts): new orders, the same trxid resent with the same body and with another,
 * file rows' trxids in any letter case, concurrent acceptances over two daemons, acceptances cut
 * by a crash, schedules crossing UTC midnight (two days' API batches). Invariants 14–19 of
 * sim/invariants.ts hold beside the others. Sized to stay under about 20 s.
 */
import { describe, expect, it } from 'vitest';
import { BUDGET, runSeeds } from './run-seeds.js';

/** Behaviours every CI run of API-order schedules must have gone through. */
const MUST_HAPPEN_API = [
  'api orders: accepted (202)',
  'api orders: the same order (200)',
  'api orders: refused 409',
  'api orders: refused 422',
  'api orders: no answer (crash, nobody listening, timeout)',
  'api orders: resends after no answer',
  'api orders: requests reaching a daemon together',
  'api orders: daemon crashed during a call',
  'api orders: day batches finished',
  'processes crashed',
  'rows ended completed',
];

describe('the simulator with API orders, seeds 401 and 402', () => {
  it(`${2 * BUDGET.api} schedules with a shop: no invariant violated, and the runs went through what a shop does`, async () => {
    await runSeeds([401, 402], BUDGET.api, expect, { accounts: 'one', apiOrders: 'all', mustHappen: MUST_HAPPEN_API });
  }, 300_000);
});
