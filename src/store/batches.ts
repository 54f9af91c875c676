/**
 * Batches: one per claimed file (or `topup submit` / `topup retry`). Every change is a guarded
 * UPDATE; a batch is driven by one process at a time, the holder of its lease.
 */
import { placeholders, statementCache, type Db } from './db.js';
import type { Statement } from 'better-sqlite3';
import { systemClock, type Clock } from '../kernel/clock.js';
import { UsageError } from '../kernel/errors.js';

import { BATCH_EDGES, NOTHING_ORDERED_BATCH_STATES, ORDERING_BATCH_STATES, UNFINISHED_BATCH_STATES, type BatchEvent, type BatchState } from './batch-states.js';
import { batchState, batchStates } from './state-sql.js';

export type { BatchState } from './batch-states.js';
export type BatchOrigin = 'inbox' | 'submit' | 'retry';
/** `player-checks`: a claimed batch whose rows' player checks are not all answered yet (claim/player-checks.ts). */
export type WaitReason = 'balance' | 'maintenance' | 'account' | 'catalog' | 'player-checks' | null;

/** How the input file was written, so its result is written the same way (outbox/dialect.ts). */
export interface InputDialect {
  delimiter: ',' | ';' | '\t';
  bom: boolean;
  /** The input was an .xlsx workbook: a workbook result is written too. */
  xlsx: boolean;
  /** The input's lines ended with CR LF (Windows, Excel): so do the result's. Absent: LF. */
  eol?: '\r\n';
  /** The input began with Excel's `sep=;` line: so does the result (a comma-locale Excel then still splits it). Absent: no such line. */
  sepLine?: true;
  /** Workbook input: the columns (0-based) whose filled cells were all numbers; the workbook result keeps them numbers. */
  numberColumns?: number[];
}

/** Batches stored before the dialect was recorded were written comma-separated, without a BOM. */
export const DEFAULT_DIALECT: InputDialect = Object.freeze({ delimiter: ',', bom: false, xlsx: false });

export interface Batch {
  id: string;
  seq: number;
  name: string;
  sourceName: string;
  jobFile: string;
  contentHash: string;
  origin: BatchOrigin;
  state: BatchState;
  waitReason: WaitReason;
  waitDetail: string | null;
  /** Since when (wall ms) the batch has waited for waitReason; null while it is not waiting. */
  waitSince: number | null;
  duplicateOf: string | null;
  retryOf: string | null;
  header: string[] | null;
  dialect: InputDialect;
  fileError: string | null;
  cancelRequested: boolean;
  sandbox: boolean;
  balanceBefore: number | null;
  balanceAfter: number | null;
  resultFile: string | null;
  owner: string | null;
  leaseUntil: number;
  createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** 1 for the first result; each reopening (a review row resolved later) writes the next version. */
  resultVersion: number;
  /** The order API's batch of this UTC day (YYYY-MM-DD), or null for a file's batch (orders/api-batch.ts). */
  apiDay: string | null;
  /**
   * The operator asked to run the part the balance covers (topup run-covered): while the balance
   * is short, the funds judgement skips the rows it does not cover and funds the rest.
   */
  runCovered: boolean;
}

interface BatchRow {
  id: string;
  seq: number;
  name: string;
  source_name: string;
  job_file: string;
  content_hash: string;
  origin: BatchOrigin;
  state: BatchState;
  wait_reason: WaitReason;
  wait_detail: string | null;
  wait_since: number | null;
  duplicate_of: string | null;
  retry_of: string | null;
  header_json: string | null;
  dialect_json: string | null;
  file_error: string | null;
  cancel_requested: number;
  sandbox: number;
  balance_before: number | null;
  balance_after: number | null;
  result_file: string | null;
  owner: string | null;
  lease_until: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  result_version: number;
  api_day: string | null;
  run_covered?: number;
}

function toBatch(r: BatchRow): Batch {
  return {
    id: r.id,
    seq: r.seq,
    name: r.name,
    sourceName: r.source_name,
    jobFile: r.job_file,
    contentHash: r.content_hash,
    origin: r.origin,
    state: r.state,
    waitReason: r.wait_reason,
    waitDetail: r.wait_detail,
    waitSince: r.wait_since ?? null,
    duplicateOf: r.duplicate_of,
    retryOf: r.retry_of,
    header: r.header_json ? (JSON.parse(r.header_json) as string[]) : null,
    dialect: r.dialect_json ? (JSON.parse(r.dialect_json) as InputDialect) : DEFAULT_DIALECT,
    fileError: r.file_error,
    cancelRequested: r.cancel_requested === 1,
    sandbox: r.sandbox === 1,
    balanceBefore: r.balance_before,
    balanceAfter: r.balance_after,
    resultFile: r.result_file,
    owner: r.owner,
    leaseUntil: r.lease_until,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    resultVersion: r.result_version,
    apiDay: r.api_day ?? null,
    runCovered: r.run_covered === 1,
  };
}

