/**
 * `topup retry`: a new batch made of the rows of an earlier batch that ended `rejected` or
 * `cancelled` and can be bought again without paying twice, written as a CSV in jobs/ and claimed
 * like any file.
 *
 * - Never retried, because an order for them may exist or was paid: rows in `review`, rejected
 *   rows that hold an order id or were refused because their trxid "was already used" or is held
 *   under another API key (403 FORBIDDEN: that key may be ours), and cancelled rows that were NOT
 *   refunded (the order was paid; buying again pays twice).
 * - Cancelled because of the player id (INVALID PLAYER …): left out unless asked
 *   (`includePlayerIdFailures`), since the same id fails again.
 * - A row that needs a new purchase gets a fresh trxid derived from the earlier batch's id and the row's index, written
 *   into the trxid column: the API sees new purchases, never a replay of the old ones, and a
 *   second retry of the same batch could only produce the same trxids, which the store refuses.
 *   Except a row its batch's cancel skipped before it was sent, whose file gave it a trxid: it keeps
 *   that trxid (nothing was sent under it), so this retry and a re-drop of the file cannot both buy it.
 *   A batch is retried once; to retry the rows that fail again, retry the retry batch.
 * - A column `retryOfLine` names each row's line in the original file (kept through a retry of
 *   a retry), so the retry's result can be matched to the first file.
 * - Cells are written as they were read, not made "formula-safe": this file is read back by
 *   topup, and a quote added to a cell would change the player id that is sent.
 * - The claim takes a lease of this action's own (ops/lease.ts) until the file is in place, so no
 *   daemon can start reading it half-moved; then that lease alone is given back and any runner
 *   may take the batch. With `keepLease` (topup retry --run) the lease is this process's, whose
 *   runner drives the batch at once.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { csvText } from '../kernel/csv-text.js';
import { NotFoundError, UsageError } from '../kernel/errors.js';
import { mapHeader } from '../intake/columns.js';
import { isPlayerIdFailure, normaliseCode } from '../api/classify.js';
import type { Runtime } from '../runtime.js';
import type { Store } from '../store/store.js';
import { actionOwner } from '../store/owner.js';
import type { Batch } from '../store/batches.js';
import { CANCELLED_CODE, NOT_COVERED_CODE, TRXID_USED_CODE, type Row, type RowState } from '../store/rows.js';
import { claimFile } from '../claim/claim.js';
import { REPEAT_CODE } from '../claim/repeats.js';
import { deriveTrxid } from '../claim/row-verdict.js';
import { roundCents } from '../kernel/money.js';

export const RETRY_STATES: readonly RowState[] = ['rejected', 'cancelled'];
const ORIGIN_COLUMN = 'retryOfLine';

export interface RetryBatch {
  batch: Batch;
  rows: number;
  /** Input lines of the earlier batch that were taken. */
  lines: number[];
  /** Lines left out, and why. */
  left: { line: number; why: string }[];
  /**
   * Of `lines`, those that keep the trxid their file gave them (never sent, so no purchase was made
   * under it); every other line is bought under a fresh trxid. The same decision that wrote the file,
   * so what `topup retry` says of the trxids is what the file holds.
   */
  keptTrxid: number[];
}

export interface RetryOptions {
  /** The caller runs the batch itself at once, so no daemon may take it first. */
  keepLease?: boolean;
  /** Also retry rows cancelled because of the player id (the operator fixed the ids?). */
  includePlayerIdFailures?: boolean;
  /**
   * Instead: buy the rows skipped because they repeated an earlier purchase (claim/repeats.ts),
   * on purpose. Their new trxids are derived like any retry's, so doing it twice buys nothing twice.
   */
  repeats?: boolean;
}

