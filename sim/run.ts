/**
 * `npm run simulate -- --seed S --schedules N [--workers W] [--accounts mixed|one|two] [--api-orders mixed|none|all]
 *   [--faults a,b] [--no-faults c,d] [--no-swarm] [--replay FILE] [--schedule N] [--verbose] [--json]`
 *
 * `--schedule N` runs schedule N (from 0) of the seed alone, as a run of the seed draws it (with the
 * same --accounts/--api-orders/--faults), writes it to sim-failures/<seed>-<N>.json and replays it.
 *
 * Fault classes (sim/world.ts FAULT_CLASSES): each schedule turns on a random subset (swarm
 * testing); `--faults` limits the subset to those named, `--no-faults` never turns those on,
 * `--no-swarm` turns every allowed class on in every schedule.
 *
 * Runs N schedules (schedule.ts) of the whole engine under the simulator, split over W worker
 * processes (default: one per core), each a fast-check run from seed S + its index. A failing
 * schedule is shrunk by fast-check to the smallest one that still fails, written to
 * sim-failures/<seed>.json and printed with the command that replays it exactly:
 * `npm run simulate -- --replay sim-failures/<seed>.json --verbose`.
 *
 * Prints schedules run, schedules per second, invariants checked, the behaviours the runs went
 * through (answers lost, replays, crashes, two daemons, operator actions, rows ended in each
 * state, the answer corpus variants used), and every failure.
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { scheduleArb, type AccountsMix, type ApiOrdersMix, type Schedule } from './schedule.js';
import { ALL_FAULTS, faultFilter, FAULT_CLASSES, type FaultFilter } from './world.js';
import { runSchedule, type RunOutcome } from './run-schedule.js';

interface Args {
  seed: number;
  schedules: number;
  workers: number;
  replay: string | undefined;
  /** `--schedule N`: run only schedule N (0-based) of the seed, as `fc.check` draws it, and write it out to replay. */
  schedule: number | undefined;
  verbose: boolean;
  json: boolean;
  worker: boolean;
  /** Which schedules have two supplier accounts: one in three (mixed, the default), none, all. */
  accounts: AccountsMix;
  /** Which schedules have a shop placing API orders (issue 23): one in four (mixed, the default), none, all. */
  apiOrders: ApiOrdersMix;
  /** Issue 29: the fault classes schedules may turn on (`--faults`, `--no-faults`) and whether each is drawn per schedule (swarm) or always on (`--no-swarm`). */
  faults: FaultFilter;
  /** As given, passed on to the workers. */
  faultArgs: string[];
}

function parseArgs(argv: string[]): Args {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const seed = get('seed') === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(get('seed'));
  const schedules = Number(get('schedules') ?? 1_000);
  const workers = Number(get('workers') ?? availableParallelism());
  if (!Number.isSafeInteger(seed) || !Number.isSafeInteger(schedules) || schedules < 1 || !Number.isSafeInteger(workers) || workers < 1) {
    throw new Error('usage: npm run simulate -- [--seed S] [--schedules N] [--workers W] [--replay FILE] [--verbose] [--json]');
  }
  const accounts = (get('accounts') ?? 'mixed') as AccountsMix;
  if (!['mixed', 'one', 'two'].includes(accounts)) throw new Error('--accounts: mixed, one or two');
  const apiOrders = (get('api-orders') ?? 'mixed') as ApiOrdersMix;
  if (!['mixed', 'none', 'all'].includes(apiOrders)) throw new Error('--api-orders: mixed, none or all');
  const swarm = !argv.includes('--no-swarm');
  const faults = faultFilter(get('faults'), get('no-faults'), swarm);
  const faultArgs = [...(get('faults') !== undefined ? ['--faults', get('faults')!] : []), ...(get('no-faults') !== undefined ? ['--no-faults', get('no-faults')!] : []), ...(swarm ? [] : ['--no-swarm'])];
  const one = get('schedule') === undefined ? undefined : Number(get('schedule'));
  if (one !== undefined && (!Number.isSafeInteger(one) || one < 0)) throw new Error('--schedule N: a schedule index from 0');
  return { seed, schedules, workers, accounts, apiOrders, faults, faultArgs, schedule: one, replay: get('replay'), verbose: argv.includes('--verbose'), json: argv.includes('--json'), worker: argv.includes('--worker') };
}

/**
 * The code a failure was found on: a hash of src/, sim/ and test/fixtures/ (what a schedule runs).
 * Written into every failure file and compared on replay: seed 20261133's "verdict that does not
 * replay" (docs/simulator.md, Determinism) was a failure found on one checkout's code and replayed
 * on another's, where a fixed invariant judged the same events differently.
 */
export function codeTree(root = join(import.meta.dirname, '..')): string {
  const h = createHash('sha256');
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else h.update(relative(root, p)).update(readFileSync(p));
    }
  };
  for (const part of ['src', 'sim', 'test/fixtures']) walk(join(root, part));
  return h.digest('hex').slice(0, 16);
}

