/**
 * Whether the store can be written, as the sender last found it (issue 32, defect 3). A full disk,
 * a read-only or vanished database file fails every write: the intent before a send, and the
 * back-off after a failure too. The sender then tried the row again at once, and logged
 * "unexpected failure while sending" about 8,000 times a second (220 MB of log in 20 s, a core
 * busy). Kept in memory, since the store is what cannot be written: while it is down no row is
 * sent, the next try waits a back-off (1 s, doubling to 30 s), one line says so when it starts and
 * when it ends, with a reminder a minute, and sending resumes by itself once a write succeeds.
 * Money is not at stake: the intent is committed before a request leaves, so a failed intent sends
 * nothing, and a row whose answer could not be written stays `sending`, owed a resend of its trxid.
 */
import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../kernel/log.js';

/** Below this many bytes free on the store's file system a write of it (a page, a log frame, a checkpoint) fails: the disk is full. */
export const STORE_MIN_FREE_BYTES = 1024 * 1024;

/** SQLite result codes (and node's) meaning the database file cannot be written now. */
const UNWRITABLE = /^(SQLITE_FULL|SQLITE_READONLY|SQLITE_IOERR|SQLITE_CANTOPEN|SQLITE_NOTADB|ENOSPC|EROFS|EIO|ENOENT)/;

export function isStoreUnwritable(err: unknown, depth = 0): boolean {
  const e = err as { code?: unknown; cause?: unknown } | null;
  if (typeof e?.code === 'string' && UNWRITABLE.test(e.code)) return true;
  // A store error wrapped on its way (TopupError's cause).
  return depth < 3 && e?.cause !== undefined && isStoreUnwritable(e.cause, depth + 1);
}

/**
 * A write the disk failed (SQLite's SQLITE_IOERR_WRITE, a failed sync SQLITE_IOERR_FSYNC, and
 * store/wal-sync.ts's failed sync of the log, which carries that code): not a state that passes.
 * Linux reports a write-back error once and forgets the pages that failed; SQLite's log chains
 * every later commit onto them, so a later write or sync that succeeds proves nothing, and an
 * intent committed after it may be lost at a power cut though its request left. Sending stops
 * until a restart (the operator checks the disk; the start checkpoints and checks the store:
 * store/start-check.ts), like a store file moved or deleted while open.
 */
const UNTIL_RESTART = /^SQLITE_IOERR_(FSYNC|WRITE)$/;

export function storeDownUntilRestart(code: string): boolean {
  return UNTIL_RESTART.test(code) || /DBMOVED/.test(code);
}

/** What to do about it, in the words every surface uses after storeDownSentence(). */
export function storeDownAdvice(code: string): string {
  if (UNTIL_RESTART.test(code)) return 'Sending stays stopped until the daemon is restarted: check the disk (dmesg, SMART), then restart; the start checks the store before it sends.';
  if (/DBMOVED/.test(code)) return 'Sending stays stopped until the daemon is restarted.';
  return 'Nothing is lost; sending resumes by itself once the store can be written.';
}

const FIRST_WAIT_MS = 1_000;
const LONGEST_WAIT_MS = 30_000;
const REMINDER_MS = 60_000;

export interface StoreDown {
  /** Wall time it was first found down. */
  since: number;
  code: string;
  message: string;
}

export class StoreHealth {
  #down: (StoreDown & { until: number; wait: number; remindAt: number }) | null = null;
  readonly #log: Pick<Logger, 'error' | 'info'>;
  /** Told once when the store goes down and once when it comes back (the runner's `store` event: notification, console). */
  readonly #onChange: ((down: StoreDown | null) => void) | undefined;

  /** The store's file as opened (StoreFile): deleted or replaced under the process, a stop until a restart. */
  readonly #file: StoreFile | undefined;

  constructor(log: Pick<Logger, 'error' | 'info'>, onChange?: (down: StoreDown | null) => void, file?: StoreFile) {
    this.#log = log;
    this.#onChange = onChange;
    this.#file = file;
  }

  /**
   * Whether the store's file is gone or replaced (then it is down, said as any failed write).
   * `throttled`: looked at once a second (each runner step); unthrottled just before a request
   * leaves, so no order is sent whose intent would be written into a file nobody will open again.
   */
  fileGone(now: number, mono: number, throttled = true): boolean {
    const gone = this.#file?.gone(mono, !throttled) ?? null;
    if (gone === null) return false;
    this.failed(gone, now, mono);
    return true;
  }

  get down(): StoreDown | null {
    return this.#down ? { since: this.#down.since, code: this.#down.code, message: this.#down.message } : null;
  }

  /** Monotonic time before which nothing is sent (undefined: the store is writable, as far as known). */
  get blockedUntil(): number | undefined {
    return this.#down?.until;
  }

