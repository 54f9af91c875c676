/**
 * Uploads: a file dropped on the Upload page is kept aside (jobs/.console-uploads/, 0600) and
 * quoted exactly as `topup validate` quotes it (ops/quote.ts quoteFile). Submit moves
 * those same bytes into the inbox, the one way in: the daemon claims it like any dropped file.
 *
 * - Names are made safe: the last path segment only, no control characters, no leading dot or
 *   `~$` (names the inbox ignores), letters, digits and `._-()+, ` kept, others become `_`,
 *   at most 120 characters, and the extension must be one topup reads (.csv .tsv .txt .xlsx).
 * - Into the inbox under a hidden temporary name (`.name.<random>.part`, which the watcher
 *   ignores), then linked to its real name, which fails rather than replaces a file of that
 *   name already waiting there (then `name (2).csv`): the daemon only ever sees the whole file.
 * - Kept aside for an hour at most, and at most MAX_KEPT uploads, in a folder of this console's
 *   own (another daemon on the same home has its own); folders older than that are removed at
 *   start (their console is gone), this console's own when it stops.
 */
import { systemClock } from '../kernel/clock.js';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { UsageError } from '../kernel/errors.js';
import { contentHash } from '../intake/formats/index.js';
import type { Quote } from '../ops/quote.js';

export const UPLOAD_EXTENSIONS = ['.csv', '.tsv', '.txt', '.xlsx'] as const;
const KEEP_MS = 3_600_000;
const MAX_KEPT = 20;
const MAX_NAME = 120;

export interface Upload {
  id: string;
  name: string;
  path: string;
  size: number;
  hash: string;
  at: number;
  quote: Quote | null;
  /** Why it could not be quoted (unreadable file, API unreachable). */
  error: string | null;
  /** Set once submitted: the inbox file and when. */
  submitted: { path: string; name: string; at: number } | null;
}

/** A name safe to put in the inbox, or a UsageError saying what is wrong. */
export function safeFileName(given: string): string {
  let name = given.split(/[\\/]/).pop() ?? '';
  name = name.normalize('NFC').replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  name = name.replace(/[^\p{L}\p{N}._\-()+, ]/gu, '_').replace(/\s+/g, ' ');
  name = name.replace(/^[\s.~$_]+/, '').replace(/[\s.]+$/, '');
  const ext = extname(name).toLowerCase();
  if (!(UPLOAD_EXTENSIONS as readonly string[]).includes(ext)) {
    throw new UsageError(`"${given.slice(0, 200)}": topup reads ${UPLOAD_EXTENSIONS.join(', ')} files; save the orders in one of those (CSV UTF-8 or Excel .xlsx)`);
  }
  let stem = name.slice(0, name.length - ext.length).trim();
  if (stem === '') stem = 'upload';
  if (stem.length + ext.length > MAX_NAME) stem = stem.slice(0, MAX_NAME - ext.length).trim();
  return `${stem}${ext}`;
}

export class Uploads {
  readonly #dir: string;
  readonly #inbox: string;
  readonly #items = new Map<string, Upload>();

  constructor(jobsDir: string, inboxDir: string) {
    const parent = join(jobsDir, '.console-uploads');
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(parent)) {
      const st = statSync(join(parent, name), { throwIfNoEntry: false });
      if (st && systemClock.now() - st.mtimeMs > KEEP_MS) rmSync(join(parent, name), { recursive: true, force: true });
    }
    this.#dir = join(parent, randomBytes(6).toString('hex'));
    mkdirSync(this.#dir, { mode: 0o700 });
    this.#inbox = inboxDir;
  }

  /** Drops every upload not submitted (the console is stopping). */
  close(): void {
    this.#items.clear();
    rmSync(this.#dir, { recursive: true, force: true });
  }

  get(id: string): Upload | undefined {
    return this.#items.get(id);
  }

  /** Keeps the bytes aside under a safe name. The caller quotes it. */
  async keep(givenName: string, bytes: Uint8Array): Promise<Upload> {
    this.#expire();
    const name = safeFileName(givenName);
    const id = randomBytes(9).toString('base64url');
    const dir = join(this.#dir, id);
    mkdirSync(dir, { mode: 0o700 });
    const path = join(dir, name);
    writeFileSync(path, bytes, { mode: 0o600, flag: 'wx' });
    const upload: Upload = { id, name, path, size: bytes.byteLength, hash: await contentHash(path), at: systemClock.now(), quote: null, error: null, submitted: null };
    this.#items.set(id, upload);
    return upload;
  }

  /** Moves the upload into the inbox, whole, under its name (or `name (2).ext` if taken). */
  submit(id: string): Upload {
    const u = this.#items.get(id);
    if (!u) throw new UsageError('this upload is no longer kept (uploads are kept for an hour, or the daemon restarted): upload the file again');
    if (u.submitted) return u;
    const part = join(this.#inbox, `.${u.name}.${randomBytes(4).toString('hex')}.part`);
    try {
      renameSync(u.path, part);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      copyFileSync(u.path, part);
    }
    const ext = extname(u.name);
    const stem = u.name.slice(0, u.name.length - ext.length);
    for (let n = 1; ; n++) {
      const name = n === 1 ? u.name : `${stem} (${n})${ext}`;
      const dest = join(this.#inbox, name);
      try {
        linkSync(part, dest);
        unlinkSync(part);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EEXIST' && n < 1000) continue;
        // A file system without hard links (some network shares): a plain rename, after a look.
        if ((code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS') && !existsSync(dest)) renameSync(part, dest);
        else throw err;
      }
      u.submitted = { path: dest, name, at: systemClock.now() };
      rmSync(join(this.#dir, u.id), { recursive: true, force: true });
      return u;
    }
  }

  #expire(): void {
    const now = systemClock.now();
    const old = [...this.#items.values()].sort((a, b) => b.at - a.at);
    old.forEach((u, i) => {
      if (now - u.at > KEEP_MS || i >= MAX_KEPT - 1) {
        this.#items.delete(u.id);
        rmSync(join(this.#dir, u.id), { recursive: true, force: true });
      }
    });
  }
}