/** Shrinking's budget: candidates run, and real time. */
const SHRINK_RUNS = 400;
const SHRINK_MS = 5 * 60_000;

/** What one worker (or one run of schedules) found. */
export interface SimReport {
  seed: number;
  schedules: number;
  ms: number;
  invariantsChecked: number;
  behaviours: Record<string, number>;
  variants: string[];
  failure: null | { seed: number; path: string; schedule: Schedule; violations: string[]; trace: string[]; shrinks: number; afterRuns: number };
}

/**
 * Runs `numRuns` schedules from `seed` with fast-check; a failure is shrunk. `onRun` sees every
 * outcome (for figures); the shrinking runs are not counted as schedules.
 */
export async function simulate(seed: number, numRuns: number, opts: { onRun?: (o: RunOutcome) => void; accounts?: AccountsMix; apiOrders?: ApiOrdersMix; faults?: FaultFilter } = {}): Promise<SimReport> {
  const started = performance.now();
  const behaviours: Record<string, number> = {};
  const variants = new Set<string>();
  let invariantsChecked = 0;
  let counted = 0;
  let shrinking = false;
  let shrinkRuns = 0;
  let shrinkStarted = 0;
  let last: RunOutcome | undefined;
  const details = await fc.check(
    fc.asyncProperty(scheduleArb(opts.accounts, opts.apiOrders, opts.faults ?? ALL_FAULTS), async (s) => {
      // Shrinking runs every smaller candidate in full: bounded, so a failure is reported in
      // minutes (the schedule found so far is the smallest failing one; more budget, smaller).
      if (shrinking && (++shrinkRuns > SHRINK_RUNS || performance.now() - shrinkStarted > SHRINK_MS)) return true;
      const out = await runSchedule(s);
      if (!shrinking) {
        counted++;
        invariantsChecked += out.figures.invariantsChecked;
        for (const [k, v] of Object.entries(out.behaviours)) behaviours[k] = (behaviours[k] ?? 0) + v;
        for (const v of out.variants) variants.add(v);
        opts.onRun?.(out);
      }
      if (!out.ok) {
        if (!shrinking) shrinkStarted = performance.now();
        shrinking = true;
        last = out;
      }
      return out.ok;
    }),
    { seed, numRuns, endOnFailure: false },
  );
  const failure = details.failed && details.counterexample
    ? {
        seed: details.seed,
        path: details.counterexamplePath ?? '',
        schedule: details.counterexample[0] as Schedule,
        violations: last?.violations ?? [String(details.errorInstance)],
        trace: last?.trace ?? [],
        shrinks: details.numShrinks,
        // Schedules run until the first failing one (it included).
        afterRuns: details.numRuns,
      }
    : null;
  // The shrunk schedule's own outcome (the last failing run is the smallest).
  if (failure) {
    const again = await runSchedule(failure.schedule);
    failure.violations = again.violations;
    failure.trace = again.trace;
  }
  return { seed, schedules: counted, ms: performance.now() - started, invariantsChecked, behaviours, variants: [...variants], failure };
}

async function replay(file: string, verbose: boolean): Promise<number> {
  const text = file.trim().startsWith('{') ? file : readFileSync(file, 'utf8');
  const parsed = JSON.parse(text) as { schedule?: Schedule; tree?: string } & Schedule;
  const schedule = parsed.schedule ?? parsed;
  const tree = codeTree();
  if (parsed.tree !== undefined && parsed.tree !== tree) {
    process.stdout.write(`NOTE: this failure was found on other code (tree ${parsed.tree}; this checkout is ${tree}): the same schedule runs the same events, but a changed engine or invariant may judge them otherwise\n`);
  }
  const out = await runSchedule(schedule, { verbose, keep: true });
  process.stdout.write(`${out.ok ? 'OK' : 'FAILED'}: ${out.events} events, ${(out.simMs / 60_000).toFixed(1)} simulated minutes, ${out.processes} processes, ${out.crashes} crashes\n`);
  for (const v of out.violations) process.stdout.write(`  - ${v}\n`);
  if (!out.ok) process.stdout.write(`last events:\n${out.trace.slice(-40).map((l) => `  ${l}`).join('\n')}\n`);
  if (out.home) process.stdout.write(`home kept: ${out.home}\n`);
  return out.ok ? 0 : 1;
}

function runWorker(args: Args, seed: number, n: number): Promise<SimReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, '--worker', '--seed', String(seed), '--schedules', String(n), '--accounts', args.accounts, '--api-orders', args.apiOrders, ...args.faultArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      let nl: number;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line.startsWith('{')) {
          const msg = JSON.parse(line) as { progress?: number; report?: SimReport };
          if (msg.report) resolve(msg.report);
          else if (msg.progress !== undefined && !args.json) progress(seed, msg.progress);
        }
      }
    });
    child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`simulation worker (seed ${seed}) exited with ${code}`))));
  });
}

