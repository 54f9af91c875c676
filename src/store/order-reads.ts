/**
 * Reads of the order API (orders/desk.ts): an API order by its trxid, its changes, and the change
 * feed. The feed is order_events (migration 12), written by triggers in the transaction of every
 * change of an API order's public status; its ids are the feed's cursor. Nothing here writes.
 */
import type { Statement } from 'better-sqlite3';
import { statementCache, type Db } from './db.js';
import { toRow, type Row, type RowRecord } from './row-record.js';
import { IN_FLIGHT_STATES } from './row-states.js';
import { rowStates } from './state-sql.js';

/** An API order's row and what only API orders have. */
export interface ApiRow {
  row: Row;
  apiBodyHash: string;
  callbackUrl: string | null;
  createdAt: number;
}

/** One row of order_events, as the feed and the deliverer read it. */
export interface EventRecord {
  id: number;
  batchId: string;
  idx: number;
  trxid: string;
  type: string;
  status: string;
  at: number;
}

type ApiRecord = RowRecord & { api_body_hash: string; callback_url: string | null; created_at: number | null };
type EventRow = { id: number; batch_id: string; idx: number; trxid: string; type: string; status: string; at: number };

function toApiRow(r: ApiRecord): ApiRow {
  return { row: toRow(r), apiBodyHash: r.api_body_hash, callbackUrl: r.callback_url, createdAt: r.created_at ?? r.updated_at };
}

function toEvent(e: EventRow): EventRecord {
  return { id: e.id, batchId: e.batch_id, idx: e.idx, trxid: e.trxid, type: e.type, status: e.status, at: e.at };
}

export class OrderReads {
  readonly #stmt: (sql: string) => Statement;
  constructor(db: Db) {
    this.#stmt = statementCache(db);
  }

  /**
   * The API order with this trxid under the one fold (kernel/identity.ts; migration 13), its exact spelling first:
   * the trxid it has, or one it had before it moved to another account (left_trxids: a move gives
   * the row a new trxid, and the shop still knows its order by its own).
   */
  byTrxid(trxid: string): ApiRow | undefined {
    const r = (this.#stmt('SELECT * FROM rows WHERE trxid_fold(trxid) = trxid_fold(@t) AND trxid IS NOT NULL AND api_body_hash IS NOT NULL ORDER BY trxid = @t DESC LIMIT 1').get({ t: trxid }) ??
      this.#stmt('SELECT r.* FROM left_trxids l JOIN rows r ON r.batch_id = l.batch_id AND r.idx = l.idx WHERE trxid_fold(l.trxid) = trxid_fold(@t) AND r.api_body_hash IS NOT NULL ORDER BY l.trxid = @t DESC LIMIT 1').get({ t: trxid })) as ApiRecord | undefined;
    return r ? toApiRow(r) : undefined;
  }

  byKey(batchId: string, idx: number): ApiRow | undefined {
    const r = this.#stmt('SELECT * FROM rows WHERE batch_id = ? AND idx = ? AND api_body_hash IS NOT NULL').get(batchId, idx) as ApiRecord | undefined;
    return r ? toApiRow(r) : undefined;
  }

  /** Every change of one order, oldest first. */
  history(batchId: string, idx: number): EventRecord[] {
    return (this.#stmt('SELECT id, batch_id, idx, trxid, type, status, at FROM order_events WHERE batch_id = ? AND idx = ? ORDER BY id').all(batchId, idx) as EventRow[]).map(toEvent);
  }

  /** Events after `afterId`, oldest first. */
  after(afterId: number, limit: number): EventRecord[] {
    return (this.#stmt('SELECT id, batch_id, idx, trxid, type, status, at FROM order_events WHERE id > ? ORDER BY id LIMIT ?').all(afterId, limit) as EventRow[]).map(toEvent);
  }

  event(id: number): EventRecord | undefined {
    const e = this.#stmt('SELECT id, batch_id, idx, trxid, type, status, at FROM order_events WHERE id = ?').get(id) as EventRow | undefined;
    return e ? toEvent(e) : undefined;
  }

  /** The newest event's id (0 when there is none). */
  lastEventId(): number {
    return (this.#stmt('SELECT coalesce(max(id), 0) AS n FROM order_events').get() as { n: number }).n;
  }

  /** USD of the rows with a request on its way on an account (sending, resending): not in its balance yet, not unsent either. */
  inFlightUsd(account: string): number {
    return (this.#stmt(`SELECT coalesce(sum(expected_usd), 0) AS usd FROM rows WHERE state IN (${rowStates(IN_FLIGHT_STATES)}) AND account = ?`).get(account) as { usd: number }).usd;
  }

  /**
   * USD of orders placed on an account since `since` (their first send): a balance read before
   * them does not show them spent yet (rows_placed index). Refunds are not subtracted: the figure
   * only ever makes the acceptance check stricter.
   */
  placedSince(account: string, since: number): number {
    return (this.#stmt('SELECT coalesce(sum(coalesce(amount_usd, expected_usd, 0)), 0) AS usd FROM rows WHERE first_sent_at >= ? AND order_id IS NOT NULL AND account = ?').get(since, account) as { usd: number }).usd;
  }
}
