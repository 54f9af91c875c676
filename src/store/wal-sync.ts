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
 *    close(): the descriptor opened here always names the live log.
 * A sync that fails rejects: the send is not made (the row stays `sending`, owed a resend of the
 * same trxid, which is safe whether or not the intent reached the disk).
 *
 * Syncs are shared: a sync asked for while one runs waits for the next one, which starts after the
 * running one ends and so covers every commit made before it was asked for.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';

export type SyncFile = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

export class WalSync {
  readonly #path: string;
  readonly #sync: SyncFile;
  #fd: number | null = null;
  /** The sync running now, and the one that starts after it (shared by everyone who asks meanwhile). */
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;
  /** How many fdatasync calls were made (for the bench and tests). */
  syncs = 0;

  /** `dbPath`: the database file; its log is `${dbPath}-wal`. `sync`: fs.fdatasync unless a test gives another. */
  constructor(dbPath: string, sync: SyncFile = fdatasync) {
    this.#path = `${dbPath}-wal`;
    this.#sync = sync;
  }

  /** Resolves once every commit made before this call is on disk. */
  durable(): Promise<void> {
    if (!this.#running) return (this.#running = this.#start());
    // One is running: it may have begun before the caller's commit. The next one covers it.
    if (!this.#next) {
      this.#next = this.#running.then(
        () => undefined,
        () => undefined,
      ).then(() => {
        this.#next = null;
        return (this.#running = this.#start());
      });
    }
    return this.#next;
  }

  #start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let fd: number;
      try {
        // Read-only is enough for fdatasync, and never creates the file: the log exists once the
        // connection has committed anything in WAL mode (the intent was committed just before).
        fd = this.#fd ??= openSync(this.#path, 'r');
      } catch (err) {
        this.#running = null;
        reject(err);
        return;
      }
      this.syncs++;
      this.#sync(fd, (err) => {
        // Whoever asks from now on needs a sync that starts after this one (the next, if one is queued).
        this.#running = null;
        if (err) reject(err);
        else resolve();
      });
    });
  }

  close(): void {
    if (this.#fd !== null) {
      closeSync(this.#fd);
      this.#fd = null;
    }
  }
}
