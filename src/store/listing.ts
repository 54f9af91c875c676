/**
 * What the console and /metrics read from the store, in pages and aggregates: batches with a
 * search and filters, a batch's rows with a state filter and a search, and the whole-home figures
 * (rows by state, batches by state and wait reason, the oldest unfinished row). Read-only; every
 * query is bounded by a LIMIT or answered from an index, so a page of a 100,000-row batch or a
 * scrape of a home with millions of rows does not hold the daemon's event loop.
 */
import type { Statement } from 'better-sqlite3';
import { orderIdFoldSql } from '../kernel/identity.js';
import { placeholders, statementCache, type Db } from './db.js';
import { toRow, type Row, type RowRecord } from './row-record.js';
import { LIVE_STATES, type RowState } from './row-states.js';
import { UNFINISHED_BATCH_STATES } from './batch-states.js';
import { batchStates } from './state-sql.js';
import type { Batch, BatchState, BatchStore, WaitReason } from './batches.js';

/** `active`: not finished yet (claimed, open, or a duplicate being written). */
export type BatchFilter = BatchState | 'active';

export interface BatchQuery {
  /** Where the batch's orders came from: the order API (one batch per day) or a file. */
  source?: 'api' | 'file' | undefined;
  /** Part of the batch id or of the file name (case-insensitive). */
  q?: string;
  state?: BatchFilter;
  wait?: Exclude<WaitReason, null>;
  /** Keyset paging: batches older than this sequence number. */
  beforeSeq?: number;
  limit: number;
}

export interface RowQuery {
  states?: readonly RowState[];
  /** A trxid, an order id, a player id, or any text of the row's own cells. */
  q?: string;
  /** Keyset paging: rows after this index. */
  afterIdx?: number;
  limit: number;
}

const WAIT_REASONS = ['balance', 'maintenance', 'account', 'catalog'] as const;

export class Listing {
  readonly #stmt: (sql: string) => Statement;
  /** Maps batch rows to Batch (one mapping, in batches.ts). */
  readonly #batches: BatchStore;
  constructor(db: Db, batches: BatchStore) {
    this.#stmt = statementCache(db);
    this.#batches = batches;
  }

