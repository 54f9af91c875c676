/**
 * Issue 29: CI explores new ground every run. Beside the fixed seeds (simulate-a, -b, -c, -api),
 * this test draws its seed from the time, so every CI run walks schedules no run walked before.
 * The seed is in the test's name and in the failure, with the command that replays the run
 * exactly on a developer's machine:
 *
 *   npm run simulate -- --seed <seed> --schedules <BUDGET.fresh> --workers 1 --no-faults <CI_HELD_BACK>
 *
 * (one worker: the seed is fast-check's seed of one run of that many schedules). TOPUP_SIM_SEED
 * pins it (to replay a CI failure under vitest). The budget is bounded (run-seeds.ts BUDGET.fresh; every fault
 * class in the swarm but CI_HELD_BACK's, one and two accounts and a shop mixed as by default), about the time of one
 * fixed seed; the 1,000–1,500-schedule interleavings are the developer loop's
 * (docs/simulator.md: `npm run simulate -- --schedules 3000`).
 */
import { describe, expect, it } from 'vitest';
import { simulate } from '../../sim/run.js';
import { BUDGET, CI_FAULTS, CI_HELD_BACK } from './run-seeds.js';

const SCHEDULES = BUDGET.fresh;
// The replay command's classes: none held back, none named.
const NO_FAULTS = Object.keys(CI_HELD_BACK).length > 0 ? ` --no-faults ${Object.keys(CI_HELD_BACK).join(',')}` : '';
const seed = process.env.TOPUP_SIM_SEED !== undefined ? Number(process.env.TOPUP_SIM_SEED) : Date.now() % 2_147_483_647;

describe(`the simulator on a fresh seed (${seed}; replay: npm run simulate -- --seed ${seed} --schedules ${SCHEDULES} --workers 1${NO_FAULTS})`, () => {
  it(`${SCHEDULES} schedules of the whole world (swarm): no invariant violated`, async () => {
    process.stdout.write(`fresh simulator seed ${seed}: replay with npm run simulate -- --seed ${seed} --schedules ${SCHEDULES} --workers 1${NO_FAULTS}\n`);
    const r = await simulate(seed, SCHEDULES, { accounts: 'mixed', apiOrders: 'mixed', faults: CI_FAULTS });
    const f = r.failure;
    expect(f, f ? `fresh seed ${seed} failed (worker seed ${f.seed}, path ${f.path}; fault classes on: ${f.schedule.world?.faults.join(', ') ?? '-'}):\n${f.violations.join('\n')}\nreplay: npm run simulate -- --seed ${seed} --schedules ${SCHEDULES} --workers 1${NO_FAULTS}\nschedule: ${JSON.stringify(f.schedule)}\nlast events:\n${f.trace.slice(-20).join('\n')}` : '').toBeNull();
    expect(r.schedules).toBe(SCHEDULES);
    expect(r.invariantsChecked).toBeGreaterThan(SCHEDULES * 10);
  }, 900_000);
});
