/**
 * What the pipeline asks of the rows table: one row, a batch's rows and counts, which rows are
 * due to be sent or polled. Read-only; every change of a row's state is in rows.ts; which row
 * holds an order and the review rows (the lookups of verification, review and reports) are in
 * row-lookups.ts, the reads of the repeat rule in repeat-reads.ts.
 */
import type { Statement } from 'better-sqlite3';
import { placeholders, statementCache, type Db } from './db.js';
import { emptyCounts, toRow, type Row, type RowRecord, type StateCounts } from './row-record.js';
import { FOLLOWED_STATES, LIVE_STATES, PLACED_STATES, SENDABLE_STATES, type RowState } from './row-states.js';
import { ORDERING_BATCH_STATES } from './batch-states.js';
import { IN_DOUBT_INDEX, IN_POLL_INDEX, IN_REVIEW_INDEX, IN_SEND_INDEX, batchStates, rowState, rowStates } from './state-sql.js';
import { roundCents } from '../kernel/money.js';
import { SPENT_USD_SQL } from './cost.js';

/*
 * The WHERE terms of the partial indexes (IN_SEND_INDEX, IN_POLL_INDEX …: state-sql.ts, derived
 * from row-states.ts), word for word: SQLite uses a partial index only when the query repeats its
 * condition (test/unit/flat-cost.test.ts checks the plans). The state (and a LIMIT) is written into
 * the SQL, not bound: with `state = ?` or `LIMIT ?` SQLite prepares the statement again at every
 * run, to plan for the value (3× the cost, measured).
 */

/** reject_code of a row stored `skipped` because it repeats an earlier purchase (topup retry --repeats). */
export const REPEAT_CODE = 'TOPUP_REPEATED_ROW';

/** Rows a caller already holds (sends started, not yet marked `sending`): skipped by sendable(). */
export interface Busy {
  has(batchId: string, idx: number): boolean;
}
const NOT_BUSY: Busy = { has: () => false };

/** Which batches may send what: new orders and resends, or resends of rows in doubt only. */
export interface SendScope {
  newOrders: readonly string[];
  resendsOnly: readonly string[];
}

export class RowReads {
  protected readonly stmt: (sql: string) => Statement;
  protected readonly db: Db;
  constructor(db: Db) {
    this.db = db;
    this.stmt = statementCache(db);
  }

  *iterate(batchId: string): Generator<Row> {
    for (const r of this.stmt('SELECT * FROM rows WHERE batch_id = ? ORDER BY idx').iterate(batchId) as Iterable<RowRecord>) {
      yield toRow(r);
    }
  }

  /**
   * Up to `limit` rows from index `fromIdx` on, in order. For readers that yield between pages
   * (the result writers): an open iterate() would keep the connection busy across the yield.
   */
  page(batchId: string, fromIdx: number, limit: number): Row[] {
    return (this.stmt('SELECT * FROM rows WHERE batch_id = ? AND idx >= ? ORDER BY idx LIMIT ?').all(batchId, fromIdx, limit) as RowRecord[]).map(toRow);
  }

  get(batchId: string, idx: number): Row | undefined {
    const r = this.stmt('SELECT * FROM rows WHERE batch_id = ? AND idx = ?').get(batchId, idx) as RowRecord | undefined;
    return r ? toRow(r) : undefined;
  }

  /** The row that has, or had before it moved to another account (left_trxids), this trxid, in any letter case. */
  byTrxid(trxid: string): { batchId: string; idx: number } | undefined {
    // Under the one fold (kernel/identity.ts, rows_trxid_folded): a trxid used as SHOP-1001 is used as
    // shop-1001 (an adversarial review), ÄB-7 as äb-7 and ＡＢ-７ as ab-7. The exact spelling first:
    // a home that bought two spellings before the fold was one (migration 13) finds each as itself.
    const r = (this.stmt('SELECT batch_id, idx FROM rows WHERE trxid = ?').get(trxid) ??
      this.stmt('SELECT batch_id, idx FROM rows WHERE trxid_fold(trxid) = trxid_fold(?) AND trxid IS NOT NULL LIMIT 1').get(trxid) ??
      this.stmt('SELECT batch_id, idx FROM left_trxids WHERE trxid_fold(trxid) = trxid_fold(?) LIMIT 1').get(trxid)) as { batch_id: string; idx: number } | undefined;
    return r ? { batchId: r.batch_id, idx: r.idx } : undefined;
  }

