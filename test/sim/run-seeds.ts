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
export const MUST_HAPPEN = [
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
 * The fault classes CI's seeds (fixed and fresh) run with, in the swarm: the whole world of
 * sim/world.ts but the classes held back below, each while a failure it finds is not yet
 * diagnosed (docs/simulator.md, "What CI runs"). `npm run simulate` runs every class.
 */
export const CI_HELD_BACK = {
  // Back in CI's swarm (issue 29's third turn), each after fresh seeds ran clean (docs/simulator.md,
  // "What CI runs"): unicode (trxidAsGiven, trxidKey; invariant 15 reads a trxid as given), twins
  // and unmarked-replay (order-match: more codes than the quantity is a mismatch).

  // sibling: back in (issue 29's fourth turn). Seed 101's double count was the model's (invariant 1
  // counts another key's charge only when the supplier took a trxid we sent as it: siblingMet), and
  // seed 20261133's failure that "did not replay" was found on main's code before that fix and
  // replayed on the fixed code: on the code it was found on (86d15e3) its shrunk schedule fails every
  // time, on this code it passes with the same 657 events; the same seed's 101 schedules run with 30 ms
  // of real-time jitter give the same events (sim/determinism.ts; docs/simulator.md, Determinism).
  // dear, price-cap, old-foreign, resend-words (sim-widen's classes) back in (issue 29's fourth
  // turn): seed 101's 30 one-account schedules cost the same with them as without (39.9 s / 39.8 s,
  // one worker, load ~9), both clean, and every CI seed test passed with them on.

  // Held back (issue 29's fifth turn, issue 31) until their cost against BUDGET is measured on a
  // quiet machine: at load ~20, simulate-a passed with them (60 schedules) and simulate-api ran
  // past its 300 s, which a loaded machine alone may explain. Held back, CI's swarm draws exactly
  // the schedules it drew before them. `npm run simulate` and `npm run mutate:sim` run them.
  checks: 'player checks (sim/check-invariants.ts, 30-32): cost not yet measured against BUDGET',
  'read-404': 'a 404 on reads (33, 34): the never-clearing form runs a schedule to review and its watch',
  'late-lines': 'lines written into a claimed file (35): cost not yet measured against BUDGET',
  // Held back (issue 29's sixth turn) likewise: not measured against BUDGET.
  'api-cancel': "an operator's cancel of the day's API batch (36): cost not yet measured against BUDGET",
  'plain-refusals': 'plain refusals of a first send, in one-account schedules and in HTTP 200 (37): cost not yet measured against BUDGET',
  // Held back (issue 32 item 5): an older copy of the store restored (sim/restore.ts, invariant 38).
  // New, not yet run on fresh seeds at CI's budget; held back, CI's schedules are the ones it drew before.
  restore: 'an older copy of the store restored (38): new, not yet run clean on fresh seeds at BUDGET',
  // Held back (issue 29's ninth turn, reach): new, not yet run clean on fresh seeds at BUDGET; held
  // back, CI's swarm draws exactly the schedules it drew before them.
  stall: 'a daemon stopped past its lease while another takes its batches (41): new, not yet run clean on fresh seeds at BUDGET',
  renumber: 'numbered sheets sorted again and dropped again (#3289): new, not yet run clean on fresh seeds at BUDGET',
  operator: 'an operator resolving review rows in every schedule of the class (42): new, not yet run clean on fresh seeds at BUDGET',
} as const;
export const CI_FAULTS: FaultFilter = faultFilter(undefined, Object.keys(CI_HELD_BACK).join(','), true);

/**
 * Schedules per seed of each CI simulator test: the one place they live. Sized so that every
 * test under test/sim together takes at most 90 s of wall time on 2 cores (docs/simulator.md,
 * "What CI runs": ~0.35 s of CPU per schedule of the whole world).
 */
export const BUDGET = {
  /** simulate-a, simulate-b: seeds 101/102 and 201/202, accounts one. */
  oneAccount: 30,
  /** simulate-c: seeds 301/302, two accounts. */
  twoAccounts: 25,
  /** simulate-api: seeds 401/402, a shop in every schedule. */
  api: 15,
  /** simulate-fresh: one seed from the time, accounts and shop mixed. */
  fresh: 40,
} as const;

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
