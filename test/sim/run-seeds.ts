/**
 * Runs the simulator over fixed seeds and checks what a CI run must show: no failure, every
 * schedule judged, and the behaviours the model exists for actually happened (a simulator whose
 * runs never crash a process or lose an answer would pass while proving nothing).
 */
import type { ExpectStatic } from 'vitest';
import { simulate, type SimReport } from '../../sim/run.js';
import { faultFilter, type FaultFilter } from '../../sim/world.js';
import type { AccountsMix, ApiOrdersMix } from '../../sim/schedule.js';

/** Behaviours every CI run must have gone through at least once. */
const MUST_HAPPEN = [
  'processes crashed',
  'two daemons on one home',
  'answers lost after an order was made',
  '5xx or proxy pages after an order was made',
  'replays answered',
  '429 answers',
  'resends refused before idempotency',
  'foreign orders in the account',
  'real-world answers',
  'action: drop (add-column)',
  'action: submit',
  'action: retry',
  'action: cancel',
  'action: resolve',
  'action: stop',
  'action: clock-step',
  'rows ended review',
  'rows ended cancelled',
  'rows ended skipped',
  'rows ended completed',
];

/** Behaviours every CI run of two-account schedules (issue 22) must have gone through. */
export const MUST_HAPPEN_TWO = [
  'two accounts',
  'two accounts: routing cheapest',
  'two accounts: routing priority',
  'two accounts: routing spread',
  'two accounts: orders made on the first',
  'two accounts: orders made on the second',
  'two accounts: rows moved to another account',
  'two accounts: pack withdrawn (refusals)',
  'two accounts: key revoked (answers)',
  'two accounts: same order ids at both',
  'two accounts: maintenance on one',
  'two accounts: answers lost after creation on one',
  'two accounts: rows pinned by an account column',
  'answers lost after an order was made',
  'processes crashed',
  'rows ended completed',
];

/**
 * The fault classes CI's seeds run with: the world the simulator had before issue 29 widened it
 * (sim/world.ts). The wider classes (never-clearing faults, every answer shape, unmarked replays,
 * refunds in every form, identities in every spelling, sibling keys, config edits) are run by
 * `npm run simulate` and by the schedules saved in test/sim/found/; on the merged code they still
 * find failures not yet diagnosed (docs/simulator.md, "Not yet in CI"), and the whole world runs
 * at about a third of the speed, so CI does not run them on fixed or fresh seeds yet.
 */
export const CI_FAULTS: FaultFilter = faultFilter('lost,error,maintenance,account,rate,slow,refuse-resend,read-error,foreign,forbidden,crash,clock,withdrawn', undefined, true);

export async function runSeeds(seeds: number[], perSeed: number, expect: ExpectStatic, opts: { accounts?: AccountsMix; apiOrders?: ApiOrdersMix; mustHappen?: readonly string[]; faults?: FaultFilter } = {}): Promise<SimReport[]> {
  const reports: SimReport[] = [];
  for (const seed of seeds) reports.push(await simulate(seed, perSeed, { accounts: opts.accounts ?? 'one', apiOrders: opts.apiOrders ?? 'none', faults: opts.faults ?? CI_FAULTS }));
  for (const r of reports) {
    const f = r.failure;
    expect(f, f ? `seed ${f.seed} (path ${f.path}):\n${f.violations.join('\n')}\nschedule: ${JSON.stringify(f.schedule)}\nlast events:\n${f.trace.slice(-20).join('\n')}` : '').toBeNull();
    expect(r.schedules).toBe(perSeed);
    expect(r.invariantsChecked).toBeGreaterThan(perSeed * 10);
  }
  const seen: Record<string, number> = {};
  for (const r of reports) for (const [k, v] of Object.entries(r.behaviours)) seen[k] = (seen[k] ?? 0) + v;
  for (const b of opts.mustHappen ?? MUST_HAPPEN) expect(seen[b] ?? 0, `the runs never went through "${b}"`).toBeGreaterThan(0);
  return reports;
}
