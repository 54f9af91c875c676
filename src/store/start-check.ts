/**
 * The store checked before the daemon sends (review of issue 34, finding 1). A daemon that stopped
 * because its disk failed a write or a sync (dispatch/store-health.ts: SQLITE_IOERR_FSYNC /
 * SQLITE_IOERR_WRITE, store/wal-sync.ts) is restarted by the operator once the disk is checked; a
 * power cut may have come between. So every start, before anything is sent:
 *  - a TRUNCATE checkpoint folds the write-ahead log into the database and syncs it, so nothing the
 *    start relies on lives only in the log (not with Litestream: it owns the checkpoints);
 *  - `PRAGMA quick_check` (every page and b-tree read, no index cross-check: about as long as
 *    reading the file once; integrity_check is doctor's) must answer `ok`, else the daemon refuses
 *    to start with E_STORE: a store with damaged pages is restored from a backup, not sent from.
 * A store a power cut left consistent but short of its last commits reads `ok`: those rows read as
 * the recovery left them (see docs/architecture.md).
 */
import { TopupError, ErrorCode } from '../kernel/errors.js';
import type { Logger } from '../kernel/log.js';
import type { Db } from './db.js';

export function checkStoreAtStart(db: Db, log: Pick<Logger, 'debug' | 'warn'>, opts: { replicated: boolean }): void {
  const started = performance.now();
  if (!opts.replicated) {
    const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number; log: number; checkpointed: number }[];
    // Another process reading the log (a `topup status`) keeps a TRUNCATE from finishing: the check below still reads the store whole.
    if (r?.busy === 1) log.warn({ logFrames: r.log, checkpointed: r.checkpointed }, 'the start could not fold the whole write-ahead log into the database (another process reads it); checking the store as it is');
  }
  let answer: string;
  try {
    answer = (db.pragma('quick_check') as { quick_check: string }[]).map((row) => row.quick_check).join('; ');
  } catch (err) {
    // A page damaged badly enough (a b-tree page's header overwritten) makes SQLite abandon the
    // check itself with SQLITE_CORRUPT rather than list what it found: the same answer, not ok.
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string' || !/^SQLITE_(CORRUPT|NOTADB)/.test(code)) throw err;
    answer = `${code}: ${(err as Error).message}`;
  }
  if (answer !== 'ok') {
    throw new TopupError(ErrorCode.Store, `the store failed its check at start (PRAGMA quick_check: ${answer.slice(0, 500)}): nothing is sent from it. Check the disk, then restore the last backup (topup restore BACKUP, docs/backup.md)`);
  }
  log.debug({ ms: Math.round(performance.now() - started) }, 'store checked at start: ok');
}
