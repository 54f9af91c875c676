/**
 * Whether this home's store can be written, as another process sees it from the disk (issue 32
 * item 4). The daemon knows it by its failed writes (dispatch/store-health.ts), in memory only: the
 * store is what cannot be written, so it cannot say so there. `topup status` and `topup doctor`
 * look at the disk themselves: the database file gone (while the home's mark says it had one), the
 * file system of jobs/ read-only, or out of space. The same words as the daemon's log line.
 */
import { accessSync, constants, existsSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { MARK_FILE } from '../store/backup.js';
import { STORE_MIN_FREE_BYTES, storeDownAdvice, storeDownSentence } from '../dispatch/store-health.js';
import type { DaemonPresence } from '../store/presence.js';

/** Below this many bytes free a write of the store fails: the daemon's measure too (dispatch/store-health.ts). */
export { STORE_MIN_FREE_BYTES };

export interface StoreDiskProblem {
  code: 'ENOENT' | 'EROFS' | 'EACCES' | 'ENOSPC';
  /** One sentence, with what to do. */
  line: string;
}

export function storeDiskProblem(paths: { home: string; jobsDir: string; dbPath: string }): StoreDiskProblem | null {
  const hadStore = existsSync(join(paths.home, MARK_FILE));
  if (!existsSync(paths.dbPath) && hadStore) {
    return { code: 'ENOENT', line: `${storeDownSentence('ENOENT')} (${paths.dbPath} is missing; this home ran a store before): sending is stopped. Put the store back (topup restore BACKUP) and restart the daemon: docs/backup.md` };
  }
  if (!existsSync(paths.jobsDir)) return null;
  try {
    accessSync(paths.jobsDir, constants.W_OK);
    if (existsSync(paths.dbPath)) accessSync(paths.dbPath, constants.W_OK);
  } catch (err) {
    const code = (err as { code?: string }).code === 'EROFS' ? 'EROFS' : 'EACCES';
    return { code, line: `${storeDownSentence('EROFS')} (${code} on ${paths.jobsDir}): sending is stopped until it can be written; remount it read-write or fix its owner, it resumes by itself` };
  }
  try {
    const fs = statfsSync(paths.jobsDir);
    const free = fs.bavail * fs.bsize;
    if (free < STORE_MIN_FREE_BYTES) {
      return { code: 'ENOSPC', line: `${storeDownSentence('ENOSPC')} (${Math.floor(free / 1024)} KiB free on ${paths.jobsDir}): sending is stopped until space returns; free some, it resumes by itself` };
    }
  } catch {
    // No statfs here: the write check above is all there is.
  }
  return null;
}

/**
 * The running daemon's stop until a restart (its disk failed a write or a sync: store/presence.ts
 * storeStopped), which no look at the disk from here can find: the disk may answer well now, and
 * only that process knows its log lost frames. Null when no daemon runs or it has not stopped so.
 */
export function storeStopLine(daemon: DaemonPresence | null): string | null {
  const s = daemon?.storeStopped;
  if (!daemon || !s) return null;
  return `${storeDownSentence(s.code)} (${s.code}, the daemon pid ${daemon.pid}, since ${new Date(s.since).toISOString().replace('T', ' ').slice(0, 19)} UTC): ${storeDownAdvice(s.code)}`;
}
