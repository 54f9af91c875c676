/**
 * When a file in inbox/ is an order ready to be claimed: complete, and provably unchanged.
 *
 * A copy that pauses (a network share, an upload over SFTP, a spreadsheet saving a large file,
 * a script writing line by line) looks finished for as long as the pause lasts, and a file taken
 * in a pause is half an order list: the rest is written into the claimed copy and never ordered.
 * So a file is ready only when all of these hold:
 *
 *  1. its size, mtime, ctime and inode have not changed, and its content hash is the same at
 *     both ends of a window (the hash catches a writer that keeps the size, e.g. a copy that
 *     allocated the whole file first, or one that sets the mtime back);
 *  2. no process holds it open for writing, where the operating system can tell (writers.ts);
 *  3. the window is long enough for the way the file arrived:
 *     - RENAMED (`min(TOPUP_SETTLE_MS, 1 s)`): a file that was renamed (moved) into the inbox
 *       whole: it appeared while the inbox was watched, nothing was ever seen writing into it
 *       there, and it is not empty. Its writer finished before the rename, under another name:
 *       the window only has to show that nobody goes on writing after it.
 *     - QUIET (`TOPUP_SETTLE_MS`, default 12 s): every other file, i.e. one written in the inbox
 *       itself (a `cp`, an SFTP upload, a download, a script), one found there at start, an empty
 *       one, and every file where the watch cannot be trusted (see below). A writer that pauses
 *       for less than this between writes is never cut short; one that pauses longer and keeps
 *       the file open is seen by (2). The cost: a file written in place is taken TOPUP_SETTLE_MS
 *       after its last write.
 *     - A file found at start whose mtime is already TOPUP_SETTLE_MS old (it was dropped while
 *       the daemon was down) needs only the RENAMED window: nothing has written it since.
 *
 * "Nothing was seen writing into it" needs events the operating system gives for every write
 * in the folder: on Linux, inotify on a local filesystem (ext4, xfs, btrfs, tmpfs, overlay,
 * zfs, …). On a network filesystem (NFS, SMB/CIFS, sshfs and other FUSE mounts, 9p) writes made
 * on another machine raise no event, and on other systems the events are not exact; there every
 * file gets the QUIET window, and the mtime shortcut is not used either (the mtime is another
 * machine's clock).
 *
 * Names that are never candidates (isCandidateName): dotfiles, Office lock files `~$*`, files
 * still being written under a temporary name (`*.part`, `*.tmp`, `*.crdownload`, …). Renamed to
 * their final name, they become candidates like any file renamed in.
 *
 * Only regular files directly in the inbox count: symlinks are never followed (one could point
 * anywhere; it is reported and left alone), folders are skipped (and reported).
 */
import type { Stats } from 'node:fs';
import { lstat, readdir, statfs } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileClock, systemClock } from '../kernel/clock.js';
import { contentHash } from './formats/index.js';
import { describeWriters, openForWriting } from './writers.js';

export type OnIgnored = (path: string, why: string) => void;
/** A ready file and the hash it settled with (the claim takes it only with these bytes). */
export type OnReady = (path: string, settled: { hash: string }) => void;

/** The window for a file renamed into the inbox whole (or TOPUP_SETTLE_MS, when that is shorter). */
export const RENAMED_SETTLE_MS = 1000;
/** A file held open for writing, or unreadable, is looked at again this often. */
const RELOOK_MS = 1000;
/** A file offered and still in the inbox (its claim failed) is offered again after this. */
const REOFFER_MS = 15_000;

/** Files still being written by a copy or a browser download: they get their real name when done. */
const IN_PROGRESS = ['.tmp', '.part', '.partial', '.crdownload', '.download', '.filepart', '.crswap'];
/** Files the desktop writes into any folder it shows (Windows Explorer on a shared folder). */
const DESKTOP_NOISE = new Set(['thumbs.db', 'desktop.ini']);

/**
 * Every file is a candidate, whatever its extension: one topup cannot read (.xls, .ods, .pdf, …)
 * is claimed and answered with an .error.txt saying what to do, instead of waiting in the inbox
 * unnoticed. Not candidates (ignored silently): dotfiles, Office lock files (`~$*`), files
 * still being written (IN_PROGRESS: `.filepart` is WinSCP's, `.crswap` Chrome's) and desktop
 * noise (DESKTOP_NOISE).
 */
export function isCandidateName(name: string): boolean {
  const lower = basename(name).toLowerCase();
  if (lower === '' || lower.startsWith('.') || lower.startsWith('~$') || DESKTOP_NOISE.has(lower)) return false;
  return !IN_PROGRESS.some((ext) => lower.endsWith(ext));
}