  inStates(batchId: string, states: readonly RowState[]): Row[] {
    const rows = this.stmt(`SELECT * FROM rows WHERE batch_id = ? AND state IN (${placeholders(states)}) ORDER BY idx`)
      .all(batchId, ...states) as RowRecord[];
    return rows.map(toRow);
  }

  /** Rows per state: the counters the triggers keep (batch_counts, migrations.ts), not a scan of the batch. */
  counts(batchId: string): StateCounts {
    const counts = emptyCounts();
    for (const r of this.stmt('SELECT state, n FROM batch_counts WHERE batch_id = ?').all(batchId) as { state: RowState; n: number }[]) {
      counts[r.state] = r.n;
    }
    return counts;
  }

  /** Rows of these batches in these states, from the counters. */
  #count(batchIds: readonly string[], states: readonly RowState[]): number {
    let n = 0;
    for (const id of batchIds) for (const st of states) n += (this.stmt('SELECT n FROM batch_counts WHERE batch_id = ? AND state = ?').get(id, st) as { n: number } | undefined)?.n ?? 0;
    return n;
  }

  /** Does the batch have a row not at its end (sent or not)? From the counters. */
  hasLive(batchId: string): boolean {
    return this.#count([batchId], LIVE_STATES) > 0;
  }

  /** Does the batch have rows not sent yet? */
  hasPending(batchId: string): boolean {
    return this.#count([batchId], ['pending']) > 0;
  }

  /** USD still to be spent on rows that have not been sent (pending) in a batch. */
  unsentTotal(batchId: string): number {
    const r = this.stmt(`SELECT usd_micros FROM batch_counts WHERE batch_id = ? AND state = ${rowState('pending')}`).get(batchId) as { usd_micros: number } | undefined;
    return roundCents((r?.usd_micros ?? 0) / 1_000_000);
  }

  /**
   * USD still to be spent on a batch's unsent rows, per account (several accounts: each account's
   * balance covers its own rows). One read of the batch's pending rows.
   */
  unsentByAccount(batchId: string): Map<string, number> {
    const rows = this.stmt(`SELECT account, coalesce(sum(expected_usd), 0) AS usd FROM rows WHERE batch_id = ? AND state = ${rowState('pending')} GROUP BY account`).all(batchId) as { account: string; usd: number }[];
    return new Map(rows.map((r) => [r.account, roundCents(r.usd)]));
  }

  /** A batch's unsent rows in file order, each with its account and what it is expected to cost. */
  unsentCosts(batchId: string): { idx: number; line: number; account: string; usd: number }[] {
    return this.stmt(`SELECT idx, line, account, coalesce(expected_usd, 0) AS usd FROM rows WHERE batch_id = ? AND state = ${rowState('pending')} ORDER BY idx`).all(batchId) as {
      idx: number; line: number; account: string; usd: number;
    }[];
  }

  /**
   * USD already promised: the unsent rows of every unfinished batch of the home that holds money,
   * whoever runs it (`topup balance`, `validate`, the balance report, the console and /metrics show
   * this one figure). As the funds gate sets money aside (account/funds.ts holdsMoney): a batch
   * whose cancel was asked for promises nothing (its unsent rows are skipped), and a batch waiting
   * for balance holds none (a later file the balance covers goes ahead of it): its rows are
   * waitingForBalanceUsd, shown beside. Counted in, they understated what a new file may use by
   * exactly what waited (issue 30).
   */
  reservedUsd(): number {
    return this.#unsentOfOrdering(`(b.wait_reason IS NULL OR b.wait_reason <> 'balance')`);
  }

  /** USD of the unsent rows of the batches waiting for balance (not reserved: reservedUsd). */
  waitingForBalanceUsd(): number {
    return this.#unsentOfOrdering(`b.wait_reason = 'balance'`);
  }

  #unsentOfOrdering(where: string): number {
    const r = this.stmt(
      `SELECT coalesce(sum(c.usd_micros), 0) AS micros FROM batches b JOIN batch_counts c ON c.batch_id = b.id AND c.state = ${rowState('pending')}
       WHERE b.state IN (${batchStates(ORDERING_BATCH_STATES)}) AND b.cancel_requested = 0 AND ${where}`,
    ).get() as { micros: number };
    return roundCents(r.micros / 1_000_000);
  }

  /**
   * Rows that may be (re)sent now, oldest batch first. `resending` rows come first: they are owed
   * an answer. Batches in `scope.newOrders` send pending rows too; batches in
   * `scope.resendsOnly` (waiting for balance, say) only resend rows already in doubt.
   *
   * Within a batch and state, rows go in the order they became due (next_try_at, then file order):
   * a fresh batch in file order; a row held back (a 429, a balance wait) when its wait ends, after
   * the rows that were due before it. Each (batch, state) is one seek on rows_send that stops at
   * `limit`, so the cost does not depend on how many rows wait.
   */
  sendable(scope: SendScope, now: number, limit: number, busy: Busy = NOT_BUSY, account?: string): Row[] {
    const { newOrders, resendsOnly } = scope;
    if (newOrders.length + resendsOnly.length === 0 || limit <= 0) return [];
    const ids = this.#bySeq([...newOrders, ...resendsOnly]);
    const out: Row[] = [];
    const take = (batchId: string, state: RowState): void => {
      if (out.length >= limit) return;
      // Positions from the index alone (covering), read lazily past the rows already on their way;
      // the whole row is read only for those returned. (No bound LIMIT: see IN_SEND_INDEX.)
      // With several accounts, one account's rows (rows_send_account): a paused account's rows are
      // never read through on every step.
      const idxs = (
        account === undefined
          ? this.stmt(`SELECT idx FROM rows WHERE batch_id = ? AND state = ${rowState(state)} AND ${IN_SEND_INDEX} AND next_try_at <= ? ORDER BY next_try_at, idx`)
              .pluck()
              .iterate(batchId, now)
          : this.stmt(`SELECT idx FROM rows WHERE batch_id = ? AND account = ? AND state = ${rowState(state)} AND ${IN_SEND_INDEX} AND next_try_at <= ? ORDER BY next_try_at, idx`)
              .pluck()
              .iterate(batchId, account, now)
      ) as IterableIterator<number>;
      for (const idx of idxs) {
        if (out.length >= limit) break; // ends the iteration (and resets the statement)
        if (busy.has(batchId, idx)) continue;
        const row = this.get(batchId, idx);
        if (row) out.push(row);
      }
    };
    for (const id of ids) take(id, 'resending');
    for (const id of ids) if (newOrders.includes(id)) take(id, 'pending');
    return out;
  }

  /**
   * These batch ids, oldest batch first; the order API's batches before any file's: a shop's
   * customer waits at a checkout for an order a file's thousands of rows would otherwise queue
   * ahead of (issue 23's fast path).
   */
  #bySeq(batchIds: readonly string[]): string[] {
    if (batchIds.length <= 1) return [...batchIds];
    return (this.stmt(`SELECT id FROM batches WHERE id IN (${placeholders(batchIds)}) ORDER BY api_day IS NULL, seq`).all(...batchIds) as { id: string }[]).map((r) => r.id);
  }

  /**
   * The earliest time any row `sendable` could return becomes due; with `after`, only rows due
   * later than it (the dispatch stage has started every row due by then that it could).
   */
  nextTryAt(scope: SendScope, after?: number, account?: string): number | undefined {
    const a = this.#earliest('next_try_at', scope.newOrders, SENDABLE_STATES, after, account);
    const b = this.#earliest('next_try_at', scope.resendsOnly, ['resending'], after, account);
    const due = [a, b].filter((x): x is number => x !== undefined);
    return due.length > 0 ? Math.min(...due) : undefined;
  }

  /** The smallest `column` over the rows of these batches in these states: one seek per (batch, state). */
  #earliest(column: 'next_try_at' | 'next_poll_at', batchIds: readonly string[], states: readonly RowState[], after?: number, account?: string): number | undefined {
    const inIndex = column === 'next_try_at' ? IN_SEND_INDEX : IN_POLL_INDEX;
    let min: number | undefined;
    for (const id of batchIds) {
      for (const st of states) {
        const r = (
          account !== undefined
            ? this.stmt(`SELECT ${column} AS v FROM rows WHERE batch_id = ? AND account = ? AND state = ${rowState(st)} AND ${inIndex} AND ${column} > ? ORDER BY ${column} LIMIT 1`).get(id, account, after ?? Number.MIN_SAFE_INTEGER)
            : after === undefined
            ? this.stmt(`SELECT ${column} AS v FROM rows WHERE batch_id = ? AND state = ${rowState(st)} AND ${inIndex} ORDER BY ${column} LIMIT 1`).get(id)
            : this.stmt(`SELECT ${column} AS v FROM rows WHERE batch_id = ? AND state = ${rowState(st)} AND ${inIndex} AND ${column} > ? ORDER BY ${column} LIMIT 1`).get(id, after)
        ) as { v: number } | undefined;
        if (r && (min === undefined || r.v < min)) min = r.v;
      }
    }
    return min;
  }

  /** Followed rows (placed orders, history checks) whose next look is due, earliest first. */
  duePolls(batchIds: readonly string[], now: number, limit: number): Row[] {
    if (!Number.isSafeInteger(limit) || limit <= 0) return [];
    const rows: RowRecord[] = [];
    for (const id of batchIds) {
      for (const st of FOLLOWED_STATES) {
        rows.push(...(this.stmt(`SELECT * FROM rows WHERE batch_id = ? AND state = ${rowState(st)} AND ${IN_POLL_INDEX} AND next_poll_at <= ? ORDER BY next_poll_at LIMIT ${limit}`)
          .all(id, now) as RowRecord[]));
      }
    }
    return rows.sort((a, b) => a.next_poll_at - b.next_poll_at).slice(0, limit).map(toRow);
  }

  nextPollAt(batchIds: readonly string[]): number | undefined {
    return this.#earliest('next_poll_at', batchIds, FOLLOWED_STATES);
  }

  /** Indexes of the batch's `sending` rows (rows_in_flight holds them; read only when the counters say some may be stranded). */
  sendingIdx(batchId: string): number[] {
    return this.stmt(`SELECT idx FROM rows WHERE batch_id = ? AND state = ${rowState('sending')}`).pluck().all(batchId) as number[];
  }

  /**
   * Does the batch have a row on a named account, or one that moved, or a row skipped as a repeat
   * of such a purchase (rows.repeat_of, followed through re-drops of re-drops as the result follows
   * them)? Results then show the account columns: a re-drop of a file bought at a named account
   * names that account (a new-user trial: every row of the re-drop skipped, no account column).
   */
  hasNamedAccounts(batchId: string): boolean {
    if (this.stmt(`SELECT 1 FROM rows WHERE batch_id = ? AND (account <> 'default' OR moves_json IS NOT NULL) LIMIT 1`).get(batchId) !== undefined) return true;
    return this.stmt(`WITH RECURSIVE chain(b, i, hop) AS (
        SELECT json_extract(repeat_of, '$.batchId'), json_extract(repeat_of, '$.idx'), 0 FROM rows WHERE batch_id = ? AND repeat_of IS NOT NULL
        UNION
        SELECT json_extract(r.repeat_of, '$.batchId'), json_extract(r.repeat_of, '$.idx'), chain.hop + 1
          FROM chain JOIN rows r ON r.batch_id = chain.b AND r.idx = chain.i WHERE r.repeat_of IS NOT NULL AND chain.hop < 16)
      SELECT 1 FROM chain JOIN rows e ON e.batch_id = chain.b AND e.idx = chain.i
        WHERE e.request_json IS NOT NULL AND (e.account <> 'default' OR e.moves_json IS NOT NULL) LIMIT 1`).get(batchId) !== undefined;
  }

  /** Was a player check made for a row of the batch (its result then shows the playerName column)? */
  hasPlayerChecks(batchId: string): boolean {
    return this.stmt(`SELECT 1 FROM rows WHERE batch_id = ? AND (player_name IS NOT NULL OR reject_code = 'TOPUP_PLAYER_NOT_FOUND') LIMIT 1`).get(batchId) !== undefined;
  }

  /** Rows waiting to be sent or resent on each account, every batch (routing's queue estimate). */
  unsentByAccountAll(): Map<string, number> {
    const rows = this.stmt(`SELECT account, count(*) AS n FROM rows WHERE ${IN_SEND_INDEX} GROUP BY account`).all() as { account: string; n: number }[];
    return new Map(rows.map((r) => [r.account, r.n]));
  }

  /** Rows waiting to be sent or resent (not those with a request on its way). */
  countUnsent(batchIds: readonly string[]): number {
    return this.#count(batchIds, SENDABLE_STATES);
  }

  /** Placed orders being followed. */
  /**
   * Live rows of these batches on an account not among `accounts`: one renamed or removed from
   * accounts.toml (a rename with the same endpoint and key takes its rows along at the start, so
   * these are the rows of an account that is gone). Per batch and account, with how many.
   */
  onOtherAccounts(batchIds: readonly string[], accounts: readonly string[]): { batchId: string; account: string; n: number }[] {
    if (batchIds.length === 0 || accounts.length === 0) return [];
    return (this.stmt(
      `SELECT batch_id AS batchId, account, count(*) AS n FROM rows WHERE batch_id IN (${placeholders(batchIds)}) AND state IN (${rowStates(LIVE_STATES)})
         AND account NOT IN (${placeholders(accounts)}) GROUP BY batch_id, account ORDER BY batch_id, account`,
    ).all(...batchIds, ...accounts) as { batchId: string; account: string; n: number }[]);
  }

  countProcessing(batchIds: readonly string[], account?: string): number {
    if (account === undefined) return this.#count(batchIds, PLACED_STATES);
    let n = 0;
    for (const id of batchIds) {
      n += (this.stmt(`SELECT count(*) AS n FROM rows WHERE batch_id = ? AND account = ? AND state IN (${rowStates(PLACED_STATES)})`).get(id, account) as { n: number }).n;
    }
    return n;
  }

  /**
   * How many of a batch's rows there are, were sent, and what they spent (cost.ts: the rule SPENT).
   * `sent` leaves out rows whose every send was turned away with nothing created (maintenance, a
   * rate limit, a pause, no balance: back to `pending`, and from there only `skipped` or `invalid`,
   * row-states.ts), though their first_sent_at stays: a cancelled batch said "2 rows skipped (never
   * sent)" while status said `sent 2` (trial s34).
   */
  progress(batchId: string): { rows: number; sent: number; spentUsd: number } {
    return this.stmt(
      `SELECT count(*) AS rows,
         coalesce(sum(first_sent_at IS NOT NULL AND state NOT IN (${rowStates(['pending', 'skipped', 'invalid'])})), 0) AS sent,
         coalesce(sum(${SPENT_USD_SQL}), 0) AS spentUsd
       FROM rows WHERE batch_id = ?`,
    ).get(batchId) as { rows: number; sent: number; spentUsd: number };
  }

  /** The row at a batch's input line. */
  byLine(batchId: string, line: number): Row | undefined {
    const r = this.stmt('SELECT * FROM rows WHERE batch_id = ? AND line = ?').get(batchId, line) as RowRecord | undefined;
    return r ? toRow(r) : undefined;
  }

  /**
   * Another row of ours for the same purchase (game, pack, player) that is in flight or in doubt:
   * `sending` (its first send may be on the wire right now), `resending`, `verifying` or
   * `searching` (rows_in_flight: IN_DOUBT_INDEX); or in review without an order and not settled,
   * whose own order may be the one in history (found by the simulator: a row took the order of a
   * `submit --again` copy's row that had gone to review, one charge held for two purchases).
   * Its order could be the one a history check is about to claim.
   */
  hasTwinInFlight(row: Row): boolean {
    return (
      this.stmt(
        `SELECT 1 FROM rows WHERE (${IN_DOUBT_INDEX} OR (${IN_REVIEW_INDEX} AND order_id IS NULL AND resolution IS NULL))
           AND slug IS ? AND pack_name IS ?
           AND json_extract(request_json, '$.userId') IS ? AND NOT (batch_id = ? AND idx = ?)`,
      ).get(row.slug, row.packName, row.request?.userId ?? null, row.batchId, row.idx) !== undefined
    );
  }
}
