/**
 * One process of `npm run mutate:sim` (sim/mutate.ts), run inside the scratch tree whose money-path
 * files carry every mutant behind Stryker's switch (`stryMutAct_9fa48("id")`, which reads
 * `globalThis.__stryker__.activeMutant`, set from the env variable `__STRYKER_ACTIVE_MUTANT__` the
 * first time an instrumented module loads).
 *
 * The schedules are the first N of `fc.sample(scheduleArb(), { seed, numRuns: N })`: the same
 * values `npm run simulate -- --seed S --schedules N --workers 1` runs (fast-check draws a run's
 * value from the seed and the run's index alone), each run by sim/run-schedule.ts and judged by
 * sim/invariants.ts, exactly as the simulator does.
 *
 * `--baseline`: no mutant active; a schedule that fails is recorded (it cannot judge a mutant) and
 * the run goes on. Stryker's per-test coverage is kept
 * per schedule (`__stryker__.currentTestId` = the schedule's index), so the parent knows which
 * schedules reach each mutant; what runs while modules load is `static` (a module-level value: it
 * is in force in every schedule).
 *
 * Otherwise: the mutant named by the env variable is active; the schedules listed in `--only`
 * (those that reach it, or all of them for a static mutant) run in order until the first that
 * fails. A failure of a non-static mutant is confirmed by running the same schedule again with the
 * mutant switched off (the switch is read at every call): it must then pass, or the verdict is
 * `unconfirmed` (counted neither way) instead of `killed`.
 *
 * Protocol (stdout, one JSON object a line): {loaded}, {progress}, then {result}.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';

interface Stryker {
  activeMutant?: string;
  currentTestId?: string;
  mutantCoverage?: { static: Record<string, number>; perTest: Record<string, Record<string, number>> };
}

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const say = (msg: object): void => void process.stdout.write(`${JSON.stringify(msg)}\n`);

async function main(): Promise<void> {
  const seed = Number(arg('seed'));
  const n = Number(arg('schedules'));
  const baseline = process.argv.includes('--baseline');
  const root = join(import.meta.dirname, '..');
  const ns = ((globalThis as { __stryker__?: Stryker }).__stryker__ ??= {});
  const t0 = performance.now();
  // Load every mutated module first: a mutant that stops a module from loading (a regex emptied
  // into one that no longer compiles, a name used before it is defined) is told apart from one
  // the simulator kills.
  for (const f of (arg('files') ?? '').split(',').filter(Boolean)) await import(pathToFileURL(join(root, f)).href);
  const { scheduleArb } = await import('./schedule.js');
  const { faultFilter } = await import('./world.js');
  const { runSchedule } = await import('./run-schedule.js');
  say({ loaded: true, ms: Math.round(performance.now() - t0) });

  // The world of `npm run simulate -- --faults … --no-faults … [--no-swarm]` (all classes, swarm, by default).
  const schedules = fc.sample(scheduleArb('mixed', 'mixed', faultFilter(arg('faults'), arg('no-faults'), !process.argv.includes('--no-swarm'))), { seed, numRuns: n });
  const only = arg('only');
  const order: number[] = only ? (JSON.parse(readFileSync(only, 'utf8')) as number[]) : schedules.map((_, i) => i);
  const times: number[] = [];
  // The baseline's cost of each schedule in simulated events (deterministic, unlike its wall time):
  // the parent runs a mutant's schedules cheapest first. And the schedules the unmutated code
  // fails (the wider world still finds failures not yet fixed): they cannot judge a mutant.
  const events: number[] = [];
  const failed: { schedule: number; violation: string }[] = [];
  // A wall-time cap on the schedules (not the load): past it, the mutant survived the schedules run so far.
  const capMs = Number(arg('cap-ms') ?? 0);
  const started = performance.now();
  for (const [k, i] of order.entries()) {
    if (!baseline && capMs > 0 && k > 0 && performance.now() - started > capMs) {
      say({ result: { verdict: 'survived', ran: k, cut: true } });
      return;
    }
    const s = schedules[i];
    if (s === undefined) throw new Error(`no schedule ${i} in a budget of ${n}`);
    if (baseline) ns.currentTestId = String(i);
    const t = performance.now();
    let violations: string[];
    try {
      const out = await runSchedule(s);
      events[i] = out.events;
      violations = out.ok ? [] : out.violations;
    } catch (err) {
      // The run itself threw (the engine's error escaped the simulated processes): a failure.
      violations = [`the run threw: ${(err as Error)?.stack ?? String(err)}`];
    }
    times[i] = Math.round(performance.now() - t);
    say({ progress: i });
    if (violations.length === 0) continue;
    if (baseline) {
      failed.push({ schedule: i, violation: violations[0]!.slice(0, 400) });
      continue;
    }
    let confirmed: boolean | null = null;
    if (!process.argv.includes('--static')) {
      ns.activeMutant = '';
      const again = await runSchedule(s).catch(() => null);
      confirmed = again !== null && again.ok;
    }
    say({ result: { verdict: confirmed === false ? 'unconfirmed' : 'killed', schedule: i, ran: order.indexOf(i) + 1, violations: violations.slice(0, 5).map((v) => v.slice(0, 1500)), scheduleValue: s } });
    return;
  }
  if (baseline) {
    const cov = ns.mutantCoverage ?? { static: {}, perTest: {} };
    const perMutant: Record<string, number[]> = {};
    for (const [test, hits] of Object.entries(cov.perTest)) for (const id of Object.keys(hits)) (perMutant[id] ??= []).push(Number(test));
    const file = arg('coverage-out');
    if (file) writeFileSync(file, JSON.stringify({ static: Object.keys(cov.static), perMutant, times: order.map((i) => [i, times[i]]), events: order.map((i) => [i, events[i] ?? 0]), failed }));
  }
  say({ result: { verdict: baseline ? 'baseline-passed' : 'survived', ran: order.length } });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(70);
  },
);