  blocked(mono: number): boolean {
    if (this.#down === null) return false;
    if (this.#untilRestart || mono < this.#down.until) return true;
    // A full disk is over when it has room again (what `topup status` measures: ops/store-disk.ts),
    // not when one write happens to fit: the write-ahead log restarts over its own file after each
    // checkpoint, so an intent can fit in space the log already holds while the answer after it
    // does not, and sending flapped down and up (store-down, store-up, store-down) on a full disk.
    // Looked at once a back-off step (a statfs), no send tried meanwhile.
    if (/FULL|ENOSPC/.test(this.#down.code) && this.#file?.hasRoom() === false) {
      this.#down.until = mono + FIRST_WAIT_MS;
      if (mono >= this.#down.remindAt) {
        this.#down.remindAt = mono + REMINDER_MS;
        // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
        this.#log.error({ code: this.#down.code, since: new Date(this.#down.since).toISOString() }, 'the store still cannot be written: sending stays stopped');
      }
      return true;
    }
    return false;
  }

  /** A failure that stops sending until the process restarts (storeDownUntilRestart). */
  #untilRestart = false;

  /** A write failed: sending stops until the back-off ends. Logged once, then once a minute. */
  failed(err: unknown, now: number, mono: number): void {
    const code = String((err as { code?: unknown }).code ?? 'unknown');
    const message = err instanceof Error ? err.message : String(err);
    if (UNTIL_RESTART.test(code) && !this.#untilRestart) {
      // Whatever was down before, this outlasts it: said once, and never cleared by a later write.
      this.#untilRestart = true;
      this.#down = { since: this.#down?.since ?? now, code, message, until: mono + FIRST_WAIT_MS, wait: FIRST_WAIT_MS, remindAt: mono + REMINDER_MS };
      // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
      this.#log.error({ code, err: message }, `${storeDownSentence(code)}: sending stopped until the daemon is restarted (a later write that succeeds proves nothing: the frames the disk lost are forgotten by the kernel, and every later commit is chained onto them); check the disk (dmesg, SMART), then restart: the start checks the store before it sends`);
      this.#onChange?.(this.down);
      return;
    }
    if (this.#down === null) {
      this.#down = { since: now, code, message, until: mono + FIRST_WAIT_MS, wait: FIRST_WAIT_MS, remindAt: mono + REMINDER_MS };
      // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
      this.#log.error({ code, err: message }, `${storeDownSentence(code)}: sending stopped until it can be written; nothing is lost, rows wait with their trxids`);
      this.#onChange?.(this.down);
      return;
    }
    // Sends started in one round fail together: the wait grows once per round, not once per row.
    if (mono < this.#down.until) return;
    const wait = Math.min(this.#down.wait * 2, LONGEST_WAIT_MS);
    // Stopped until a restart: the first cause stays the one said (a later failure is its consequence).
    Object.assign(this.#down, this.#untilRestart ? { wait, until: mono + wait } : { code, message, wait, until: mono + wait });
    if (mono >= this.#down.remindAt) {
      this.#down.remindAt = mono + REMINDER_MS;
      // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
      this.#log.error({ code, err: message, since: new Date(this.#down.since).toISOString() }, 'the store still cannot be written: sending stays stopped');
    }
  }

  /** A write succeeded: sending resumes (said once). */
  ok(now: number): void {
    if (this.#down === null) return;
    // A write into a deleted file succeeds: it says nothing of the store. Nor does one after the disk failed a write.
    if (this.#file?.isGone === true || this.#untilRestart) return;
    // Nor does one on a full disk that still has no room (see blocked()): an intent of a send
    // admitted before the failure can still fit in the log's own space.
    if (/FULL|ENOSPC/.test(this.#down.code) && this.#file?.hasRoom() === false) return;
    // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
    this.#log.info({ since: new Date(this.#down.since).toISOString(), downMs: now - this.#down.since }, 'the store can be written again: sending resumed');
    this.#down = null;
    this.#onChange?.(null);
  }
}

/** What an error code says of the store, in the words every surface uses (log, status, console, notification). */
export function storeDownSentence(code: string): string {
  if (UNTIL_RESTART.test(code)) return 'the store\'s disk failed a write or a sync (its write-ahead log may have lost frames)';
  if (/DBMOVED/.test(code)) return 'the store cannot be written: its file was moved or deleted while open';
  if (/FULL|ENOSPC/.test(code)) return 'the store cannot be written: the disk is full';
  if (/READONLY|EROFS/.test(code)) return 'the store cannot be written: it is read-only';
  if (/CANTOPEN|NOTADB|ENOENT/.test(code)) return 'the store cannot be written: its file is gone or unreadable';
  return 'the store cannot be written (disk full, read-only or gone)';
}

/**
 * The store's file as this process opened it (device and inode): `gone()` says when the path no
 * longer names it (deleted, or another file put in its place). Looked at at most once a second.
 * A path with no file at construction (an in-memory store, the simulator's) is never looked at.
 */
export class StoreFile {
  readonly #path: string;
  readonly #id: { dev: number; ino: number } | null;
  #lookedAt = -Infinity;
  #gone: (Error & { code: string }) | null = null;

  constructor(path: string) {
    this.#path = path;
    let id: { dev: number; ino: number } | null = null;
    try {
      const st = statSync(path);
      id = { dev: st.dev, ino: st.ino };
    } catch {
      id = null;
    }
    this.#id = id;
  }

  /** The error to stop on when the file is gone or replaced (code SQLITE_READONLY_DBMOVED, as SQLite names it), else null. */
  get isGone(): boolean {
    return this.#gone !== null;
  }

  /** Whether its file system has STORE_MIN_FREE_BYTES free (true when it cannot be asked: nothing to wait for then). */
  hasRoom(): boolean {
    if (this.#id === null) return true;
    try {
      const fs = statfsSync(dirname(this.#path));
      return fs.bavail * fs.bsize >= STORE_MIN_FREE_BYTES;
    } catch {
      return true;
    }
  }

  gone(mono: number, now = false): (Error & { code: string }) | null {
    if (this.#id === null || this.#gone !== null) return this.#gone;
    if (!now && mono - this.#lookedAt < 1_000) return null;
    this.#lookedAt = mono;
    let why: string | null = null;
    try {
      const st = statSync(this.#path);
      if (st.dev !== this.#id.dev || st.ino !== this.#id.ino) why = `${this.#path} is another file than the one opened (replaced while open): restart the daemon to open it (it is reconciled first)`;
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT') why = `${this.#path} was deleted while open: put a backup back (topup restore) and restart the daemon`;
    }
    if (why !== null) this.#gone = Object.assign(new Error(why), { code: 'SQLITE_READONLY_DBMOVED' });
    return this.#gone;
  }
}
