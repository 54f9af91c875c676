/**
 * Claiming: a settled file in inbox/ becomes a batch. The batch record is committed first,
 * then the file is renamed into jobs/<batch>/, so a kill between the two leaves a `claimed`
 * batch whose file is still in the inbox: `recoverClaims` finishes the move on restart.
 *
 * A file whose bytes match a batch already taken from the inbox is a duplicate: it is moved
 * like any other (the inbox shows only what waits), nothing is sent, and every row's result
 * names the earlier batch.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, renameSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { contentHash } from '../intake/formats/index.js';
import type { Runtime } from '../runtime.js';
import type { Batch, BatchOrigin } from '../store/batches.js';

/** `b261121-3fa9c1`: the day, then 6 hex digits that differ for every claim. */
export function newBatchId(hash: string, now: number): string {
  const d = new Date(now);
  const day = `${d.getUTCFullYear() % 100}`.padStart(2, '0') + `${d.getUTCMonth() + 1}`.padStart(2, '0') + `${d.getUTCDate()}`.padStart(2, '0');
  const salt = createHash('sha256').update(`${hash}:${now}:${randomBytes(8).toString('hex')}`).digest('hex');
  return `b${day}-${salt.slice(0, 6)}`;
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
function chooseResultFile(rt: Runtime, name: string, batchId: string): string {
  const plain = join(rt.config.outboxDir, `${name}.result.csv`);
  const taken = rt.batches.resultFileTaken(plain);
  return taken || existsSync(plain) ? join(rt.config.outboxDir, `${name}.${batchId}.result.csv`) : plain;
}

export interface ClaimOptions {
  origin?: BatchOrigin;
  /** Take the lease at once (topup submit runs its own batch). */
  own?: boolean;
  /** Move the file into jobs/ (inbox) or copy nothing and point at it (submit keeps the user's file). */
  move?: boolean;
  /** Allow a file identical to an earlier one (operator asked to order the same rows again). */
  again?: boolean;
  /** The batch this one retries (topup retry), recorded in the same commit as the claim. */
  retryOf?: string;
}

export async function claimFile(rt: Runtime, path: string, opts: ClaimOptions = {}): Promise<Batch> {
  const now = Date.now();
  const sourceName = basename(path);
  const hash = await contentHash(path);
  const id = newBatchId(hash, now);
  const earlier = opts.again ? undefined : rt.batches.findByContent(hash);
  const name = batchName(sourceName);
  const jobDir = join(rt.config.jobsDir, id);
  const move = opts.move ?? true;
  const jobFile = move ? join(jobDir, sourceName) : path;

  const batch = rt.db.transaction(() => {
    const b = rt.batches.create({
      id,
      name,
      sourceName,
      jobFile: relative(rt.config.home, jobFile),
      contentHash: opts.again ? `${hash}:again:${id}` : hash,
      origin: opts.origin ?? 'inbox',
      sandbox: rt.config.sandbox,
      duplicateOf: earlier?.id ?? null,
      retryOf: opts.retryOf ?? null,
      owner: opts.own ? rt.owner : null,
      leaseUntil: opts.own ? now + LEASE_MS : 0,
      now,
    });
    rt.batches.setResultFile(id, chooseResultFile(rt, name, id));
    return b;
  }).immediate();

  if (move) {
    mkdirSync(jobDir, { recursive: true, mode: 0o700 });
    try {
      renameSync(path, jobFile);
    } catch (err) {
      // Another process claimed it between our hash and our move: this claim never happened.
      rt.batches.forgetClaim(id);
      throw err;
    }
  }
  rt.log.info({ batch: id, file: sourceName, duplicateOf: earlier?.id }, earlier ? 'claimed a duplicate file' : 'claimed file');
  return rt.batches.get(batch.id)!;
}

export const LEASE_MS = 15_000;

/** Finishes moves cut short by a kill: a `claimed` batch whose file is still in the inbox. */
export function recoverClaims(rt: Runtime): void {
  for (const b of rt.batches.list({ states: ['claimed'] })) {
    const jobFile = join(rt.config.home, b.jobFile);
    if (existsSync(jobFile)) continue;
    const inInbox = join(rt.config.inboxDir, b.sourceName);
    if (existsSync(inInbox) && lstatSync(inInbox).isFile()) {
      mkdirSync(join(rt.config.jobsDir, b.id), { recursive: true, mode: 0o700 });
      renameSync(inInbox, jobFile);
      rt.log.warn({ batch: b.id }, 'finished moving a file claimed before a restart');
    } else {
      rt.batches.fail(b.id, `the claimed file ${b.sourceName} disappeared before it was read`, Date.now());
    }
  }
}
