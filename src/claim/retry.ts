/**
 * `topup retry`: a new batch made of the rows of an earlier batch that ended `rejected` or
 * `cancelled`, written as a CSV in jobs/ and claimed like any file.
 *
 * - Every row gets a fresh trxid derived from the earlier batch's id and the row's index, written
 *   into the trxid column: the API sees new purchases, never a replay of the old ones, and a
 *   second retry of the same batch could only produce the same trxids, which the store refuses.
 *   A batch is retried once; to retry the rows that fail again, retry the retry batch.
 * - Cells are written as they were read, not made "formula-safe": this file is read back by
 *   topup, and a quote added to a cell would change the player id that is sent.
 * - The claim takes this process's lease until the file is in place, so no daemon can start
 *   reading it half-moved; then the lease is released and any runner may take it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { NotFoundError, UsageError } from '../errors.js';
import { mapHeader } from '../intake/columns.js';
import type { Runtime } from '../runtime.js';
import type { Batch } from '../store/batches.js';
import type { RowState } from '../store/rows.js';
import { claimFile } from './claim.js';
import { deriveTrxid } from './load.js';

export const RETRY_STATES: readonly RowState[] = ['rejected', 'cancelled'];

export interface RetryBatch {
  batch: Batch;
  rows: number;
  /** Input lines of the earlier batch that were taken. */
  lines: number[];
}

/** `keepLease`: the caller runs the batch itself at once, so no daemon may take it first. */
export async function createRetryBatch(rt: Runtime, batchId: string, opts: { keepLease?: boolean } = {}): Promise<RetryBatch> {
  const old = rt.batches.get(batchId);
  if (!old) throw new NotFoundError(`no batch ${batchId} (see topup status)`);
  if (old.finishedAt === null) throw new UsageError(`batch ${batchId} has not finished yet; retry it once it has (or cancel it first)`);
  if (!old.header) throw new UsageError(`batch ${batchId} has no rows to retry (its file could not be read)`);
  const rows = rt.rows.inStates(old.id, RETRY_STATES);
  if (rows.length === 0) throw new UsageError(`batch ${batchId} has no rejected or cancelled rows to retry`);
  const earlier = rt.batches.retriedAs(old.id);
  if (earlier) throw new UsageError(`batch ${batchId} was already retried as batch ${earlier}; to retry what failed again, run: topup retry ${earlier}`);

  const header = [...old.header];
  let trxCol = mapHeader(header).fields.trxid;
  if (trxCol === undefined) {
    header.push('trxid');
    trxCol = header.length - 1;
  }
  const width = old.header.length;
  const body = rows.map((r) => {
    const cells = r.cells.slice(0, width);
    while (cells.length < header.length) cells.push('');
    cells[trxCol] = deriveTrxid(`retry:${old.id}`, r.idx);
    return cells;
  });
  const name = `${old.name.replace(/\.retry-b[0-9a-f-]+$/i, '')}.retry-${old.id}.csv`;
  // Staged under its final name in a folder of its own; the claim moves it into jobs/<batch>/.
  const stage = join(rt.config.jobsDir, `.retry-${randomBytes(4).toString('hex')}`);
  mkdirSync(stage, { mode: 0o700 });
  const staged = join(stage, name);
  writeFileSync(staged, stringify([header, ...body]), { mode: 0o600, flag: 'wx' });
  let claimed: Batch;
  try {
    claimed = await claimFile(rt, staged, { origin: 'retry', own: true, move: true, again: true, retryOf: old.id });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  if (!opts.keepLease) rt.batches.releaseAll(rt.owner);
  return { batch: rt.batches.get(claimed.id)!, rows: rows.length, lines: rows.map((r) => r.line) };
}
