/**
 * Writes a file so that readers see either the old content or the whole new one: write a
 * temporary file beside it (mode 0600: result files hold delivered codes), fsync, rename, fsync
 * the folder. A kill at any instant leaves no truncated result.
 */
import { fileClock } from '../kernel/clock.js';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, statSync, writeSync, unlinkSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { crashPoint } from '../kernel/crash-points.js';

/** A temporary file beside `path`, named so removeStaleTemps recognises it, opened exclusively. */
export function openTemp(path: string, mode = 0o600): { fd: number; tmp: string } {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  return { fd: openSync(tmp, 'wx', mode), tmp };
}

function writeChunk(fd: number, chunk: string): void {
  const buf = Buffer.from(chunk, 'utf8');
  let off = 0;
  while (off < buf.length) {
    off += writeSync(fd, buf, off, Math.min(buf.length - off, Math.max(1, Math.ceil(buf.length / 2))));
    crashPoint('result-file-half-written');
  }
}

/** A write that failed: the temporary file goes, the error goes on. */
export function abandonTemp(fd: number, tmp: string, err: unknown): never {
  closeSync(fd);
  unlinkSync(tmp);
  throw err;
}

/** fsync, close, rename over `path`, fsync the folder. */
export function commitTemp(fd: number, tmp: string, path: string): void {
  try {
    fsyncSync(fd);
  } catch (err) {
    abandonTemp(fd, tmp, err);
  }
  closeSync(fd);
  renameInto(tmp, path);
  const dfd = openSync(dirname(path), 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
}

export function writeFileAtomic(path: string, content: string | Iterable<string>, mode = 0o600): void {
  const { fd, tmp } = openTemp(path, mode);
  try {
    for (const chunk of typeof content === 'string' ? [content] : content) writeChunk(fd, chunk);
  } catch (err) {
    abandonTemp(fd, tmp, err);
  }
  commitTemp(fd, tmp, path);
}

/**
 * The same, letting the event loop run between chunks: a 100,000-row result takes seconds to
 * build, and sends, polls and lease renewals must not wait for it.
 */
export async function writeFileAtomicPaced(path: string, content: Iterable<string>, mode = 0o600): Promise<void> {
  const { fd, tmp } = openTemp(path, mode);
  try {
    for (const chunk of content) {
      writeChunk(fd, chunk);
      await nextTurn();
    }
  } catch (err) {
    abandonTemp(fd, tmp, err);
  }
  commitTemp(fd, tmp, path);
}

/** Renames the finished temporary file over `path`; when that fails, the temporary file (it may hold codes) goes. */
export function renameInto(tmp: string, path: string): void {
  try {
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // Already gone: nothing left behind.
    }
    throw err;
  }
}

const TEMP_NAME = /^\..+\.[0-9a-f]{8}\.tmp$/;

/**
 * Removes temporary files a killed writer left behind (never a finished file: those were
 * renamed). Only files older than `olderThanMs`, so a writer still at work is left alone.
 */
export function removeStaleTemps(dir: string, olderThanMs = 60_000, now = fileClock.now()): number {
  let removed = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!TEMP_NAME.test(name)) continue;
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs < olderThanMs) continue;
      unlinkSync(path);
      removed++;
    } catch {
      // Gone already, or not ours to remove: nothing to clean.
    }
  }
  return removed;
}
