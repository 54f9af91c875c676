/**
 * Keeping the one SQLite file small and quick over months of use:
 *  - the write-ahead log is checkpointed (folded into the database) when this process is idle and
 *    at every stop, and cut back to JOURNAL_SIZE_LIMIT (db.ts) after a checkpoint;
 *  - the call log (api_calls) is pruned of calls older than the longest rate window
 *    (account/rate-gate.ts prunes at every start and every 200 calls; the idle upkeep prunes too,
 *    so a daemon that makes few calls does not keep them for ever);
 *  - the console's balance readings and rate minutes (store/pictures.ts) older than 40 days go too;
 *  - the sizes are reported by `topup doctor`.
 *
 * Choices:
 *  - Idle: PASSIVE, which never waits for anyone: another process (a `topup submit` beside the
 *    daemon) may be reading or writing, and must not be held up by housekeeping. What it cannot
 *    fold in now it folds in next time.
 *  - At a stop: TRUNCATE (the log file is emptied), waiting at most STOP_BUSY_MS for a reader of
 *    another process; a stop is never held for the store's usual 10 s busy timeout.
 */
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../kernel/log.js';
import { systemClock } from '../kernel/clock.js';
import { prunePictures } from './pictures.js';
import { BUSY_TIMEOUT_MS, JOURNAL_SIZE_LIMIT, type Db } from './db.js';

const STOP_BUSY_MS = 1_000;

export interface CheckpointResult {
  /** The checkpoint could not finish (another connection was using the log). */
  busy: boolean;
  /** Frames in the log, and how many of them are in the database now. */
  logFrames: number;
  checkpointed: number;
}