const done = new Map<number, number>();
function progress(seed: number, n: number): void {
  done.set(seed, n);
  const total = [...done.values()].reduce((a, b) => a + b, 0);
  process.stderr.write(`\r${total} schedules run`);
}

function print(reports: SimReport[], wallMs: number, args: Args): void {
  const schedules = reports.reduce((a, r) => a + r.schedules, 0);
  const invariants = reports.reduce((a, r) => a + r.invariantsChecked, 0);
  const behaviours: Record<string, number> = {};
  for (const r of reports) for (const [k, v] of Object.entries(r.behaviours)) behaviours[k] = (behaviours[k] ?? 0) + v;
  const variants = new Set(reports.flatMap((r) => r.variants));
  const failures = reports.filter((r) => r.failure);
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ seed: args.seed, workers: args.workers, schedules, wallMs: Math.round(wallMs), schedulesPerSecond: schedules / (wallMs / 1000), invariantsChecked: invariants, behaviours, corpusVariants: variants.size, failures: failures.map((r) => r.failure) })}\n`);
    return;
  }
  process.stderr.write('\n');
  const lines = [
    `seed ${args.seed}, ${args.workers} worker(s), accounts ${args.accounts}, api orders ${args.apiOrders}, fault classes ${args.faults.allowed.length === FAULT_CLASSES.length ? 'all' : args.faults.allowed.join(',') || 'none'}${args.faults.swarm ? ' (swarm)' : ' (all on)'}: ${schedules} schedules in ${(wallMs / 1000).toFixed(1)} s (${(schedules / (wallMs / 1000)).toFixed(1)} schedules/s)`,
    `invariants checked: ${invariants}`,
    `answer corpus variants used: ${variants.size}`,
    'behaviours (summed over the schedules):',
    ...Object.entries(behaviours).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `  ${k}: ${v}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (failures.length === 0) {
    process.stdout.write('no invariant violated\n');
    return;
  }
  mkdirSync('sim-failures', { recursive: true });
  for (const r of failures) {
    const f = r.failure!;
    const file = join('sim-failures', `${f.seed}.json`);
    // The fault classes the schedule had on (swarm testing) head the file: what world it failed in.
    writeFileSync(file, `${JSON.stringify({ seed: f.seed, path: f.path, tree: codeTree(), faults: f.schedule.world?.faults ?? null, violations: f.violations, schedule: f.schedule }, null, 1)}\n`);
    process.stdout.write(`\nFAILED (worker seed ${f.seed}, fast-check path ${f.path}, shrunk ${f.shrinks} times${f.schedule.world ? `; fault classes on: ${f.schedule.world.faults.join(', ') || 'none'}` : ''}):\n`);
    for (const v of f.violations) process.stdout.write(`  - ${v}\n`);
    process.stdout.write(`last events:\n${f.trace.slice(-25).map((l) => `  ${l}`).join('\n')}\n`);
    process.stdout.write(`replay: npm run simulate -- --replay ${file} --verbose\n`);
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.replay) {
    process.exitCode = await replay(args.replay, args.verbose);
    return;
  }
  if (args.schedule !== undefined) {
    // One schedule of a seed by its index (a baseline's "seed S #N"): fc.sample draws what fc.check
    // draws for the same seed (sim/determinism.ts). Written out first, so it replays with --replay.
    const drawn = fc.sample(scheduleArb(args.accounts, args.apiOrders, args.faults), { seed: args.seed, numRuns: args.schedule + 1 })[args.schedule]!;
    mkdirSync('sim-failures', { recursive: true });
    const file = join('sim-failures', `${args.seed}-${args.schedule}.json`);
    writeFileSync(file, `${JSON.stringify({ seed: args.seed, index: args.schedule, tree: codeTree(), faults: drawn.world?.faults ?? null, schedule: drawn }, null, 1)}\n`);
    process.stdout.write(`schedule ${args.schedule} of seed ${args.seed} written to ${file}\n`);
    process.exitCode = await replay(file, args.verbose);
    return;
  }
  if (args.worker) {
    const report = await simulate(args.seed, args.schedules, {
      accounts: args.accounts,
      apiOrders: args.apiOrders,
      faults: args.faults,
      onRun: (() => {
        let n = 0;
        return () => {
          if (++n % 25 === 0) process.stdout.write(`${JSON.stringify({ progress: n })}\n`);
        };
      })(),
    });
    process.stdout.write(`${JSON.stringify({ report })}\n`);
    return;
  }
  const started = performance.now();
  const per = Math.ceil(args.schedules / args.workers);
  const reports = await Promise.all(Array.from({ length: args.workers }, (_, i) => runWorker(args, args.seed + i, Math.min(per, args.schedules - i * per))).filter((_, i) => i * per < args.schedules));
  print(reports, performance.now() - started, args);
  process.exitCode = reports.some((r) => r.failure) ? 1 : 0;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 70;
  });
}
