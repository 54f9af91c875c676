/**
 * Writes a file so that readers see either the old content or the whole new one: write a
 * temporary file beside it (mode 0600: result files hold delivered codes), fsync, rename, fsync
 * the folder. A kill at any instant leaves no truncated result.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, statSync, writeSync, unlinkSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { crashPoint } from '../crash-points.js';

export function writeFileAtomic(path: string, content: string | Iterable<string>, mode = 0o600): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    for (const chunk of typeof content === 'string' ? [content] : content) {
      const buf = Buffer.from(chunk, 'utf8');
      let off = 0;
      while (off < buf.length) {
        off += writeSync(fd, buf, off, Math.min(buf.length - off, Math.max(1, Math.ceil(buf.length / 2))));
        crashPoint('result-file-half-written');
      }
    }
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(tmp);
    throw err;
  }
  closeSync(fd);
  renameInto(tmp, path);
  const dfd = openSync(dir, 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
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
export function removeStaleTemps(dir: string, olderThanMs = 60_000, now = Date.now()): number {
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
