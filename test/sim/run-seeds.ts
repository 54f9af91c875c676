/**
 * Runs the simulator over fixed seeds and checks what a CI run must show: no failure, every
 * schedule judged, and the behaviours the model exists for actually happened (a simulator whose
 * runs never crash a process or lose an answer would pass while proving nothing).
 */
import type { ExpectStatic } from 'vitest';
import { simulate, type SimReport } from '../../sim/run.js';

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

export async function runSeeds(seeds: number[], perSeed: number, expect: ExpectStatic): Promise<SimReport[]> {
  const reports: SimReport[] = [];
  for (const seed of seeds) reports.push(await simulate(seed, perSeed));
  for (const r of reports) {
    const f = r.failure;
    expect(f, f ? `seed ${f.seed} (path ${f.path}):\n${f.violations.join('\n')}\nschedule: ${JSON.stringify(f.schedule)}\nlast events:\n${f.trace.slice(-20).join('\n')}` : '').toBeNull();
    expect(r.schedules).toBe(perSeed);
    expect(r.invariantsChecked).toBeGreaterThan(perSeed * 10);
  }
  const seen: Record<string, number> = {};
  for (const r of reports) for (const [k, v] of Object.entries(r.behaviours)) seen[k] = (seen[k] ?? 0) + v;
  for (const b of MUST_HAPPEN) expect(seen[b] ?? 0, `the runs never went through "${b}"`).toBeGreaterThan(0);
  return reports;
}
