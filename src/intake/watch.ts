/**
 * Which files in inbox/ are orders ready to be claimed.
 *
 * A file is ready when its size and mtime have not changed for `settleMs` (a file renamed into
 * the inbox is complete at once and passes the same check). Only regular files directly in the
 * inbox count: symlinks are never followed (one could point anywhere; it is reported and left
 * alone), folders are skipped (and reported).
 */
import { fileClock } from '../clock.js';
import { lstat, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { watch } from 'chokidar';
import type { Stats } from 'node:fs';

export interface InboxWatcher {
  close(): Promise<void>;
}

export type OnIgnored = (path: string, why: string) => void;

/** Files still being written by a copy or a browser download: they get their real name when done. */
const IN_PROGRESS = ['.tmp', '.part', '.partial', '.crdownload', '.download'];
/** Files the desktop writes into any folder it shows (Windows Explorer on a shared folder). */
const DESKTOP_NOISE = new Set(['thumbs.db', 'desktop.ini']);

/**
 * Every file is a candidate, whatever its extension: one topup cannot read (.xls, .ods, .pdf, …)
 * is claimed and answered with an .error.txt saying what to do, instead of waiting in the inbox
 * unnoticed. Not candidates (ignored silently): dotfiles, Office lock files (`~$*`), files
 * still being written (IN_PROGRESS) and desktop noise (DESKTOP_NOISE).
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the file's size and mtime have not changed for `settleMs`; false if it disappears. */
async function holdsStill(path: string, settleMs: number): Promise<boolean> {
  const step = Math.max(20, Math.min(100, Math.floor(settleMs / 4)));
  let last = '';
  let since = fileClock.now();
  for (;;) {
    const stats = await lstat(path).catch(() => undefined);
    if (!stats) return false;
    const fingerprint = `${stats.size}:${stats.mtimeMs}`;
    if (fingerprint !== last) {
      last = fingerprint;
      since = fileClock.now();
    } else if (fileClock.now() - since >= settleMs) {
      return true;
    }
    await sleep(step);
  }
}

/**
 * For `--once`: candidates that are regular files and hold still for `settleMs` (default 1000).
 * A file still growing is watched for up to `maxWaitMs` (default 60 s) before being left for
 * the next run. Sorted by name, so runs are repeatable.
 */
export async function listReadyFiles(
  inboxDir: string,
  opts: { settleMs?: number; maxWaitMs?: number; onIgnored?: OnIgnored } = {},
): Promise<string[]> {
  const settleMs = opts.settleMs ?? 1000;
  const deadline = fileClock.now() + (opts.maxWaitMs ?? 60_000);
  const ready = new Set<string>();
  const reported = new Set<string>();
  let previous = new Map<string, string>();

  for (;;) {
    const current = new Map<string, string>();
    for (const entry of await readdir(inboxDir, { withFileTypes: true })) {
      const path = join(inboxDir, entry.name);
      if (!isCandidateName(entry.name) || ready.has(path)) continue;
      const stats = await lstat(path).catch(() => undefined);
      if (!stats) continue; // gone meanwhile
      const why = notRegular(stats);
      if (why !== undefined) {
        if (!reported.has(path)) opts.onIgnored?.(path, why);
        reported.add(path);
        continue;
      }
      const fingerprint = `${stats.size}:${stats.mtimeMs}`;
      if (previous.get(path) === fingerprint) ready.add(path);
      else current.set(path, fingerprint);
    }
    if (current.size === 0) break;
    if (fileClock.now() + settleMs > deadline) {
      for (const path of current.keys()) opts.onIgnored?.(path, `still being written after ${opts.maxWaitMs ?? 60_000} ms; left for the next run`);
      break;
    }
    previous = current;
    await sleep(settleMs);
  }
  return [...ready].sort();
}

/**
 * Watches the inbox (files already there included) and calls `onReady` once per file when it
 * has stopped changing. Only additions are reported: a file that changes after being reported
 * is not reported again (the daemon moves a claimed file out of the inbox at once).
 */
export function watchInbox(
  inboxDir: string,
  onReady: (path: string) => void,
  opts: { settleMs?: number; onIgnored?: OnIgnored; onError?: (err: Error) => void } = {},
): InboxWatcher {
  const settleMs = opts.settleMs ?? 1000;
  const root = resolve(inboxDir);
  const watcher = watch(inboxDir, {
    depth: 0,
    followSymlinks: false,
    ignoreInitial: false,
    awaitWriteFinish: { stabilityThreshold: settleMs, pollInterval: Math.max(20, Math.min(100, Math.floor(settleMs / 4))) },
    // Temporary and hidden files are expected noise: dropped without a report.
    ignored: (path: string) => resolve(path) !== root && !isCandidateName(path),
  });

  // chokidar applies awaitWriteFinish only once its first scan is over ('ready'): a file found
  // by that scan is reported at once, even while it is still being written. Those are checked
  // here for the same stability before they are offered.
  let scanned = false;
  watcher.on('ready', () => {
    scanned = true;
  });
  const check = async (path: string, duringScan: boolean): Promise<void> => {
    if (!isCandidateName(path)) return;
    const stats = await lstat(path).catch(() => undefined);
    if (!stats) return;
    const why = notRegular(stats);
    if (why !== undefined) opts.onIgnored?.(path, why);
    else if (!duringScan || (await holdsStill(path, settleMs))) onReady(path);
  };
  watcher.on('add', (path) => void check(path, !scanned));
  watcher.on('addDir', (path) => {
    if (resolve(path) !== root && isCandidateName(path)) opts.onIgnored?.(path, 'a folder, not a file');
  });
  watcher.on('error', (err) => {
    const error = err instanceof Error ? err : new Error(String(err));
    if (opts.onError) opts.onError(error);
    else opts.onIgnored?.(inboxDir, `watch error: ${error.message}`);
  });

  return { close: () => watcher.close() };
}
