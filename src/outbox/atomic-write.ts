/**
 * Writes a file so that readers see either the old content or the whole new one: write a
 * temporary file beside it (mode 0600: result files hold delivered codes), fsync, rename, fsync
 * the folder. A kill at any instant leaves no truncated result.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync, unlinkSync } from 'node:fs';
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
  renameSync(tmp, path);
  const dfd = openSync(dir, 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
}
