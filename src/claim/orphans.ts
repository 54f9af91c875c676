/**
 * Batch folders in jobs/ that the database does not know: left by a database that was deleted,
 * lost, or restored from an older backup. Without this, their unfinished batches would simply
 * never end: no result rows, no warning.
 *
 * At the daemon's start each one is either claimed again or reported (log; `topup doctor`):
 *  - claimed again, under its own id, when it came from the inbox (its .claim.json says so, or it
 *    has none: folders from before the marker only ever held inbox and retry files) and its bytes
 *    are the ones claimed: its generated trxids come from those bytes alone, so rows the lost
 *    batch had already ordered are replayed by the API, not charged again; a file identical to a
 *    batch the database does know becomes a duplicate of it, as any file would;
 *  - reported, with what to do, otherwise: a batch that finished (its summary or its error file in
 *    outbox/ names it); a `topup submit` (the person who submitted it decides; `topup submit` of the
 *    kept copy gives the same trxids); an `--again` or retry batch, whose trxids came from the lost
 *    record (ordering it again could buy its rows twice); a file whose bytes changed since its claim;
 *    a folder without an order file.
 */
import { fileClock } from '../kernel/clock.js';
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { contentHash } from '../intake/formats/index.js';
import type { Runtime } from '../runtime.js';
import { BATCH_ID, CLAIM_MARKER, STAGING_PREFIX, adoptClaim, type ClaimMarker } from './claim.js';

export type OrphanVerdict = 'claimed again' | 'finished' | 'submitted' | 'new trxids' | 'changed' | 'empty';

export interface Orphan {
  id: string;
  dir: string;
  /** The order file in it, or null. */
  file: string | null;
  verdict: OrphanVerdict;
  /** One sentence for the operator: what it is and what to do. */
  detail: string;
}

const RETRY_FILE = /\.retry-b\d{6}-[0-9a-f]{6}\.csv$/i;

/** The ids of batch folders in jobs/ that the database does not know, oldest first. */
export function unknownBatchFolders(rt: Pick<Runtime, 'batches' | 'config'>): string[] {
  if (!existsSync(rt.config.jobsDir)) return [];
  // Listed before the database is asked: a claim commits its record before it makes its folder,
  // so a folder seen here has its record by the time we ask.
  const dirs = readdirSync(rt.config.jobsDir, { withFileTypes: true }).filter((d) => d.isDirectory() && BATCH_ID.test(d.name)).map((d) => d.name);
  return dirs.filter((id) => rt.batches.get(id) === undefined).sort();
}

/** Batch ids named by the outbox: in summaries (finished) and error files (failed). */
function namedInOutbox(rt: Pick<Runtime, 'config'>): Set<string> {
  const ids = new Set<string>();
  if (!existsSync(rt.config.outboxDir)) return ids;
  for (const f of readdirSync(rt.config.outboxDir)) {
    try {
      if (f.endsWith('.summary.json')) {
        const id = (JSON.parse(readFileSync(join(rt.config.outboxDir, f), 'utf8')) as { batchId?: unknown }).batchId;
        if (typeof id === 'string') ids.add(id);
      } else if (f.endsWith('.error.txt')) {
        for (const m of readFileSync(join(rt.config.outboxDir, f), 'utf8').matchAll(/\(batch (b\d{6}-[0-9a-f]{6})\)/g)) ids.add(m[1]!);
      }
    } catch {
      // A file being replaced right now, or not ours: it names nothing.
    }
  }
  return ids;
}

function readMarker(dir: string): ClaimMarker | null {
  try {
    return JSON.parse(readFileSync(join(dir, CLAIM_MARKER), 'utf8')) as ClaimMarker;
  } catch {
    return null;
  }
}

/** An orphan, with what claiming it again needs. */
type Judged = Orphan & { hash?: string; createdAt?: number };

/** What each unknown folder is, without changing anything (for `topup doctor`). */
export async function findOrphans(rt: Pick<Runtime, 'batches' | 'clock' | 'config' | 'log'>): Promise<Judged[]> {
  const ids = unknownBatchFolders(rt);
  if (ids.length === 0) return [];
  const finished = namedInOutbox(rt);
  const out: Judged[] = [];
  for (const id of ids) {
    try {
      out.push(await judgeFolder(rt, id, finished));
    } catch (err) {
      // One folder we cannot read (permissions, removed meanwhile) does not hide the others.
      rt.log.warn({ folder: join(rt.config.jobsDir, id), err: (err as Error).message }, 'could not look into a batch folder the database does not know');
    }
  }
  return out;
}