export function checkpoint(db: Db, log: Logger | undefined, when: 'idle' | 'shutdown'): CheckpointResult | null {
  if (!db.open) return null;
  try {
    if (when === 'shutdown') db.pragma(`busy_timeout = ${STOP_BUSY_MS}`);
    const [r] = db.pragma(`wal_checkpoint(${when === 'shutdown' ? 'TRUNCATE' : 'PASSIVE'})`) as { busy: number; log: number; checkpointed: number }[];
    const result = { busy: r?.busy === 1, logFrames: r?.log ?? 0, checkpointed: r?.checkpointed ?? 0 };
    log?.debug({ when, ...result }, 'database checkpoint');
    return result;
  } catch (err) {
    // Never a reason to fail: the log is folded in by SQLite itself as it grows.
    log?.debug({ when, err: (err as Error).message }, 'database checkpoint skipped');
    return null;
  } finally {
    if (when === 'shutdown' && db.open) db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}

export interface DatabaseSize {
  /** Bytes of the database file, its write-ahead log and its shared-memory index. */
  fileBytes: number;
  walBytes: number;
  shmBytes: number;
  /** Share of the database's pages that are free (left by deleted rows; reused before the file grows). */
  freeShare: number;
  /** Rows of the call log (api_calls): a few thousand at most when pruning works. */
  callLogRows: number;
}

const sizeOf = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

export function databaseSize(db: Db, dbPath: string): DatabaseSize {
  const pages = Number(db.pragma('page_count', { simple: true }));
  const free = Number(db.pragma('freelist_count', { simple: true }));
  const calls = (db.prepare('SELECT count(*) AS n FROM api_calls').get() as { n: number }).n;
  return {
    fileBytes: sizeOf(dbPath),
    walBytes: sizeOf(`${dbPath}-wal`),
    shmBytes: sizeOf(`${dbPath}-shm`),
    freeShare: pages > 0 ? free / pages : 0,
    callLogRows: calls,
  };
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** For `topup doctor`: the sizes, and whether the log is larger than a checkpoint leaves it. */
export function describeSize(s: DatabaseSize): { ok: boolean; detail: string } {
  const overgrown = s.walBytes > JOURNAL_SIZE_LIMIT;
  const detail =
    `database ${mb(s.fileBytes)}, write-ahead log ${mb(s.walBytes)}, ${Math.round(s.freeShare * 100)}% free pages; call log ${s.callLogRows} rows` +
    (overgrown
      ? `; the write-ahead log is over ${mb(JOURNAL_SIZE_LIMIT)}: a process keeps a read open so it cannot be folded in (a stuck topup process? stop it; the daemon folds it in when idle and at its stop)`
      : '');
  return { ok: !overgrown, detail };
}

export interface Upkeep {
  stop(): void;
}

/**
 * Every `everyMs`, when `idle()` says this process has nothing to do: prune the call log and
 * checkpoint (PASSIVE). Its timer never keeps the process alive.
 */
export function startUpkeep(db: Db, log: Logger, idle: () => boolean, pruneCalls: () => number, everyMs = 5 * 60_000, checkpoints = true): Upkeep {
  const timer = setInterval(() => {
    try {
      if (!db.open || !idle()) return;
      const pruned = pruneCalls() + prunePictures(db, systemClock.now());
      // Litestream replicating the store owns its checkpoints (standby/litestream.ts).
      const r = checkpoints ? checkpoint(db, log, 'idle') : null;
      log.debug({ prunedCalls: pruned, checkpoint: r }, 'idle upkeep');
    } catch (err) {
      log.debug({ err: (err as Error).message }, 'idle upkeep skipped');
    }
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** At most one warning about the worker's failed checkpoints this often (ms). */
export const CHECKPOINT_WARN_EVERY_MS = 60_000;

/**
 * What a failed checkpoint of the worker says: a warning with the error's code (SQLITE_IOERR_FSYNC
 * after a write-back error, SQLITE_FULL, SQLITE_BUSY…), at most one a minute, counting the failures
 * since the one before. They were logged at debug only: a disk failing the checkpoint's syncs,
 * or a log that can never be folded in and grows, went unsaid while the worker tried every 100 ms
 * (a warning each time would be 600 lines a minute). `now`: monotonic ms (tests give their own).
 */
export function checkpointFailures(log: Pick<Logger, 'warn'> | undefined, now: () => number = () => performance.now()): (f: { error: string; code?: string | undefined }) => void {
  let lastAt = Number.NEGATIVE_INFINITY;
  let failed = 0;
  return (f) => {
    failed++;
    const t = now();
    if (t - lastAt < CHECKPOINT_WARN_EVERY_MS) return;
    lastAt = t;
    log?.warn(
      { code: f.code ?? 'UNKNOWN', err: f.error, failed },
      `a checkpoint of the store failed (${f.code ?? 'UNKNOWN'}; ${failed} since the last warning): the write-ahead log is not folded into the database and grows until one succeeds (the store's own connection checkpoints past ${BUSY_AUTOCHECKPOINT_PAGES} pages); said at most once a minute`,
    );
    failed = 0;
  };
}

/** How often the busy checkpointer folds the log in (ms). */
export const BUSY_CHECKPOINT_MS = 100;
/** The worker ends after this long without work (an idle daemon keeps no thread and connection for it). */
export const BUSY_CHECKPOINT_LINGER_MS = 30_000;
/**
 * The daemon's own connection checkpoints (on commit, on the event loop) only once the log holds
 * this many pages, while the worker folds it in: a backstop that also lets the log start again from
 * its beginning (a worker's checkpoint rarely catches up with a busy writer, and only a checkpoint
 * that has copied every frame lets the next write restart the log). SQLite's default is 1,000.
 */
export const BUSY_AUTOCHECKPOINT_PAGES = 10_000;
const DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;

/**
 * Checkpoints off the event loop while the daemon works (store/checkpoint-worker.ts). SQLite's
 * automatic checkpoint runs in the commit that fills the log past 1,000 pages, on the connection's
 * thread: at 400 orders/s (about 20 pages written per order) one every ~50 orders, each copying the
 * log's pages into the database and syncing the log and the database, with the event loop held.
 * Here, while `busy()` says rows are moving, a worker's PASSIVE checkpoint does that copy every
 * BUSY_CHECKPOINT_MS, and the daemon's connection checkpoints only past BUSY_AUTOCHECKPOINT_PAGES,
 * finding most pages folded in already. The worker is started at the first busy look and ended
 * after BUSY_CHECKPOINT_LINGER_MS without work: an idle daemon holds no thread for it (its isolate
 * and connection are ~10 MB of RSS). Safety is SQLite's: a checkpoint copies committed frames
 * only, syncs the log before and the database after, and a process killed mid-copy is recovered
 * from the log. Without the worker's file (tests run from the TypeScript sources) or once it
 * fails, the connection checkpoints as SQLite does by default. Never with litestream replicating
 * the store: it owns the checkpoints.
 */
export function startBusyCheckpoints(db: Db, dbPath: string, log: Logger | undefined, busy: () => boolean = () => true, lingerMs = BUSY_CHECKPOINT_LINGER_MS): { stop(): Promise<void> } {
  const file = new URL('./checkpoint-worker.js', import.meta.url);
  if (!existsSync(fileURLToPath(file))) return { stop: () => Promise.resolve() };
  let worker: Worker | null = null;
  let asked = false;
  let broken = false;
  let stopped = false;
  let lastBusy = Number.NEGATIVE_INFINITY;
  const failures = checkpointFailures(log);
  const ownCheckpoints = (): void => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  };
  /** Ends the worker: its connection closed by itself (a checkpoint under way ends first), or cut after 2 s. */
  const end = async (w: Worker): Promise<void> => {
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage('close');
    const late = setTimeout(() => void w.terminate(), 2_000);
    await exited;
    clearTimeout(late);
  };
  const start = (): Worker => {
    const w = new Worker(file, { workerData: { path: dbPath } });
    w.unref();
    w.on('message', (m: { error?: string; code?: string }) => {
      if (worker === w) asked = false;
      if (m.error !== undefined) failures({ error: m.error, code: m.code });
    });
    w.on('error', (err) => {
      broken = true;
      // A SQLite error crosses the thread as a plain object (its code kept, its message not always).
      const e = err as { code?: unknown; message?: unknown };
      const code = typeof e.code === 'string' ? e.code : 'UNKNOWN';
      log?.warn({ code, err: typeof e.message === 'string' ? e.message : String(err) }, `the checkpoint worker failed (${code}): the store checkpoints on its own connection`);
    });
    w.on('exit', () => {
      // An ended worker's exit (one ended when idle, a new one started since) changes nothing.
      if (worker !== w) return;
      worker = null;
      asked = false;
      ownCheckpoints();
    });
    db.pragma(`wal_autocheckpoint = ${BUSY_AUTOCHECKPOINT_PAGES}`);
    return w;
  };
  const timer = setInterval(() => {
    if (stopped || broken) return;
    const now = performance.now();
    if (busy()) lastBusy = now;
    if (worker && now - lastBusy > lingerMs) {
      const w = worker;
      worker = null;
      asked = false;
      ownCheckpoints();
      void end(w);
      return;
    }
    if (now - lastBusy > lingerMs) return;
    worker ??= start();
    // One at a time: a checkpoint slower than the interval is not queued behind itself.
    if (asked) return;
    asked = true;
    worker.postMessage('checkpoint');
  }, BUSY_CHECKPOINT_MS);
  timer.unref();
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      const w = worker;
      worker = null;
      ownCheckpoints();
      if (w) await end(w);
    },
  };
}
