/**
 * Limits learned from 429s (account/learned-limits.ts), measured in virtual time: a 1,000-row batch
 * at 80 calls/min is 12.5 minutes of real time, here it is about a second.
 *
 * The REAL RateScheduler (a real SQLite file in a temp dir, opened by the store's openStore) runs on
 * the simulator's virtual clock (sim/scheduler.ts) and admits calls to the sandbox's own limiter
 * (src/sandbox/rate-limit.ts, exact sliding windows) set to what the real supplier enforces. Each
 * admitted call reaches the limiter half a round trip later; a refusal is a 429 with its
 * Retry-After, fed back half a round trip later the way the client does it (holdOff, then
 * onRateLimited), and the row is sent again. The gate starts from the spec's defaults and learns.
 *
 *   npx tsx bench/learned-limits.ts                      1,000 calls, API 10/1s,80/1m, RTT 20/60/150/300 ms,
 *                                                        and once without learning (the daemon before)
 *   npx tsx bench/learned-limits.ts --calls 2000 --api 10/1s,80/1m --start 40/1s,200/1m --rtt 60
 *
 * Figures: the 429s received, the calls per minute accepted after the first minute (the target is
 * at most 5 × 429 and at least 0.9 × 80/min), and the limits learned.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RateScheduler } from '../src/account/rate-gate.js';
import { limitsInForce } from '../src/account/learned-limits.js';
import { parseRateLimits } from '../src/config/config.js';
import type { RateWindow } from '../src/config/config.js';
import { seededEntropy } from '../src/kernel/entropy.js';
import { RateLimiter } from '../src/sandbox/rate-limit.js';
import { openStore } from '../src/store/store.js';
import { SimScheduler, quiesce } from '../sim/scheduler.js';

export interface LearnedRunOptions {
  /** Calls the API must accept (rows of the batch: one submit each). */
  calls: number;
  /** What the API enforces. */
  api: RateWindow[];
  /** What the gate starts from (the spec's defaults: TOPUP_RATE_LIMITS not given). */
  start: RateWindow[];
  /** Round trip of a call (virtual ms): half to reach the API, half for the answer to come back. */
  rttMs: number;
  /** Calls the daemon has in flight at most (workers). */
  workers?: number;
  marginMs?: number;
  seed?: number;
  /** false: the gate keeps its start limits (what the daemon did before learning). */
  learn?: boolean;
}

export interface LearnedRun {
  calls: number;
  rateLimited: number;
  /** Accepted calls per minute from the end of the first minute to the last accepted call. */
  perMinuteAfterFirst: number;
  /** Accepted calls in each whole minute (virtual). */
  byMinute: number[];
  virtualMinutes: number;
  /** The limits in force at the end, as `topup doctor` shows them. */
  inForce: string;
  learned: RateWindow[];
  /** Virtual second of each 429. */
  at429: number[];
}

export async function runLearnedLimits(o: LearnedRunOptions): Promise<LearnedRun> {
  const dir = mkdtempSync(join(tmpdir(), 'learned-'));
  const store = openStore(join(dir, 'topup.db'));
  try {
    const sim = new SimScheduler(seededEntropy(o.seed ?? 1));
    const clock = sim.clockFor('daemon');
    const gate = new RateScheduler(store.db, o.start, o.marginMs ?? 100, 15_000, { clock, account: 'default', learn: o.learn ?? true });
    const api = new RateLimiter(o.api);
    const half = o.rttMs / 2;
    let toSend = o.calls;
    const accepted: number[] = [];
    const at429: number[] = [];
    const worker = async (): Promise<void> => {
      while (toSend > 0) {
        toSend--;
        for (;;) {
          const release = await gate.acquire({ route: 'submit', method: 'POST', priority: 30 });
          const started = clock.mono();
          await gate.untilClear();
          await clock.sleep(half);
          const answer = api.admit('key', clock.mono());
          const arrived = clock.mono();
          await clock.sleep(half);
          release();
          if (answer.ok) {
            accepted.push(arrived);
            break;
          }
          at429.push(Math.round(clock.mono() / 100) / 10);
          const retryAfterMs = answer.retryAfterSec * 1000;
          gate.holdOff(retryAfterMs);
          gate.onRateLimited({ route: 'submit', startedMono: started, retryAfterMs });
        }
      }
    };
    let finished = false;
    const all = Promise.all(Array.from({ length: o.workers ?? 8 }, worker)).finally(() => void (finished = true));
    while (!finished) {
      await quiesce();
      if (finished) break;
      if (!sim.step()) {
        await quiesce();
        if (!finished) throw new Error('the simulated run stalled with nothing scheduled');
      }
    }
    await all;
    accepted.sort((a, b) => a - b);
    const last = accepted[accepted.length - 1]!;
    const after = accepted.filter((t) => t >= 60_000);
    const byMinute: number[] = [];
    for (const t of accepted) byMinute[Math.floor(t / 60_000)] = (byMinute[Math.floor(t / 60_000)] ?? 0) + 1;
    const inForce = limitsInForce(store.db, 'default', o.start, o.learn === false ? 'TOPUP_RATE_LIMITS' : null);
    return {
      calls: accepted.length,
      rateLimited: at429.length,
      perMinuteAfterFirst: last > 60_000 ? Math.round((after.length / ((last - 60_000) / 60_000)) * 10) / 10 : Number.NaN,
      byMinute: byMinute.map((n) => n ?? 0),
      virtualMinutes: Math.round((last / 60_000) * 100) / 100,
      inForce: inForce.detail,
      learned: gate.windows,
      at429,
    };
  } finally {
    store.db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(argv: string[]): Promise<void> {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const calls = Number(get('calls') ?? 1000);
  const api = parseRateLimits(get('api') ?? '10/1s,80/1m');
  const start = parseRateLimits(get('start') ?? '40/1s,200/1m');
  const rtts = (get('rtt') ?? '20,60,150,300').split(',').map(Number);
  const ceiling = Math.min(...api.map((w) => (w.limit * 60_000) / w.windowMs));
  const runs = [...rtts.map((rttMs) => ({ rttMs, learn: true })), { rttMs: rtts[Math.min(1, rtts.length - 1)]!, learn: false }];
  for (const { rttMs, learn } of runs) {
    const t0 = performance.now();
    const r = await runLearnedLimits({ calls, api, start, rttMs, learn });
    const ms = Math.round(performance.now() - t0);
    process.stdout.write(
      `${learn ? 'learning' : 'NOT learning (before)'}, RTT ${rttMs} ms: ${r.calls} calls in ${r.virtualMinutes} virtual min (${ms} ms real); ${r.rateLimited} × 429 (at ${r.at429.slice(0, 12).join(', ')}${r.at429.length > 12 ? ', …' : ''} s); ` +
        `${r.perMinuteAfterFirst}/min after the first minute = ${Math.round((r.perMinuteAfterFirst / ceiling) * 1000) / 10} % of ${ceiling}/min, ` +
        `the slowest whole minute after the first ${Math.min(...r.byMinute.slice(1, -1))}; per minute: ${r.byMinute.join(' ')}\n` +
        `  in force: ${r.inForce}\n`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
