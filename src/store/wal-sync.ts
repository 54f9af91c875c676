/**
 * The intent to send made durable off the event loop.
 *
 * better-sqlite3 is synchronous: a synchronous=FULL commit holds the event loop for its fsync, and
 * at 400 orders/s the intents' fsyncs were the largest part of the daemon's main thread (a profile
 * of `npm run bench -- --parts scale`, docs/bench.md). So an intent is committed with
 * synchronous=NORMAL (its frames written to the write-ahead log, in the operating system's cache,
 * where a killed process cannot lose them) and the log file is then fdatasync'ed on libuv's thread
 * pool; the request leaves only once that sync has returned (dispatch/intent-group.ts). What is on
 * disk after it is exactly what a FULL commit would have put there:
 *  - fdatasync of the log file makes every byte written to it so far durable, the log's header and
 *    the intent's frames (its commit frame included) among them; recovery after a power cut
 *    replays every transaction whose commit frame is valid, so the intent survives it;
 *  - if a checkpoint folds the log into the database before the sync runs, SQLite syncs the log
 *    before it copies and the database after it completes, and only a completed checkpoint lets a
 *    later writer restart (or truncate) the log: the intent is then durable in the database file;
 *  - the log file is one file for as long as a connection holds the database open (SQLite deletes
 *    it only when the last connection closes), and this process's connection is open until
 *    close(): the descriptor opened here, when the store opens, always names the live log.
 * A sync that fails rejects: the send is not made (the row becomes `resending`, owed a resend of
 * the same trxid, which is safe whether or not the intent reached the disk).
 *
 * A failed sync is never forgotten (the first error is sticky: every later durable() rejects with
 * it until the process restarts). Linux reports a write-back error to each open file once and marks
 * the failed pages clean (fsync(2); PostgreSQL's "fsyncgate"): the next fdatasync returns 0 though
 * those frames never reached the disk. SQLite's log checksums chain each frame onto the ones before
 * it, so recovery after a power cut stops at the first frame the disk lacks and every later commit
 * is lost with it, whatever its own sync returned: a later 0 proves nothing. The error carries the
 * code SQLITE_IOERR_FSYNC (SQLite's own for a failed sync of the log), which the sender's store
 * health reads as "down until a restart" (dispatch/store-health.ts); the next start checkpoints and
 * checks the store before it sends (store/start-check.ts).
 *
 * Syncs are shared: a sync asked for while one runs waits for the next one, which starts after the
 * running one ends and so covers every commit made before it was asked for.
 */
import { closeSync, fdatasync, openSync, realpathSync } from 'node:fs';

export type SyncFile = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

/** SQLite's code for a failed sync of a file: what the store's health reads as "down until a restart". */
export const WAL_SYNC_FAILED = 'SQLITE_IOERR_FSYNC';

export class WalSync {
  readonly #path: string;
  readonly #sync: SyncFile;
  #fd: number | null = null;
  /** The sync running now, and the one that starts after it (shared by everyone who asks meanwhile). */
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;
  /** The first sync that failed (see above): every later durable() rejects with it. */
  #failed: (Error & { code: string }) | null = null;
  #closed = false;
  /** How many fdatasync calls were made (for the bench and tests). */
  syncs = 0;

  /** `dbPath`: the database file; its log is `${dbPath}-wal`. `sync`: fs.fdatasync unless a test gives another. */
  constructor(dbPath: string, sync: SyncFile = fdatasync) {
    // SQLite follows a symlinked database file and keeps its log beside the target: the log synced
    // must be that one (an adversarial review: with jobs/topup.db a symlink, every sync failed
    // ENOENT and nothing was sent; with a stale jobs/topup.db-wal there it would have synced the
    // wrong file and sent intents not on disk). The store is open, so the file exists.
    let real = dbPath;
    try {
      real = realpathSync(dbPath);
    } catch {
      // Not there (a test's bare path): the log is beside the path as given.
    }
    this.#path = `${real}-wal`;
    this.#sync = sync;
    // Opened now, when the store opens (runtime.ts makes this right after openStore, so the log
    // exists: SQLite creates it with the connection's first read in WAL mode), not at the first
    // send. Linux reports a write-back error to the descriptors open when it happened (errseq): a
    // descriptor opened later does not see an error another one (SQLite's own FULL commit, the
    // checkpoint worker's sync) consumed before, and its first fdatasync answers 0 over frames the
    // disk lacks. Held from the store's opening, it sees every error since. A log not there yet
    // (a bare path in a test) is opened by the first durable(), as before.
    try {
      this.#fd = openSync(this.#path, 'r');
    } catch {
      this.#fd = null;
    }
  }

  /** The error every durable() rejects with since a sync failed (null: none failed). */
  get failed(): (Error & { code: string }) | null {
    return this.#failed;
  }

  /** Resolves once every commit made before this call is on disk. */
  durable(): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (this.#closed) return Promise.reject(Object.assign(new Error('the log sync is closed (the store is closing): the request is not sent'), { code: 'SQLITE_MISUSE' }));
    if (!this.#running) return this.#start();
    // One is running: it may have begun before the caller's commit. The next one covers it.
    if (!this.#next) {
      this.#next = this.#running.then(
        () => undefined,
        () => undefined,
      ).then(() => {
        this.#next = null;
        // A sync that failed meanwhile, or a close: this one never starts.
        return this.durable();
      });
    }
    return this.#next;
  }

  /** Starts a sync; `#running` is it while it runs, and only then. */
  #start(): Promise<void> {
    let fd: number;
    try {
      // Read-only is enough for fdatasync, and never creates the file. Normally opened by the
      // constructor already; here only when the log was not there then.
      fd = this.#fd ??= openSync(this.#path, 'r');
    } catch (err) {
      // Nothing runs: the next caller starts its own try.
      return Promise.reject(err);
    }
    this.syncs++;
    let ended = false;
    const running = new Promise<void>((resolve, reject) => {
      const end = (err: NodeJS.ErrnoException | null): void => {
        if (ended) return;
        ended = true;
        // Whoever asks from now on needs a sync that starts after this one (the next, if one is
        // queued). One sync runs at a time, so the running one is this one.
        this.#running = null;
        if (err) {
          this.#failed ??= Object.assign(
            new Error(`the store's write-ahead log could not be synced to disk (${err.code ?? err.message}): frames may be lost, and every later commit is chained onto them; sending stopped until a restart (check the disk first)`),
            { code: WAL_SYNC_FAILED, cause: err },
          );
          reject(this.#failed);
        } else if (this.#failed) reject(this.#failed);
        else resolve();
      };
      try {
        this.#sync(fd, end);
      } catch (err) {
        // A sync that throws instead of calling back: nothing is known to be on disk, as if it failed.
        end(err as NodeJS.ErrnoException);
      }
    });
    // A sync that called back before returning (fs.fdatasync never does; a test's or a fault
    // injector's may) has ended already: held as running, it would be waited on for ever by every
    // later caller and by close().
    if (!ended) this.#running = running;
    return running;
  }

  /**
   * No sync starts after this; the descriptor is closed once the running sync has returned (closed
   * under it, fdatasync would fail with EBADF, or sync another file opened meanwhile on its number).
   */
  async close(): Promise<void> {
    this.#closed = true;
    // Once closed, the queued sync's turn starts nothing (durable() rejects), so these two are the
    // last: one wait, not a loop (a loop over settled promises is a chain of microtasks that never
    // lets the event loop turn, so not even a timer could end it).
    await Promise.allSettled([this.#running, this.#next]);
    if (this.#fd !== null) {
      closeSync(this.#fd);
      this.#fd = null;
    }
  }
}
