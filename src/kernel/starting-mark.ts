/**
 * "A daemon is starting on this home": a file, jobs/daemon.starting, that `topup daemon` writes as
 * the process's first act (cli.ts, before its ~450 modules load and the store opens) and removes
 * once its presence is in the store (store/presence.ts). A start after a kill -9 took ~38 s at load
 * 15 (trial s36 D7), and meanwhile `topup status` said nobody ran the batch. Only node's own
 * modules here: this runs before everything else has loaded.
 *
 * A reader believes the file while its process exists on this machine and it is younger than
 * MAX_START_MS: a daemon killed while starting leaves a file naming a dead pid, and a pid reused
 * long after says nothing.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
// kernel/clock.ts imports nothing: the mark is still written before the CLI's modules load.
import { systemClock } from './clock.js';

const FILE = 'daemon.starting';
/** A start longer than this is not believed (a pid reused by another program). */
const MAX_START_MS = 10 * 60_000;

export interface StartingDaemon {
  pid: number;
  host: string;
  /** Wall time the process started. */
  at: number;
}

/** The home `topup` runs on, as program.ts reads it: --home, else TOPUP_HOME, else the current folder. */
function homeOf(args: readonly string[], env: NodeJS.ProcessEnv): string {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--home' && args[i + 1] !== undefined) return resolve(args[i + 1]!);
    if (a.startsWith('--home=')) return resolve(a.slice('--home='.length));
  }
  return resolve(env.TOPUP_HOME ?? process.cwd());
}

/**
 * Writes the mark when this process is `topup daemon` (the first word that is not an option or
 * --home's value). Never a reason not to start: a home without jobs/ yet, or one not writable,
 * gets no mark, and the daemon's own start says what is wrong.
 */
export function markDaemonStarting(args: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  let command: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--home') i++;
    else if (!args[i]!.startsWith('-')) {
      command = args[i];
      break;
    }
  }
  if (command !== 'daemon' || args.includes('--help') || args.includes('-h')) return;
  try {
    const mark: StartingDaemon = { pid: process.pid, host: hostname(), at: systemClock.now() };
    writeFileSync(join(homeOf(args, env), 'jobs', FILE), `${JSON.stringify(mark)}\n`, { mode: 0o644 });
  } catch {
    // No jobs/ yet (a first start makes it) or not writable: status says what it said before.
  }
}

/** Removes this process's mark (its presence is in the store now, or it stops). */
export function clearDaemonStarting(jobsDir: string): void {
  const file = join(jobsDir, FILE);
  try {
    const mark = JSON.parse(readFileSync(file, 'utf8')) as StartingDaemon;
    if (mark.pid === process.pid && mark.host === hostname()) rmSync(file, { force: true });
  } catch {
    // None, or unreadable: nothing to remove.
  }
}

/** A daemon process on this machine that has started and not yet announced itself, or null. */
export function startingDaemon(jobsDir: string, now = systemClock.now()): StartingDaemon | null {
  let mark: StartingDaemon;
  try {
    mark = JSON.parse(readFileSync(join(jobsDir, FILE), 'utf8')) as StartingDaemon;
  } catch {
    return null;
  }
  if (typeof mark.pid !== 'number' || typeof mark.at !== 'number' || mark.host !== hostname()) return null;
  if (now - mark.at > MAX_START_MS || mark.at - now > 60_000) return null;
  try {
    process.kill(mark.pid, 0);
    return mark;
  } catch (err) {
    // EPERM: it exists (another user's): believed.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? mark : null;
  }
}