/** Why a finished row must not be bought again, or undefined when it may. */
export function notRetryable(row: Row, includePlayerIdFailures: boolean): string | undefined {
  if (row.state === 'review') return 'in review: whether it was charged is unknown (resolve it first: topup review)';
  if (row.state === 'rejected' && (row.orderId !== null || row.rejectCode === TRXID_USED_CODE)) {
    return 'an order for it may exist (the API named an order or said its trxid was already used)';
  }
  if (row.state === 'rejected' && normaliseCode(row.rejectCode ?? undefined) === 'FORBIDDEN') {
    // 403 FORBIDDEN: the supplier holds this trxid under another API key. Several keys of one
    // supplier share one trxid space, so that key may be ours (another home, another account at the
    // same supplier, the same file dropped in a second home: its derived trxids are the file's):
    // then the purchase is bought there, and a fresh trxid here would buy it twice (issue 29,
    // found by the simulator's `sibling` class). Only the operator can look in those keys' orders.
    return 'refused 403 FORBIDDEN: the supplier holds its trxid under another API key, which may be another key or home of yours that bought it; check those orders, and buy it in a new file under a new trxid only if it was not bought';
  }
  if (row.state === 'cancelled' && row.refunded !== true) {
    return 'cancelled WITHOUT a refund: that order was paid, so buying it again would pay twice (ask the supplier for the refund first)';
  }
  if (row.state === 'cancelled' && !includePlayerIdFailures && isPlayerIdFailure(row.error)) {
    return `failed for the player id (${row.error}): the same id fails again; fix it in a new file, or retry with --include-player-failures`;
  }
  if (row.state === 'skipped' && (row.rejectCode === CANCELLED_CODE || row.rejectCode === NOT_COVERED_CODE)) return undefined;
  return RETRY_STATES.includes(row.state) ? undefined : `ended ${row.state}`;
}

export interface RetryPlan {
  old: Batch & { header: string[] };
  /** The rows that would be bought again, each under a new trxid. */
  rows: Row[];
  left: RetryBatch['left'];
  /** What those rows cost when they were first priced (the catalog's price may have moved since). */
  usd: number;
}

/** Which rows a retry of this batch would buy again, and which it leaves out and why; creates nothing. */
export function retryPlan(rt: Pick<Store, 'batches' | 'rows'>, batchId: string, opts: RetryOptions = {}): RetryPlan {
  const old = rt.batches.get(batchId);
  if (!old) throw new NotFoundError(`no batch ${batchId} (see topup status)`);
  // An API order belongs to the shop that placed it: it was told "rejected" (nothing bought) and may
  // have refunded its customer or ordered again under a new trxid; buying it here again would charge
  // twice (an adversarial review). The shop re-orders through the API.
  if (old.apiDay !== null) throw new UsageError(`batch ${batchId} is the order API's batch of ${old.apiDay}: its orders are the shops' own, and a shop orders again itself (POST /api/v1/orders with a new trxid); nothing is retried here`);
  if (old.finishedAt === null) throw new UsageError(`batch ${batchId} has not finished yet; retry it once it has (or cancel it first)`);
  if (!old.header) throw new UsageError(`batch ${batchId} has no rows to retry (its file could not be read)`);
  const earlier = opts.repeats ? undefined : rt.batches.retriedAs(old.id);
  if (earlier) throw new UsageError(`batch ${batchId} was already retried as batch ${earlier}; to retry what failed again, run: topup retry ${earlier}`);
  const left: RetryBatch['left'] = [];
  const rows: Row[] = [];
  if (opts.repeats) {
    rows.push(...rt.rows.inStates(old.id, ['skipped']).filter((r) => r.rejectCode === REPEAT_CODE));
    if (rows.length === 0) throw new UsageError(`batch ${batchId} has no rows skipped as repeats of earlier purchases`);
  }
  for (const r of opts.repeats ? [] : rt.rows.inStates(old.id, [...RETRY_STATES, 'review', 'skipped'])) {
    // Skipped rows: only those a cancel, or a run of the part the balance covered, kept from being
    // sent (never bought); a duplicate's or a repeat's are bought again only on purpose (submit
    // --again, retry --repeats).
    if (r.state === 'skipped' && r.rejectCode !== CANCELLED_CODE && r.rejectCode !== NOT_COVERED_CODE) continue;
    const why = notRetryable(r, opts.includePlayerIdFailures === true);
    if (why === undefined) rows.push(r);
    else left.push({ line: r.line, why });
  }
  // Rows that failed validation were never sent, and a retry sends the same cells again, which fail
  // the same way: named with their reason, so "nothing to retry" says which rows and why (the
  // new-user trial saw a bare refusal for a batch whose only failure was a bad player id).
  if (!opts.repeats) {
    for (const r of rt.rows.inStates(old.id, ['invalid'])) left.push({ line: r.line, why: `invalid (${r.error ?? 'refused before sending'}): the same cells fail again; fix it in the file` });
    left.sort((a, b) => a.line - b.line);
  }
  if (rows.length === 0) {
    const detail = left.length > 0 ? `; left out: ${left.map((l) => `line ${l.line}: ${l.why}`).join('; ')}` : '';
    throw new UsageError(`batch ${batchId} has no rows that can be bought again safely${detail}`);
  }
  return { old: { ...old, header: old.header }, rows, left, usd: roundCents(rows.reduce((s, r) => s + (r.expectedUsd ?? 0), 0)) };
}