export interface NewBatch {
  id: string;
  name: string;
  sourceName: string;
  jobFile: string;
  contentHash: string;
  origin: BatchOrigin;
  sandbox: boolean;
  duplicateOf?: string | null;
  retryOf?: string | null;
  owner?: string | null;
  leaseUntil?: number;
  now: number;
}

export class BatchStore {
  readonly #stmt: (sql: string) => Statement;
  /** For the start of a wait when the caller gives no time. */
  readonly #clock: Pick<Clock, 'now'>;
  constructor(db: Db, clock: Pick<Clock, 'now'> = systemClock) {
    this.#stmt = statementCache(db);
    this.#clock = clock;
  }

  /** One state change: the new state by a CASE over the event's edges (batch-states.ts), guarded by the states they leave. */
  #move(event: BatchEvent, sets: string, params: Record<string, unknown>): boolean {
    const edges = BATCH_EDGES.filter((e) => e.event === event);
    const next = `CASE state ${edges.map((e) => `WHEN ${batchState(e.from)} THEN ${batchState(e.to)}`).join(' ')} END`;
    const from = batchStates(edges.map((e) => e.from));
    return this.#stmt(`UPDATE batches SET state = ${next}${sets ? `, ${sets}` : ''} WHERE id = @id AND state IN (${from})`).run(params).changes === 1;
  }

  /**
   * A batch is retried once: a retry batch is inserted only if no other (not failed) retries the
   * same batch, in the one INSERT statement, so two retries at once (a double click on the
   * console's Retry, the console beside `topup retry`) cannot both pass (an adversarial review:
   * both were made, with the same derived trxids). Not a unique index: homes from before may hold
   * two retries of one batch already, and a migration must not fail on them.
   */
  create(b: NewBatch): Batch {
    const made = this.#stmt(
        `INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, duplicate_of, retry_of,
           sandbox, owner, lease_until, created_at)
         SELECT @id, (SELECT coalesce(max(seq), 0) + 1 FROM batches), @name, @sourceName, @jobFile, @contentHash, @origin,
           ${batchState('claimed')}, @duplicateOf, @retryOf, @sandbox, @owner, @leaseUntil, @now
         WHERE @retryOf IS NULL OR NOT EXISTS (SELECT 1 FROM batches WHERE retry_of = @retryOf AND state != ${batchState('failed')})`,
      )
      .run({
        ...b,
        duplicateOf: b.duplicateOf ?? null,
        retryOf: b.retryOf ?? null,
        sandbox: b.sandbox ? 1 : 0,
        owner: b.owner ?? null,
        leaseUntil: b.leaseUntil ?? 0,
      });
    if (made.changes === 0) {
      const earlier = this.retriedAs(b.retryOf!);
      throw new UsageError(`batch ${b.retryOf} was already retried as batch ${earlier}; to retry what failed again, run: topup retry ${earlier}`);
    }
    return this.get(b.id)!;
  }

  /**
   * The order API's batch of a UTC day, created `open` if there is none (orders/api-batch.ts). Call
   * inside a transaction: the unique index batches_api_day makes two processes' first orders of a
   * day share one batch. Born `claimed` and opened at once (the state table's `stored` edge): an API
   * batch has no file to read; its rows arrive one by one and it stays open until its day is over.
   */
  apiBatch(day: string, make: () => NewBatch & { header: string[]; resultFile: string }): Batch {
    const found = this.#stmt('SELECT * FROM batches WHERE api_day = ?').get(day) as BatchRow | undefined;
    if (found && found.state === 'open') return toBatch(found);
    // The wall clock stepped back across midnight: the batch of the day it reads may be finished
    // already. Orders go on into the newest day's batch, never back into a finished one (found by
    // the simulator: every acceptance failed for an hour after such a step).
    const newest = this.#stmt('SELECT * FROM batches WHERE api_day IS NOT NULL ORDER BY api_day DESC LIMIT 1').get() as BatchRow | undefined;
    if (newest && newest.api_day! > day) return toBatch(newest);
    if (found) return toBatch(found);
    const b = make();
    this.create(b);
    this.#stmt('UPDATE batches SET api_day = ?, result_file = ? WHERE id = ?').run(day, b.resultFile, b.id);
    this.open(b.id, b.header);
    return this.get(b.id)!;
  }

  get(id: string): Batch | undefined {
    const r = this.#stmt('SELECT * FROM batches WHERE id = ?').get(id) as BatchRow | undefined;
    return r ? toBatch(r) : undefined;
  }

  list(opts: { states?: BatchState[]; limit?: number } = {}): Batch[] {
    const where = opts.states ? `WHERE state IN (${placeholders(opts.states)})` : '';
    const rows = this.#stmt(`SELECT * FROM batches ${where} ORDER BY seq DESC LIMIT ?`)
      .all(...(opts.states ?? []), opts.limit ?? 1_000_000) as BatchRow[];
    return rows.map(toBatch);
  }

  /**
   * The earliest batch (not itself a duplicate) that processed a file with these bytes, from the
   * inbox or `topup submit`. Retry batches and `--again` runs carry salted hashes, so they never match.
   */
  findByContent(hash: string): Batch | undefined {
    // A cancelled batch is not one "already processed": the rows it never sent can be bought by
    // dropping the file again (those it sent are still repeats: claim/repeats.ts).
    const r = this.#stmt(`SELECT * FROM batches WHERE content_hash = ? AND state NOT IN (${batchStates(NOTHING_ORDERED_BATCH_STATES)}) AND origin IN ('inbox', 'submit') AND cancel_requested = 0 ORDER BY seq LIMIT 1`)
      .get(hash) as BatchRow | undefined;
    return r ? toBatch(r) : undefined;
  }

  /** Whether a batch already writes (or wrote) its result to this path. */
  resultFileTaken(path: string): boolean {
    return this.#stmt('SELECT 1 FROM batches WHERE result_file = ?').get(path) !== undefined;
  }

  setResultFile(id: string, path: string): void {
    this.#stmt('UPDATE batches SET result_file = ? WHERE id = ?').run(path, id);
  }

  /** Undoes a claim whose file move failed (another process took the file first). */
  forgetClaim(id: string): void {
    this.#stmt(`DELETE FROM batches WHERE id = ? AND state = ${batchState('claimed')}`).run(id);
  }

  /** The batch that retried this one, if any. A retry whose claim failed does not count. */
  retriedAs(id: string): string | undefined {
    return (this.#stmt(`SELECT id FROM batches WHERE retry_of = ? AND state != ${batchState('failed')}`).get(id) as { id: string } | undefined)?.id;
  }

  /** claimed → open, once every row is stored. */
  open(id: string, header: string[]): boolean {
    return this.#move('stored', 'header_json = @header', { id, header: JSON.stringify(header) });
  }

  fail(id: string, fileError: string, now: number): boolean {
    return this.#move('file-failed', 'file_error = @fileError, finished_at = @now, owner = NULL', { id, fileError, now });
  }

  setDialect(id: string, dialect: InputDialect): void {
    this.#stmt('UPDATE batches SET dialect_json = ? WHERE id = ?').run(JSON.stringify(dialect), id);
  }

  markDuplicate(id: string, header: string[] | null): boolean {
    return this.#move('duplicate-stored', 'header_json = @header', { id, header: header ? JSON.stringify(header) : null });
  }

  /** The wait keeps its start while its reason stays the same (only the detail changes). */
  setWait(id: string, reason: WaitReason, detail: string | null, now = this.#clock.now()): void {
    this.#stmt(
      `UPDATE batches SET wait_since = CASE WHEN @reason IS NULL THEN NULL WHEN wait_reason IS @reason THEN coalesce(wait_since, @now) ELSE @now END,
         wait_reason = @reason, wait_detail = @detail WHERE id = @id`,
    ).run({ id, reason, detail, now });
  }

  setBalanceBefore(id: string, usd: number, now: number): void {
    this.#stmt('UPDATE batches SET balance_before = coalesce(balance_before, ?), started_at = coalesce(started_at, ?) WHERE id = ?')
      .run(usd, now, id);
  }

  finish(id: string, balanceAfter: number | null, resultFile: string, now: number): boolean {
    return this.#move(
      'finished',
      'balance_after = @balanceAfter, result_file = @resultFile, finished_at = @now, wait_reason = NULL, wait_detail = NULL, wait_since = NULL, owner = NULL, lease_until = 0',
      { id, balanceAfter, resultFile, now },
    );
  }

  /**
   * A finished batch whose rows changed after it ended (a review row settled by the recheck or an
   * operator): it is driven again, and its results are written as the next version (to
   * <name>.reviewed.result.csv, outbox/paths.ts), never over the first result handed out. Only a
   * batch that ended normally (`done`) is reopened.
   */
  reopen(id: string): boolean {
    return this.#move('reopened', 'finished_at = NULL, result_version = result_version + 1', { id });
  }

  /** The operator's word to run the part the balance covers (see Batch.runCovered); a file's batch still ordering only. */
  requestRunCovered(id: string): boolean {
    return this.#stmt(`UPDATE batches SET run_covered = 1 WHERE id = ? AND api_day IS NULL AND cancel_requested = 0 AND state IN (${batchStates(ORDERING_BATCH_STATES)})`).run(id).changes === 1;
  }

  requestCancel(id: string): boolean {
    return this.#stmt(`UPDATE batches SET cancel_requested = 1 WHERE id = ? AND state IN (${batchStates(ORDERING_BATCH_STATES)})`).run(id).changes === 1;
  }

  /** Takes or renews the lease on a batch; false when another live process holds it. */
  acquire(id: string, owner: string, now: number, leaseMs: number): boolean {
    return (
      this.#stmt(
          `UPDATE batches SET owner = @owner, lease_until = @until
           WHERE id = @id AND state IN (${batchStates(UNFINISHED_BATCH_STATES)}) AND (owner IS NULL OR owner = @owner OR lease_until < @now)`,
        )
        .run({ id, owner, now, until: now + leaseMs }).changes === 1
    );
  }

  /** Takes a batch from an owner known to be dead (same host, process gone), lease or not. */
  takeOver(id: string, owner: string, deadOwner: string, now: number, leaseMs: number): boolean {
    return (
      this.#stmt(`UPDATE batches SET owner = ?, lease_until = ? WHERE id = ? AND owner = ? AND state IN (${batchStates(UNFINISHED_BATCH_STATES)})`)
        .run(owner, now + leaseMs, id, deadOwner).changes === 1
    );
  }

  /**
   * How many batches are not finished, and how many of them `owner` does not hold: the lease
   * stage's look on every step, one pass over the counters of a few batches instead of reading and
   * mapping each (it reads them only when some batch is not its own).
   */
  unfinishedHeld(owner: string): { unfinished: number; others: number } {
    return this.#stmt(
      `SELECT count(*) AS unfinished, coalesce(sum(owner IS NOT ?), 0) AS others FROM batches WHERE state IN (${batchStates(UNFINISHED_BATCH_STATES)}) AND finished_at IS NULL`,
    ).get(owner) as { unfinished: number; others: number };
  }

  /** Batches not finished yet, whoever holds them. */
  unfinished(): Batch[] {
    return (this.#stmt(`SELECT * FROM batches WHERE state IN (${batchStates(UNFINISHED_BATCH_STATES)}) AND finished_at IS NULL ORDER BY seq`).all() as BatchRow[]).map(toBatch);
  }

  /** After the wall clock stepped back: a lease further ahead than one lease length was written on the old clock. */
  clampLeases(now: number, leaseMs: number): number {
    return this.#stmt('UPDATE batches SET lease_until = ? WHERE lease_until > ?').run(now + leaseMs, now + leaseMs).changes;
  }

  renewAll(owner: string, now: number, leaseMs: number): void {
    this.#stmt('UPDATE batches SET lease_until = ? WHERE owner = ?').run(now + leaseMs, owner);
  }

  /** A process stopping: every lease it holds goes. */
  releaseAll(owner: string): void {
    this.#stmt('UPDATE batches SET owner = NULL, lease_until = 0 WHERE owner = ?').run(owner);
  }

  /** One lease given back by its holder (an operator action's, ops/lease.ts): no other lease of anyone. */
  release(id: string, owner: string): boolean {
    return this.#stmt('UPDATE batches SET owner = NULL, lease_until = 0 WHERE id = ? AND owner = ?').run(id, owner).changes === 1;
  }

  ownedBy(owner: string): Batch[] {
    return (this.#stmt(`SELECT * FROM batches WHERE owner = ? ORDER BY seq`).all(owner) as BatchRow[]).map(toBatch);
  }
}
