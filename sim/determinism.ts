/**
 * `npx tsx sim/determinism.ts --seed S --schedules N [--at K,…] [--jitter MS] [run.ts's --accounts,
 *  --api-orders, --faults, --no-faults, --no-swarm]`
 *
 * A failing seed must replay exactly: nothing a run decides may read real time or state that
 * outlives a schedule. This runs schedules 0..N-1 of the seed in one process, as a worker of
 * `npm run simulate` does, keeping each one's full event trace and verdict; then runs the
 * schedules named by `--at` (default: the last) again in the same process, with real-time jitter
 * in every wait for quiet (a machine under load, made on purpose), and compares: the same
 * events, in the same order, at the same simulated times, and the same verdict. A difference is
 * printed (the first event that differs) and the exit code is 1.
 */
import fc from 'fast-check';
import { scheduleArb, type AccountsMix, type ApiOrdersMix, type Schedule } from './schedule.js';
import { ALL_FAULTS, faultFilter, type FaultFilter } from './world.js';
import { runSchedule, type RunOutcome } from './run-schedule.js';
import { setRealJitter } from './scheduler.js';

type Traced = RunOutcome & { fullTrace?: string[] };
const run = (s: Schedule): Promise<Traced> => runSchedule(s, { fullTrace: true } as Parameters<typeof runSchedule>[1]) as Promise<Traced>;

function compare(i: number, a: Traced, b: Traced): string | null {
  const x = a.fullTrace ?? [];
  const y = b.fullTrace ?? [];
  const k = x.findIndex((e, j) => e !== y[j]);
  if (k >= 0 || x.length !== y.length) {
    const j = k >= 0 ? k : Math.min(x.length, y.length);
    return `schedule ${i}: the events part at event ${j} of ${x.length} / ${y.length}:\n  first:  ${x.slice(Math.max(0, j - 3), j + 2).join('\n          ')}\n  again:  ${y.slice(Math.max(0, j - 3), j + 2).join('\n          ')}`;
  }
  if (a.ok !== b.ok || a.violations.join('\n') !== b.violations.join('\n')) return `schedule ${i}: the same events, another verdict: ${a.violations.join('; ') || 'ok'} / ${b.violations.join('; ') || 'ok'}`;
  return null;
}

export interface DeterminismReport {
  /** Per schedule run again: null when the same events and verdict, else what differs. */
  again: { schedule: number; events: number; ok: boolean; differs: string | null }[];
  /** Schedules of the first pass that failed (their verdicts, for the record). */
  failed: string[];
}

/**
 * Schedules 0..n-1 of `seed` in this process, then those of `at` again with `jitter` ms of real
 * time in every wait for quiet (`jitterAll`: in the first pass too).
 */
export async function checkDeterminism(seed: number, n: number, at: number[], opts: { jitter?: number; jitterAll?: boolean; accounts?: AccountsMix; apiOrders?: ApiOrdersMix; faults?: FaultFilter } = {}): Promise<DeterminismReport> {
  const jitter = opts.jitter ?? 3;
  // fast-check's sample draws the schedules fc.check draws for the same seed (run.ts's worker).
  const schedules = fc.sample(scheduleArb(opts.accounts ?? 'mixed', opts.apiOrders ?? 'mixed', opts.faults ?? ALL_FAULTS), { seed, numRuns: n });
  const first = new Map<number, Traced>();
  const wanted = new Set(at);
  const failed: string[] = [];
  setRealJitter(opts.jitterAll ? jitter : 0);
  try {
    for (let i = 0; i < n; i++) {
      const out = await run(schedules[i]!);
      if (wanted.has(i)) first.set(i, out);
      if (!out.ok) failed.push(`schedule ${i}: ${out.violations.join('; ')}`);
    }
    setRealJitter(jitter);
    const again: DeterminismReport['again'] = [];
    for (const i of at) {
      const out = await run(schedules[i]!);
      again.push({ schedule: i, events: out.events, ok: out.ok, differs: compare(i, first.get(i)!, out) });
    }
    return { again, failed };
  } finally {
    setRealJitter(0);
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const n = Number(get('schedules') ?? 20);
  const jitter = Number(get('jitter') ?? 3);
  const r = await checkDeterminism(Number(get('seed') ?? 42), n, (get('at') ?? String(n - 1)).split(',').map(Number), {
    jitter,
    jitterAll: argv.includes('--jitter-all'),
    accounts: (get('accounts') ?? 'mixed') as AccountsMix,
    apiOrders: (get('api-orders') ?? 'mixed') as ApiOrdersMix,
    faults: faultFilter(get('faults'), get('no-faults'), !argv.includes('--no-swarm')),
  });
  for (const f of r.failed) process.stdout.write(`${f}\n`);
  for (const a of r.again) process.stdout.write(a.differs === null ? `schedule ${a.schedule}: the same ${a.events} events and verdict (${a.ok ? 'ok' : 'failed'}) run again with ${jitter} ms jitter\n` : `${a.differs}\n`);
  process.exitCode = r.again.some((a) => a.differs !== null) ? 1 : 0;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) void main();