/** `keepLease`: the caller runs the batch itself at once, so no daemon may take it first. */
export async function createRetryBatch(rt: Pick<Runtime, 'batches' | 'clock' | 'config' | 'db' | 'entropy' | 'log' | 'owner' | 'rows'>, batchId: string, opts: RetryOptions = {}): Promise<RetryBatch> {
  const { old, rows, left } = retryPlan(rt, batchId, opts);
  const owner = opts.keepLease ? rt.owner : actionOwner(rt.owner);

  const header = [...old.header];
  const oldTrxCol = mapHeader(old.header).fields.trxid;
  let trxCol = oldTrxCol;
  if (trxCol === undefined) {
    header.push('trxid');
    trxCol = header.length - 1;
  }
  let originCol = header.findIndex((h) => h.trim() === ORIGIN_COLUMN);
  if (originCol < 0) {
    header.push(ORIGIN_COLUMN);
    originCol = header.length - 1;
  }
  const width = old.header.length;
  const keptTrxid: number[] = [];
  const body = rows.map((r) => {
    const cells = r.cells.slice(0, width);
    // Stryker disable next-line ConditionalExpression: unpadded, the cells assigned below past the end leave holes, which csv-stringify writes as empty cells: the same file.
    while (cells.length < header.length) cells.push('');
    // A row the batch's cancel skipped before it was ever sent keeps the trxid its file gave it:
    // nothing was sent under it, and the same trxid is what keeps this retry and a re-drop of the
    // file from both buying the row (found by the simulator: a retry bought it under a new trxid
    // while the re-dropped file bought it under its own). Every other row gets a fresh trxid.
    // (Not a row that moved to another account: its file's trxid stays with the account it left,
    // used, and the row gets a fresh one like any other; an adversarial review.)
    // The same for a row skipped because the balance did not cover it (topup run-covered).
    const neverSent = r.firstSentAt === null && r.moves.length === 0 && r.state === 'skipped' && (r.rejectCode === CANCELLED_CODE || r.rejectCode === NOT_COVERED_CODE);
    const given = oldTrxCol !== undefined && neverSent ? (r.cells[oldTrxCol] ?? '').trim() : '';
    if (given !== '') keptTrxid.push(r.line);
    cells[trxCol] = given !== '' ? given : deriveTrxid(`retry:${old.id}`, r.idx);
    if ((cells[originCol] ?? '').trim() === '') cells[originCol] = String(r.line);
    return cells;
  });
  const name = `${old.name.replace(/\.retry-b[0-9a-f-]+$/i, '')}.retry-${old.id}.csv`;
  // Staged under its final name in a folder of its own; the claim moves it into jobs/<batch>/.
  const stage = join(rt.config.jobsDir, `.retry-${rt.entropy.hex(4)}`);
  // Stryker disable next-line ObjectLiteral: defence in depth; the folder lives inside jobs/ (0700, runtime.ts) only until the claim has moved the file, so its own mode cannot be seen.
  mkdirSync(stage, { mode: 0o700 });
  const staged = join(stage, name);
  // Stryker disable next-line StringLiteral: 'wx' (fail if it exists) cannot fire in a folder made one line above under a random name.
  writeFileSync(staged, csvText([header, ...body]), { mode: 0o600, flag: 'wx' });
  let claimed: Batch;
  try {
    // A --repeats batch is not "the retry" of its batch (a batch is retried once): recorded as
    // one, it would refuse the ordinary retry of the rows that were refused or cancelled.
    claimed = await claimFile(rt, staged, { origin: 'retry', own: true, owner, move: true, again: true, ...(opts.repeats ? {} : { retryOf: old.id }) });
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  if (!opts.keepLease) rt.batches.release(claimed.id, owner);
  return { batch: rt.batches.get(claimed.id)!, rows: rows.length, lines: rows.map((r) => r.line), left, keptTrxid };
}