/** Why a candidate path is not a file we read, or undefined when it is a regular file. */
function notRegular(stats: Stats): string | undefined {
  if (stats.isSymbolicLink()) return 'symbolic link: not followed, left in place';
  if (stats.isDirectory()) return 'a folder, not a file';
  if (!stats.isFile()) return 'not a regular file';
  return undefined;
}

/**
 * Filesystems (statfs f_type, linux/magic.h) where inotify reports every write into the folder
 * and the mtime is this machine's clock: ext2/3/4, xfs, btrfs, tmpfs, overlayfs, zfs, f2fs,
 * bcachefs, ramfs.
 */
const LOCAL_FILESYSTEMS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0xca451a4e, 0x858458f6]);

/** Whether the folder's events and mtimes can be trusted to show every write (see the top). */
export async function eventsAreExact(dir: string): Promise<boolean> {
  if (process.platform !== 'linux') return false;
  const fs = await statfs(dir).catch(() => undefined);
  return fs !== undefined && LOCAL_FILESYSTEMS.has(Number(fs.type));
}

const fingerprint = (s: Stats): string => `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

interface Tracked {
  name: string;
  path: string;
  /** It appeared while the inbox was watched with exact events (not found at start). */
  watched: boolean;
  /** A write into it (or a change of its attributes) was seen while it was in the inbox. */
  written: boolean;
  fp: string | undefined;
  size: number;
  mtimeMs: number;
  /** Its hash while `fp` held, and when (monotonic ms) that hash was taken. */
  hash: string | undefined;
  hashedAt: number;
  busy: boolean;
  /** Looked at once already (its first look hashes it at once: a file renamed in is complete). */
  seen: boolean;
  /** Monotonic ms before which it is not looked at again (held open for writing, unreadable). */
  notBefore: number;
  /** What was said about it already (onWaiting), so each reason is said once. */
  said: Set<string>;
}

export interface SettlerOptions {
  settleMs: number;
  onReady: OnReady;
  onIgnored?: OnIgnored | undefined;
  /** What a file not taken yet waits for; each reason once per file. */
  onWaiting?: ((path: string, why: string) => void) | undefined;
}

/** The files of one inbox being watched until they are ready (the rules at the top). */
export class Settler {
  readonly #dir: string;
  readonly #o: SettlerOptions;
  readonly #renamedMs: number;
  readonly #step: number;
  readonly #files = new Map<string, Tracked>();
  /** Names reported as not regular files: said once while they stay. */
  readonly #reported = new Set<string>();
  /** Names offered: not offered again while they are the same file, for REOFFER_MS. */
  readonly #offered = new Map<string, { fp: string; at: number }>();
  /** The folder watch runs: events come in. */
  watching = false;
  /** Events and mtimes are exact on this filesystem (eventsAreExact); false until known. */
  exact = false;

  /**
   * The watch stopped: writes may have gone unseen, so every file known now is judged as one
   * found at start, also after the watch runs again.
   */
  lostEvents(): void {
    this.watching = false;
    for (const t of this.#files.values()) t.watched = false;
  }

  constructor(dir: string, o: SettlerOptions) {
    this.#dir = dir;
    this.#o = o;
    this.#renamedMs = Math.min(o.settleMs, RENAMED_SETTLE_MS);
    this.#step = Math.max(20, Math.min(100, Math.floor(this.#renamedMs / 4)));
  }

  get step(): number {
    return this.#step;
  }

  get pending(): number {
    return this.#files.size;
  }

  pendingPaths(): string[] {
    return [...this.#files.values()].map((t) => t.path);
  }

  #track(name: string, watched: boolean): Tracked {
    let t = this.#files.get(name);
    if (!t) {
      t = { name, path: join(this.#dir, name), watched, written: false, fp: undefined, size: 0, mtimeMs: 0, hash: undefined, hashedAt: 0, busy: false, seen: false, notBefore: 0, said: new Set() };
      this.#files.set(name, t);
    }
    return t;
  }

  /** An event of the folder watch: something happened to `name` ('change': its content or attributes). */
  event(kind: string, name: string): void {
    if (!isCandidateName(name)) return;
    const t = this.#track(name, this.watching);
    if (kind === 'change') {
      t.written = true;
      // A file offered and written to again before its claim: the claim refuses it (its hash
      // changed) and it settles anew, as a file written in place.
      this.#offered.delete(name);
    }
  }

  /** Lists the folder: files not known yet are tracked (`atStart`: present before the watch). */
  async scan(atStart: boolean): Promise<void> {
    const entries = await readdir(this.#dir, { withFileTypes: true });
    const names = new Set<string>();
    for (const e of entries) {
      if (!isCandidateName(e.name)) continue;
      names.add(e.name);
      if (this.#files.has(e.name) || this.#reported.has(e.name)) continue;
      const offered = this.#offered.get(e.name);
      if (offered && systemClock.mono() - offered.at < REOFFER_MS) continue;
      this.#track(e.name, this.watching && !atStart);
    }
    for (const name of this.#reported) if (!names.has(name)) this.#reported.delete(name);
    for (const name of this.#offered.keys()) if (!names.has(name)) this.#offered.delete(name);
  }

  /** Every file not already being looked at gets one look. */
  lookAll(): Promise<void> {
    return Promise.all([...this.#files.values()].filter((t) => !t.busy && t.notBefore <= systemClock.mono()).map((t) => this.#lookSafely(t))).then(() => undefined);
  }

  async #lookSafely(t: Tracked): Promise<void> {
    t.busy = true;
    try {
      await this.#look(t);
    } catch (err) {
      // Unreadable (permissions), or gone between two steps: looked at again a little later.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') this.#forget(t);
      else {
        this.#wait(t, `cannot be read yet (${code ?? (err as Error).message}); looked at again`);
        t.fp = undefined;
        t.notBefore = systemClock.mono() + RELOOK_MS;
      }
    } finally {
      t.busy = false;
    }
  }

  #forget(t: Tracked): void {
    if (this.#files.get(t.name) === t) this.#files.delete(t.name);
  }

  #wait(t: Tracked, why: string): void {
    if (t.said.has(why)) return;
    t.said.add(why);
    this.#o.onWaiting?.(t.path, why);
  }

  /** The window this file must stay unchanged for (the rules at the top). */
  #window(t: Tracked): number {
    if (!this.exact || t.size === 0 || t.written) return this.#o.settleMs;
    if (t.watched && this.watching) return this.#renamedMs;
    // Found at start: quiet since its mtime (this machine's clock on a local filesystem).
    return fileClock.now() - t.mtimeMs >= this.#o.settleMs ? this.#renamedMs : this.#o.settleMs;
  }

  async #look(t: Tracked): Promise<void> {
    const stats = await lstat(t.path);
    const why = notRegular(stats);
    if (why !== undefined) {
      this.#forget(t);
      if (!this.#reported.has(t.name)) this.#o.onIgnored?.(t.path, why);
      this.#reported.add(t.name);
      return;
    }
    const fp = fingerprint(stats);
    const offered = this.#offered.get(t.name);
    if (offered?.fp === fp && systemClock.mono() - offered.at < REOFFER_MS) {
      this.#forget(t); // offered already, its claim still to come
      return;
    }
    if (fp !== t.fp) {
      t.fp = fp;
      t.size = stats.size;
      t.mtimeMs = stats.mtimeMs;
      t.hash = undefined;
      // A file that changes is hashed only once a look finds it unchanged (a large copy in
      // progress is not read over and over); a file seen for the first time is hashed at once.
      if (t.seen) return;
    }
    t.seen = true;
    if (t.hash === undefined) {
      const hash = await contentHash(t.path);
      if (fingerprint(await lstat(t.path)) !== fp) return void (t.fp = undefined);
      t.hash = hash;
      t.hashedAt = systemClock.mono();
      return;
    }
    if (systemClock.mono() - t.hashedAt < this.#window(t)) return;
    const again = await contentHash(t.path);
    if (again !== t.hash) {
      // Changed without a change of size or times: the window starts again from these bytes.
      t.hash = again;
      t.hashedAt = systemClock.mono();
      this.#wait(t, 'its content changed while its size and times stayed the same; waiting for it to hold still');
      return;
    }
    const scan = await openForWriting(t.path);
    if (scan.writers.length > 0) {
      this.#wait(t, `${describeWriters(scan.writers)} has it open for writing; waiting until it is closed`);
      t.notBefore = systemClock.mono() + RELOOK_MS;
      return;
    }
    // Events that came in while the hash and the writer check ran may have changed the rule.
    if (systemClock.mono() - t.hashedAt < this.#window(t)) return;
    const last = await lstat(t.path);
    if (fingerprint(last) !== fp) return void (t.fp = undefined);
    this.#forget(t);
    this.#offered.set(t.name, { fp, at: systemClock.mono() });
    this.#o.onReady(t.path, { hash: t.hash });
  }
}