async function judgeFolder(rt: Pick<Runtime, 'clock' | 'config'>, id: string, finished: Set<string>): Promise<Judged> {
  const dir = join(rt.config.jobsDir, id);
  const marker = readMarker(dir);
  const file = marker?.file ?? readdirSync(dir).find((f) => !f.startsWith('.')) ?? null;
  const path = file ? join(dir, file) : null;
  if (!file || !path || !existsSync(path)) return { id, dir, file: null, verdict: 'empty', detail: `${dir} holds no order file; nothing to do (it can be removed)` };
  const base = { id, dir, file: path };
  if (finished.has(id)) return { ...base, verdict: 'finished', detail: `${path}: its batch finished before the database lost it; its results are in outbox/ (nothing to do)` };
  const origin = marker?.origin ?? (RETRY_FILE.test(file) ? 'retry' : 'inbox');
  const salted = marker ? marker.contentHash.includes(':') : origin === 'retry';
  if (origin === 'submit' && !salted) {
    return { ...base, verdict: 'submitted', detail: `${path} was submitted with topup submit and the database lost its batch; to finish it: topup submit ${path} (the same trxids: rows already ordered are not charged again)` };
  }
  if (salted || origin !== 'inbox') {
    return {
      ...base,
      verdict: 'new trxids',
      detail: `${path} was a${origin === 'retry' ? ' retry' : 'n --again'} batch whose trxids came from the lost database record, so it is not ordered again by itself: some of its rows may have been bought already. Compare with topup history, then order what is missing in a new file`,
    };
  }
  const hash = await contentHash(path);
  if (marker && marker.contentHash !== hash) {
    return { ...base, verdict: 'changed', detail: `${path} changed after it was claimed, so its rows' trxids cannot be worked out again; not ordered. Compare with topup history before ordering it again` };
  }
  return { ...base, verdict: 'claimed again', detail: `${path} came from the inbox and its batch is unknown to the database: it is claimed again (the same trxids: rows already ordered are replayed, not charged again)`, hash, createdAt: marker?.createdAt ?? rt.clock.now() };
}

/** A claim's staging folder (a submitted file's copy, a retry file) lives for seconds; one an hour old was left by a kill. */
const STALE_STAGING_MS = 60 * 60_000;

export function removeStaleStaging(rt: Pick<Runtime, 'batches' | 'config'>, now = fileClock.now()): number {
  if (!existsSync(rt.config.jobsDir)) return 0;
  // A submit killed between its claim and its move: its copy is in one of these folders, and
  // recoverClaims (at the runner's start) moves it into the batch. Until then none is swept.
  const awaited = rt.batches.list({ states: ['claimed'] }).some((b) => b.origin === 'submit' && !existsSync(join(rt.config.home, b.jobFile)));
  let removed = 0;
  for (const d of readdirSync(rt.config.jobsDir, { withFileTypes: true })) {
    if (!d.isDirectory() || !/^\.(submit|retry)-[0-9a-f]{8}$/.test(d.name)) continue;
    if (awaited && d.name.startsWith(STAGING_PREFIX)) continue;
    const dir = join(rt.config.jobsDir, d.name);
    try {
      if (now - statSync(dir).mtimeMs < STALE_STAGING_MS) continue;
      rmSync(dir, { recursive: true, force: true });
      removed++;
    } catch {
      // Removed by another process meanwhile.
    }
  }
  return removed;
}

/**
 * At the daemon's start: claims again the folders that are safe to claim again, logs every
 * unknown folder once, and returns them all.
 */
export async function adoptOrphans(rt: Pick<Runtime, 'batches' | 'clock' | 'config' | 'db' | 'log' | 'owner'>): Promise<Orphan[]> {
  const staged = removeStaleStaging(rt);
  if (staged > 0) rt.log.info({ folders: staged }, 'removed staging folders in jobs/ left by claims that were killed (nothing of them was ordered)');
  const found = await findOrphans(rt);
  // Finished ones need nothing: one line for all of them, not one per folder at every start.
  const finished = found.filter((o) => o.verdict === 'finished' || o.verdict === 'empty');
  if (finished.length > 0) {
    rt.log.info({ folders: finished.length, first: finished[0]!.id }, `jobs/ holds ${finished.length} batch folder(s) the database does not know whose batches finished (results in outbox/) or that hold no file; nothing to do`);
  }
  for (const o of found) {
    if (o.verdict === 'finished' || o.verdict === 'empty') continue;
    if (o.verdict === 'claimed again' && o.hash && o.file) {
      try {
        const b = adoptClaim(rt, { id: o.id, jobFile: o.file, sourceName: o.file.slice(o.dir.length + 1), hash: o.hash, createdAt: o.createdAt ?? rt.clock.now() });
        rt.log.warn({ batch: o.id, file: o.file, duplicateOf: b.duplicateOf ?? undefined }, `jobs/ held a batch the database does not know (was the database deleted or restored?): ${o.detail}`);
      } catch (err) {
        // Claimed by another process starting at the same moment: it is known now.
        if (!rt.batches.get(o.id)) throw err;
      }
    } else {
      rt.log.warn({ batch: o.id, folder: o.dir, verdict: o.verdict }, `jobs/ holds a batch folder the database does not know: ${o.detail}`);
    }
  }
  return found.map(({ hash: _h, createdAt: _c, ...o }) => o);
}