  batches(query: BatchQuery): { batches: Batch[]; more: boolean } {
    const where: string[] = ['seq < @before'];
    if (query.q) where.push(`(instr(lower(id), lower(@q)) > 0 OR instr(lower(source_name), lower(@q)) > 0)`);
    if (query.state === 'active') where.push(`finished_at IS NULL AND state IN (${batchStates(UNFINISHED_BATCH_STATES)})`);
    else if (query.state) where.push('state = @state');
    if (query.wait) where.push('wait_reason = @wait AND finished_at IS NULL');
    // The order API's day batches, or files' batches (inbox, submit, retry, console, POST /api/v1/batches).
    if (query.source === 'api') where.push('api_day IS NOT NULL');
    else if (query.source === 'file') where.push('api_day IS NULL');
    const rows = this.#stmt(`SELECT id FROM batches WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit`).all({
      before: query.beforeSeq ?? Number.MAX_SAFE_INTEGER, q: query.q ?? '', state: query.state ?? '', wait: query.wait ?? '', limit: query.limit + 1,
    }) as { id: string }[];
    const batches = rows.slice(0, query.limit).map((r) => this.#batch(r.id)).filter((b): b is Batch => b !== undefined);
    return { batches, more: rows.length > query.limit };
  }

  #batch(id: string): Batch | undefined {
    return this.#batches.get(id);
  }

  #rowWhere(batchId: string, query: Omit<RowQuery, 'limit' | 'afterIdx'>): { sql: string; params: unknown[] } {
    const parts = ['batch_id = ?'];
    const params: unknown[] = [batchId];
    if (query.states && query.states.length > 0) {
      parts.push(`state IN (${placeholders(query.states)})`);
      params.push(...query.states);
    }
    const q = query.q?.trim();
    if (q) {
      // Codes (codes_json) are never searched: a search must not tell whether a code exists.
      // A trxid and an order id each under its one fold (kernel/identity.ts), as a person's look-up
      // of either is compared everywhere; within one batch.
      parts.push(`(trxid_fold(trxid) = trxid_fold(?) OR ${orderIdFoldSql('order_id')} = ${orderIdFoldSql('?')} OR json_extract(request_json, '$.userId') = ? OR instr(lower(cells_json), lower(?)) > 0
        OR (moves_json IS NOT NULL AND instr(lower(moves_json), lower('"trxid":' || json_quote(?))) > 0))`);
      // moves_json: a moved row is found by its own trxid too (its first trxid is kept there), also
      // when that trxid was derived and is in no cell.
      params.push(q, q, q, q, q);
    }
    return { sql: parts.join(' AND '), params };
  }

  rows(batchId: string, query: RowQuery): { rows: Row[]; more: boolean } {
    const { sql, params } = this.#rowWhere(batchId, query);
    const found = this.#stmt(`SELECT * FROM rows WHERE ${sql} AND idx > ? ORDER BY idx LIMIT ?`).all(...params, query.afterIdx ?? -1, query.limit + 1) as RowRecord[];
    return { rows: found.slice(0, query.limit).map(toRow), more: found.length > query.limit };
  }

  /** How many rows a filter matches (capped, so a search over a huge batch stays cheap to show). */
  countRows(batchId: string, query: Omit<RowQuery, 'limit' | 'afterIdx'>, cap = 100_000): number {
    const { sql, params } = this.#rowWhere(batchId, query);
    return (this.#stmt(`SELECT count(*) AS n FROM (SELECT 1 FROM rows WHERE ${sql} LIMIT ?)`).get(...params, cap) as { n: number }).n;
  }

  /** Rows in one state, whole home (from batch_counts, the counters the triggers keep: one entry per batch). */
  countInState(state: RowState): number {
    return (this.#stmt('SELECT coalesce(sum(n), 0) AS n FROM batch_counts WHERE state = ?').get(state) as { n: number }).n;
  }

  /** Batches by state and wait reason (a finished batch has none). */
  batchesByState(): { state: BatchState; wait: WaitReason; n: number }[] {
    return this.#stmt('SELECT state, wait_reason AS wait, count(*) AS n FROM batches GROUP BY state, wait_reason').all() as { state: BatchState; wait: WaitReason; n: number }[];
  }

  /** For each wait reason, since when the longest-waiting unfinished batch has waited. */
  longestWaits(): Partial<Record<Exclude<WaitReason, null>, number>> {
    const out: Partial<Record<Exclude<WaitReason, null>, number>> = {};
    const rows = this.#stmt(
      `SELECT wait_reason AS wait, min(coalesce(wait_since, created_at)) AS since FROM batches
       WHERE finished_at IS NULL AND wait_reason IS NOT NULL GROUP BY wait_reason`,
    ).all() as { wait: Exclude<WaitReason, null>; since: number }[];
    for (const r of rows) if ((WAIT_REASONS as readonly string[]).includes(r.wait)) out[r.wait] = r.since;
    return out;
  }

  /**
   * When the batch of the oldest row not yet at an end was claimed (null when every row has
   * ended). From the unfinished batches, which are few, not from the rows, which are many.
   */
  oldestLiveRowSince(): number | null {
    const r = this.#stmt(
      `SELECT min(b.created_at) AS t FROM batches b WHERE b.finished_at IS NULL
         AND EXISTS (SELECT 1 FROM batch_counts c WHERE c.batch_id = b.id AND c.state IN (${placeholders(LIVE_STATES)}) AND c.n > 0)`,
    ).get(...LIVE_STATES) as { t: number | null };
    return r.t;
  }

  /** The batch claimed from a file with these bytes at or after `since` (an upload submitted from the console). */
  batchFromFile(contentHash: string, since: number): Batch | undefined {
    const r = this.#stmt('SELECT id FROM batches WHERE content_hash = ? AND created_at >= ? ORDER BY seq LIMIT 1').get(contentHash, since) as { id: string } | undefined;
    return r ? this.#batch(r.id) : undefined;
  }

  /** Recently finished batches (for live views to see the end of what they followed). */
  finishedSince(since: number, limit: number): Batch[] {
    const rows = this.#stmt('SELECT id FROM batches WHERE finished_at >= ? ORDER BY finished_at DESC LIMIT ?').all(since, limit) as { id: string }[];
    return rows.map((r) => this.#batch(r.id)).filter((b): b is Batch => b !== undefined);
  }
}
