/**
 * Claiming: a settled file in inbox/ becomes a batch. The batch record is committed first,
 * then the file is put in jobs/<batch>/, so a kill between the two leaves a `claimed` batch
 * whose file is not in place yet: `recoverClaims` finishes the move on restart.
 *
 * The bytes a batch orders from are the bytes that were hashed (the hash decides duplicates and
 * seeds the generated trxids):
 *  - an inbox file is moved (renamed) into jobs/<batch>/, hashed where it was;
 *  - a `topup submit` file is copied into jobs/<batch>/ and hashed while it is copied; the user's
 *    file stays where it is and may be edited or deleted at once without changing the batch;
 *  - loading checks the hash again after reading (load.ts) and refuses a file that changed.
 * Beside the file, jobs/<batch>/.claim.json says where it came from, for a database that lost
 * the batch (orphans.ts).
 *
 * A file whose bytes match a batch already taken from the inbox is a duplicate: it is moved
 * like any other (the inbox shows only what waits), nothing is sent, and every row's result
 * names the earlier batch.
 */
import { createHash } from 'node:crypto';
import { systemEntropy, type Entropy } from '../kernel/entropy.js';
import { closeSync, createReadStream, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { ErrorCode, InputFileError, TopupError } from '../kernel/errors.js';
import { basename, dirname, join, relative } from 'node:path';
import { contentHash } from '../intake/formats/index.js';
import type { Runtime } from '../runtime.js';
import type { Batch, BatchOrigin } from '../store/batches.js';
import { crashPoint } from '../kernel/crash-points.js';
import { LEASE_MS } from '../store/owner.js';
import { markClaimInRestoreWindow } from '../store/backup.js';
import { failBatch } from './load.js';
import { REVIEWED } from '../outbox/paths.js';

/** `b261121-3fa9c1`: the day, then 6 hex digits that differ for every claim. */
export function newBatchId(hash: string, now: number, entropy: Entropy = systemEntropy): string {
  const d = new Date(now);
  const day = `${d.getUTCFullYear() % 100}`.padStart(2, '0') + `${d.getUTCMonth() + 1}`.padStart(2, '0') + `${d.getUTCDate()}`.padStart(2, '0');
  const salt = createHash('sha256').update(`${hash}:${now}:${entropy.hex(8)}`).digest('hex');
  return `b${day}-${salt.slice(0, 6)}`;
}

/** A batch folder's name in jobs/. */
export const BATCH_ID = /^b\d{6}-[0-9a-f]{6}$/;

/** Where a batch folder says its file came from (jobs/<batch>/.claim.json). A dot name: never an order file's. */
export const CLAIM_MARKER = '.claim.json';
export interface ClaimMarker {
  batch: string;
  origin: BatchOrigin;
  file: string;
  /** As stored: the file's sha256, salted (`…:again:<batch>`) for `--again` and retry batches. */
  contentHash: string;
  createdAt: number;
}

/** The file's own hash: the stored hash without the salt of an `--again` or retry batch. */
export function fileHash(storedHash: string): string {
  return storedHash.split(':')[0]!;
}

/**
 * The name results are written under: the file name without its .csv or .xlsx extension (any
 * case). Other extensions stay (`orders.ods` → `orders.ods.error.txt`), so the explanation
 * names the very file it is about.
 */
export function batchName(sourceName: string): string {
  return sourceName.replace(/\.(csv|xlsx)$/i, '');
}

/**
 * outbox/<name>.result.csv, unless another batch already wrote (or will write) that name:
 * then outbox/<name>.<batch>.result.csv, so no result is ever overwritten by a later file.
 */
function chooseResultFile(rt: Pick<Runtime, 'batches' | 'config'>, name: string, batchId: string): string {
  const plain = join(rt.config.outboxDir, `${name}.result.csv`);
  // `x.reviewed.result.csv` is where batch `x`'s results go after a review decision (outbox/paths.ts):
  // a file named `x.reviewed.csv` never takes that name.
  const taken = rt.batches.resultFileTaken(plain) || name.toLowerCase().endsWith(REVIEWED);
  return taken || existsSync(plain) ? join(rt.config.outboxDir, `${name}.${batchId}.result.csv`) : plain;
}

export interface ClaimOptions {
  origin?: BatchOrigin;
  /** Take the lease at once (topup submit runs its own batch). */
  own?: boolean;
  /** Whose lease `own` takes: this process's (the default), or an operator action's (ops/lease.ts). */
  owner?: string;
  /** Move the file into jobs/ (inbox, retry), or copy it there and leave the user's file (submit). */
  move?: boolean;
  /** Allow a file identical to an earlier one (operator asked to order the same rows again). */
  again?: boolean;
  /** The batch this one retries (topup retry), recorded in the same commit as the claim. */
  retryOf?: string;
  /**
   * The hash the inbox file settled with (intake/watch.ts): a file with other bytes now was
   * written to again since, and is not claimed (ChangedSinceSettled).
   */
  settledHash?: string | undefined;
}

/** An inbox file written to again between settling and its claim: left in the inbox to settle anew. */
export class ChangedSinceSettled extends TopupError {
  constructor(name: string) {
    super(ErrorCode.InputFile, `${name} changed after it settled, before it was claimed: left in the inbox until it holds still again`);
    this.name = 'ChangedSinceSettled';
  }
}

/**
 * Copies `src` to a new file `dest` (0600) and returns the sha256 of exactly the bytes written.
 * A file that changed while it was copied (its size, times or inode differ after the copy) is
 * refused: the copy could be half old and half new bytes.
 */
async function copyAndHash(src: string, dest: string): Promise<string> {
  const before = statSync(src);
  const hash = createHash('sha256');
  const fd = openSync(dest, 'wx', 0o600);
  try {
    for await (const chunk of createReadStream(src)) {
      const buf = chunk as Buffer;
      hash.update(buf);
      for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const after = statSync(src);
  if (after.size !== before.size || after.mtimeMs !== before.mtimeMs || after.ctimeMs !== before.ctimeMs || after.ino !== before.ino) {
    throw new InputFileError(`${basename(src)} changed while it was being copied (it is still being written?): nothing was claimed; submit it again once it is complete`);
  }
  return hash.digest('hex');
}

/** The batch record, committed in one transaction with its result file's name. */
function recordClaim(rt: Pick<Runtime, 'batches' | 'config' | 'db' | 'owner'>, c: { id: string; sourceName: string; jobFile: string; storedHash: string; hash: string; origin: BatchOrigin; again: boolean; retryOf?: string | undefined; own: boolean; owner?: string | undefined; now: number }): { batch: Batch; duplicateOf: string | undefined } {
  return rt.db.transaction(() => {
    const earlier = c.again ? undefined : rt.batches.findByContent(c.hash);
    const name = batchName(c.sourceName);
    const b = rt.batches.create({
      id: c.id,
      name,
      sourceName: c.sourceName,
      jobFile: relative(rt.config.home, c.jobFile),
      contentHash: c.storedHash,
      origin: c.origin,
      sandbox: rt.config.sandbox,
      duplicateOf: earlier?.id ?? null,
      retryOf: c.retryOf ?? null,
      owner: c.own ? (c.owner ?? rt.owner) : null,
      leaseUntil: c.own ? c.now + LEASE_MS : 0,
      now: c.now,
    });
    rt.batches.setResultFile(c.id, chooseResultFile(rt, name, c.id));
    // After a restore, a file the copy did not know is looked up at every account before it sends
    // (store/backup.ts markClaimInRestoreWindow): in this transaction, so no send can come between.
    if (!earlier) markClaimInRestoreWindow(rt.db, rt.config.accounts.accounts.map((a) => a.name), { batchId: c.id, sourceName: c.sourceName, now: c.now });
    return { batch: b, duplicateOf: earlier?.id };
  }).immediate();
}

function writeMarker(jobDir: string, m: ClaimMarker): void {
  writeFileSync(join(jobDir, CLAIM_MARKER), `${JSON.stringify(m)}\n`, { mode: 0o600 });
}

/**
 * Per store (per process), the batches whose claim this process has committed and whose file it
 * has not moved into jobs/<batch>/ yet. A claim yields a turn of the loop between the two (below),
 * and the order API claims while the runner steps on: a step in that turn must not load the batch
 * (it would find no file and fail a batch the API had just answered 202 for: intake.ts).
 * Another process cannot mistake it the same way: a file it does not find is recoverClaims' case.
 */
const moving = new WeakMap<object, Set<string>>();

/** Whether this process's claim of `batchId` is between its commit and its file's move. */
export function claimMoving(rt: Pick<Runtime, 'batches'>, batchId: string): boolean {
  return moving.get(rt.batches)?.has(batchId) === true;
}

export async function claimFile(rt: Pick<Runtime, 'batches' | 'clock' | 'config' | 'db' | 'entropy' | 'log' | 'owner'>, path: string, opts: ClaimOptions = {}): Promise<Batch> {
  const now = rt.clock.now();
  const sourceName = basename(path);
  const move = opts.move ?? true;
  const origin = opts.origin ?? 'inbox';
  // A submitted file is copied before anything else, into a folder of its own beside the batch
  // folders: what is hashed is what was copied, and nothing the user does to their file later
  // reaches the batch.
  const staging = move ? undefined : join(rt.config.jobsDir, `${STAGING_PREFIX}${rt.entropy.hex(4)}`);
  if (staging) mkdirSync(staging, { mode: 0o700 });
  let id: string | undefined;
  let duplicateOf: string | undefined;
  let mine = moving.get(rt.batches);
  if (!mine) moving.set(rt.batches, (mine = new Set()));
  try {
    const source = staging ? join(staging, sourceName) : path;
    const hash = staging ? await copyAndHash(path, source) : await contentHash(path);
    // Hashing a large file takes time in which another process's claim may commit: a yield, so
    // the simulator puts other processes' work here too (two retries of one batch at once).
    await rt.clock.yield();
    if (opts.settledHash !== undefined && hash !== opts.settledHash) throw new ChangedSinceSettled(sourceName);
    id = newBatchId(hash, now, rt.entropy);
    const jobDir = join(rt.config.jobsDir, id);
    const jobFile = join(jobDir, sourceName);
    const storedHash = opts.again ? `${hash}:again:${id}` : hash;
    // Marked before the commit, so no turn of the loop sees the record without the mark.
    mine.add(id);
    ({ duplicateOf } = recordClaim(rt, { id, sourceName, jobFile, storedHash, hash, origin, again: opts.again === true, retryOf: opts.retryOf, own: opts.own === true, owner: opts.owner, now }));
    crashPoint('claim-committed');
    // The record is committed and the file not moved yet: recoverClaims finishes the move after a crash here.
    await rt.clock.yield();
    try {
      mkdirSync(jobDir, { recursive: true, mode: 0o700 });
      writeMarker(jobDir, { batch: id, origin, file: sourceName, contentHash: storedHash, createdAt: now });
      renameSync(source, jobFile);
    } catch (err) {
      // Another process took the inbox file between our hash and our move. Unless that process was
      // finishing this very claim (recoverClaims at its start), this claim never happened.
      if (!existsSync(jobFile)) {
        rt.batches.forgetClaim(id);
        rmSync(jobDir, { recursive: true, force: true });
        throw err;
      }
    }
  } finally {
    if (id !== undefined) mine.delete(id);
    if (staging) rmSync(staging, { recursive: true, force: true });
  }
  rt.log.info({ batch: id, file: sourceName, duplicateOf }, duplicateOf ? 'claimed a duplicate file' : 'claimed file');
  crashPoint('claimed');
  return rt.batches.get(id)!;
}

/**
 * A batch folder whose record the database lost (orphans.ts), claimed again under its own id:
 * the same folder, the same file, and trxids from the same bytes as before.
 */
export function adoptClaim(rt: Pick<Runtime, 'batches' | 'clock' | 'config' | 'db' | 'owner'>, o: { id: string; jobFile: string; sourceName: string; hash: string; createdAt: number }): Batch {
  recordClaim(rt, { id: o.id, sourceName: o.sourceName, jobFile: o.jobFile, storedHash: o.hash, hash: o.hash, origin: 'inbox', again: false, own: false, now: rt.clock.now() });
  writeMarker(join(rt.config.jobsDir, o.id), { batch: o.id, origin: 'inbox', file: o.sourceName, contentHash: o.hash, createdAt: o.createdAt });
  return rt.batches.get(o.id)!;
}

/** The folders in jobs/ that `topup submit` copies a file into before its claim is committed (orphans.ts sweeps stale ones). */
export const STAGING_PREFIX = '.submit-';
/** The staged copy of a submitted batch whose submit was killed between its commit and its move: the claimed bytes only. */
async function stagedCopy(rt: Pick<Runtime, 'config'>, b: Batch): Promise<string | undefined> {
  if (b.origin !== 'submit') return undefined;
  for (const d of stagingFolders(rt)) {
    const f = join(d, b.sourceName);
    if (existsSync(f) && lstatSync(f).isFile() && (await contentHash(f)) === fileHash(b.contentHash)) return f;
  }
  return undefined;
}

function stagingFolders(rt: Pick<Runtime, 'config'>): string[] {
  if (!existsSync(rt.config.jobsDir)) return [];
  return readdirSync(rt.config.jobsDir).filter((n) => n.startsWith(STAGING_PREFIX)).map((n) => join(rt.config.jobsDir, n));
}


/**
 * Finishes moves cut short by a kill: a `claimed` batch whose file is not in its folder yet.
 * Only an inbox batch's file can still be where it was, and only a file with the claimed bytes
 * is that file: a different file the user dropped under the same name since is left in the inbox
 * to be claimed as its own batch. (A submitted file was copied before its claim was committed,
 * into a staging folder in jobs/: the copy with the claimed bytes there is it; a file of the same
 * name in the inbox never is.) A batch whose file is gone is failed with an explanation in the
 * outbox; nothing of it was sent.
 */
export async function recoverClaims(rt: Pick<Runtime, 'batches' | 'clock' | 'config' | 'db' | 'log' | 'ownerIsDead' | 'rows'>): Promise<void> {
  for (const b of rt.batches.list({ states: ['claimed'] })) {
    const jobFile = join(rt.config.home, b.jobFile);
    // A batch its live claimer holds may be between its commit and its move right now.
    if (existsSync(jobFile) || (b.owner !== null && b.leaseUntil > rt.clock.now() && !rt.ownerIsDead(b.owner))) continue;
    // A submit killed between its commit and its move left its copy of the claimed bytes in its
    // staging folder: the batch goes on from that copy (as after Ctrl-C, a daemon carries it on).
    const staged = await stagedCopy(rt, b);
    if (staged) {
      const jobDir = join(rt.config.jobsDir, b.id);
      mkdirSync(jobDir, { recursive: true, mode: 0o700 });
      writeMarker(jobDir, { batch: b.id, origin: b.origin, file: b.sourceName, contentHash: b.contentHash, createdAt: b.createdAt });
      renameSync(staged, jobFile);
      rmSync(dirname(staged), { recursive: true, force: true });
      rt.log.warn({ batch: b.id }, 'finished moving a submitted file claimed before its submit was stopped');
      continue;
    }
    const inInbox = join(rt.config.inboxDir, b.sourceName);
    const there = b.origin === 'inbox' && existsSync(inInbox) && lstatSync(inInbox).isFile();
    if (there && (await contentHash(inInbox)) === fileHash(b.contentHash)) {
      const jobDir = join(rt.config.jobsDir, b.id);
      mkdirSync(jobDir, { recursive: true, mode: 0o700 });
      writeMarker(jobDir, { batch: b.id, origin: b.origin, file: b.sourceName, contentHash: b.contentHash, createdAt: b.createdAt });
      try {
        renameSync(inInbox, jobFile);
        rt.log.warn({ batch: b.id }, 'finished moving a file claimed before a restart');
        continue;
      } catch (err) {
        if (existsSync(jobFile)) continue; // its own process finished the move meanwhile
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    failBatch(
      rt,
      b,
      there
        ? `the claimed file ${b.sourceName} was replaced in the inbox by a different file of the same name before it was moved; nothing of the claimed file was ordered (the new file is taken as a batch of its own)`
        : `the claimed file ${b.sourceName} disappeared before it was read; nothing of it was ordered`,
      'gone',
    );
  }
}
