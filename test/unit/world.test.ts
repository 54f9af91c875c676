/**
 * Issue 20: time, timers and randomness come into the engine through the runtime (rt.clock,
 * rt.entropy), so the simulator (src/sim/) can run the whole engine under a seed. This holds the
 * source to it:
 *  - nothing in src/ reads the wall clock but kernel/clock.ts (`Date.now()`, `new Date()` without an
 *    argument);
 *  - nothing in the engine (the folders a simulated process runs) sets a timer or draws a random
 *    number of its own: only the places listed below, each for a reason that keeps it off the
 *    money path.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededEntropy } from '../../src/kernel/entropy.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

function files(dir = SRC): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}
const rel = (p: string): string => relative(SRC, p).split('\\').join('/');
/** Source without comments, so a comment may name what the code must not do. */
const code = (p: string): string => readFileSync(p, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');

/**
 * Timers and random draws outside kernel/clock.ts and kernel/entropy.ts, each with why it is not the engine's.
 * (The sandbox is a separate program with a clock of its own.)
 */
const ALLOWED_TIMERS: Record<string, string> = {
  'store/presence.ts': "the daemon's heartbeat in the store, for commands beside it",
  'store/upkeep.ts': 'idle checkpoints of the database file',
  'notify/notifier.ts': 'notification retries, never on the money path',
  'reports/schedule.ts': "cron jobs' bounded stop",
  'intake/watch.ts': 'files settle in real time: the operating system writes them',
  'outbox/atomic-write.ts': 'yields to the event loop between chunks; the temporary name only has to be unique',
  'outbox/result-xlsx.ts': 'back-pressure of the workbook writer',
  'commands/cancel.ts': 'a command waiting for the daemon',
  'commands/foreground.ts': "a command's progress line",
  'orderapi/tokens.ts': 'API tokens are secrets: node:crypto, never a source a simulator seeds',
  'ops/backup-job.ts': "the store generation mirrored into the home's mark file every 10 s (backup.md: how a copy put back by hand is seen); never on the money path",
  'store/backup.ts': "a backup folder's name only has to be unique: a copy of the store is not the engine's",
  'standby/fence.ts': "a node's id (node:crypto) and how long a reading of the fence file holds: the fence is read from another machine's clock-free file, never from the simulator's world",
  'standby/litestream.ts': "restarting and stopping the litestream child process: a real program's supervision, never the money path",
  'standby/takeover.ts': "waiting for a live primary to see the fence move before the replica is restored: an operator's command, never the engine",
  'intake/writers.ts': 'the late-lines /proc scan yields to the event loop between slices of processes (setImmediate, no time): the operating system\'s open files, never the money path',
  'orders/desk.ts': 'the group commit: acceptances arriving in the same turn of the event loop share one transaction (setImmediate, no time)',
};

describe('the engine runs on the injected clock and entropy', () => {
  it('only kernel/clock.ts reads the wall clock', () => {
    const readers = files().filter((f) => !rel(f).startsWith('sandbox/') && rel(f) !== 'kernel/clock.ts' && /Date\.now\(\)|new Date\(\)/.test(code(f)));
    expect(readers.map(rel)).toEqual([]);
  });

  it('no timer or random draw outside kernel/clock.ts and kernel/entropy.ts, but the listed places', () => {
    const found = files()
      .map(rel)
      .filter((f) => !f.startsWith('sandbox/') && !f.startsWith('console/') && !['kernel/clock.ts', 'kernel/entropy.ts'].includes(f))
      .filter((f) => /\bset(Timeout|Interval|Immediate)\(|timers\/promises|Math\.random\(|randomBytes\(|randomUUID\(/.test(code(join(SRC, f))));
    expect(found.filter((f) => !(f in ALLOWED_TIMERS))).toEqual([]);
    // The list names no file that does not need it any more.
    expect(Object.keys(ALLOWED_TIMERS).filter((f) => !found.includes(f))).toEqual([]);
  });

  it('a seeded source gives the same numbers for the same seed, others for another, in [0, 1)', () => {
    const a = seededEntropy(42);
    const b = seededEntropy(42);
    const c = seededEntropy(43);
    const xs = Array.from({ length: 1_000 }, () => a.random());
    expect(Array.from({ length: 1_000 }, () => b.random())).toEqual(xs);
    expect(Array.from({ length: 1_000 }, () => c.random())).not.toEqual(xs);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    expect(seededEntropy(7).hex(4)).toMatch(/^[0-9a-f]{8}$/);
    expect(seededEntropy(7).hex(4)).toBe(seededEntropy(7).hex(4));
  });
});
