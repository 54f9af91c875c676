/**
 * Writes to rows that move no row from one state to another: storing a batch's rows, deleting the
 * rows of a batch that is loaded again, and the due times and audit copies the stages keep.
 * Every state change is in rows.ts, built from the table in row-states.ts.
 */
import { unsynced } from './db.js';
import { RepeatReads } from './repeat-reads.js';
import type { NewRow } from './row-record.js';
import { CHECKED_STATES, type RowState } from './row-states.js';
import { IN_REVIEW_INDEX, rowState, rowStates } from './state-sql.js';

export class RowWrites extends RepeatReads {
  /** Stores rows of a claimed batch (claim/load.ts calls it per chunk, inside its transaction): new rows start `pending`, `invalid` or `skipped`. */
  insertAll(batchId: string, rows: Iterable<NewRow>, now: number): number {
    const stmt = this.stmt(
      `INSERT INTO rows (batch_id, idx, line, cells_json, state, account, pinned, trxid, request_json, product_id, slug, pack_name, quantity,
         unit_price_usd, expected_usd, max_price_usd, error, reject_code, fingerprint, fingerprint_alts, repeat_check, player_name, sale_usd, repeat_of, updated_at)
       VALUES (@batchId, @idx, @line, @cells, @state, @account, @pinned, @trxid, @request, @productId, @slug, @packName, @quantity,
         @unitPriceUsd, @expectedUsd, @maxPriceUsd, @error, @rejectCode, @fingerprint, @fingerprintAlts, @repeatCheck, @playerName, @saleUsd, @repeatOf, @now)`,
    );
    let n = 0;
    for (const r of rows) {
      const params = {
        batchId,
        idx: r.idx,
        line: r.line,
        cells: JSON.stringify(r.cells),
        state: (r.skipped ? 'skipped' : r.request ? 'pending' : 'invalid') satisfies RowState,
        account: r.account ?? 'default',
        pinned: r.pinned ? 1 : 0,
        trxid: r.request?.trxid ?? null,
        request: r.request ? JSON.stringify(r.request) : null,
        productId: r.productId ?? null,
        slug: r.slug ?? null,
        packName: r.packName ?? null,
        quantity: r.quantity ?? null,
        unitPriceUsd: r.unitPriceUsd ?? null,
        expectedUsd: r.expectedUsd ?? null,
        maxPriceUsd: r.maxPriceUsd ?? null,
        error: r.error,
        rejectCode: r.rejectCode ?? null,
        fingerprint: r.fingerprint ?? null,
        fingerprintAlts: r.fingerprintAlts && r.fingerprintAlts.length > 0 ? JSON.stringify(r.fingerprintAlts) : null,
        repeatCheck: r.repeatCheck && r.request && !r.skipped ? 1 : 0,
        playerName: r.playerName ?? null,
        saleUsd: r.saleUsd ?? null,
        repeatOf: r.repeatOf ? JSON.stringify({ batchId: r.repeatOf.batchId, idx: r.repeatOf.idx }) : null,
        now,
      };
      try {
        stmt.run(params);
      } catch (err) {
        // The trxid was free when the row was validated, and another batch stored it since (two
        // files with the same shop numbers loaded at once): the unique index decided, and this
        // row is refused the way validation refuses a used trxid, never lost, never bought.
        // (SQLITE_CONSTRAINT_TRIGGER: a trxid a row left on another account, migrations.ts left_trxids.)
        const code = (err as { code?: string }).code;
        if ((code !== 'SQLITE_CONSTRAINT_UNIQUE' && code !== 'SQLITE_CONSTRAINT_TRIGGER') || !String((err as Error).message).includes('rows.trxid') || params.trxid === null) throw err;
        const by = this.byTrxid(params.trxid);
        if (!by) throw err;
        stmt.run({ ...params, state: 'invalid' satisfies RowState, trxid: null, request: null, repeatCheck: 0, error: `trxid: ${params.trxid} was already used by batch ${by.batchId}; a new purchase needs a new trxid` });
      }
      n++;
    }
    return n;
  }

  /**
   * Stores one API order (orders/desk.ts), as the next row of its day's batch, `pending`: funded and
   * sendable once its transaction commits. Unlike insertAll, a trxid already used is NOT turned into
   * an invalid row: it throws (the unique index or the trigger), and the desk answers with the order
   * that holds it (the same body) or a conflict. The store's triggers (migration 12) refuse a row of
   * a batch that is not the open API batch, and record the order's first event.
   */
  insertApiOrder(batchId: string, r: NewRow & { request: NonNullable<NewRow['request']>; apiBodyHash: string; callbackUrl: string | null }, now: number): number {
    const row = this.stmt(
      `INSERT INTO rows (batch_id, idx, line, cells_json, state, account, pinned, trxid, request_json, product_id, slug, pack_name, quantity,
         unit_price_usd, expected_usd, max_price_usd, error, updated_at, created_at, api_body_hash, callback_url, sale_usd, player_name)
       SELECT @batchId, n, n + 2, @cells, 'pending', @account, @pinned, @trxid, @request, @productId, @slug, @packName, @quantity,
         @unitPriceUsd, @expectedUsd, @maxPriceUsd, NULL, @now, @now, @apiBodyHash, @callbackUrl, @saleUsd, @playerName
       FROM (SELECT coalesce(max(idx), -1) + 1 AS n FROM rows WHERE batch_id = @batchId)
       RETURNING idx`,
    ).get({
      batchId,
      cells: JSON.stringify(r.cells),
      account: r.account ?? 'default',
      pinned: r.pinned ? 1 : 0,
      trxid: r.request.trxid,
      request: JSON.stringify(r.request),
      productId: r.productId ?? null,
      slug: r.slug ?? null,
      packName: r.packName ?? null,
      quantity: r.quantity ?? null,
      unitPriceUsd: r.unitPriceUsd ?? null,
      expectedUsd: r.expectedUsd ?? null,
      maxPriceUsd: r.maxPriceUsd ?? null,
      now,
      apiBodyHash: r.apiBodyHash,
      callbackUrl: r.callbackUrl,
      saleUsd: r.saleUsd ?? null,
      playerName: r.playerName ?? null,
    }) as { idx: number };
    return row.idx;
  }

  /** A claimed batch loaded again (after a killed load) or refused: its rows go first. */
  deleteBatchRows(batchId: string): void {
    this.stmt('DELETE FROM rows WHERE batch_id = ?').run(batchId);
  }

  /** Keeps the audit copy of the latest answer about a row. */
  noteAnswer(batchId: string, idx: number, answer: string | null): void {
    if (answer !== null) this.stmt('UPDATE rows SET last_answer = ? WHERE batch_id = ? AND idx = ?').run(answer, batchId, idx);
  }

  /** A history check that could not run: looked at again at `at`; returns since when checks have failed. */
  checkLater(batchId: string, idx: number, now: number, at: number, answer: string | null): number {
    const r = this.stmt(
      `UPDATE rows SET next_poll_at = ?, doubt_since = coalesce(doubt_since, ?), last_answer = coalesce(?, last_answer)
       WHERE batch_id = ? AND idx = ? AND state IN (${rowStates(CHECKED_STATES)}) RETURNING doubt_since AS since`,
    ).get(at, now, answer, batchId, idx) as { since: number } | undefined;
    return r?.since ?? now;
  }

  /** The next look at a followed row, after a round that could not look (no state change). */
  schedulePoll(batchId: string, idx: number, at: number): void {
    this.stmt(`UPDATE rows SET next_poll_at = ? WHERE batch_id = ? AND idx = ?`).run(at, batchId, idx);
  }

  /** The next recheck of a review row. */
  /**
   * The next looks at review rows, all in one transaction with synchronous=NORMAL (db.ts
   * unsynced()): one commit per recheck round instead of one fsync per row. A round over a backlog
   * of review rows otherwise spent about 0.6 ms of the event loop per row on its own fsync (a
   * profile of the console bench: 3.7 s of 19 s). Losing these to a power cut only makes the rows
   * due again, and a recheck only reads.
   */
  scheduleReviewChecks(next: readonly { batchId: string; idx: number; at: number; answer: string | null }[]): void {
    if (next.length === 0) return;
    const stmt = this.stmt(`UPDATE rows SET next_poll_at = ?, last_answer = coalesce(?, last_answer) WHERE batch_id = ? AND idx = ? AND ${IN_REVIEW_INDEX}`);
    unsynced(this.db, () => this.db.transaction(() => {
      for (const r of next) stmt.run(r.at, r.answer, r.batchId, r.idx);
    })());
  }

  /**
   * After the wall clock stepped back by `stepBackMs`: every due time ahead of now was written on the
   * old clock, so it lies `stepBackMs` further ahead than the wait it holds; it moves back by the
   * step (never before now). What still lies beyond `horizon` (no wait is that long) becomes `now`.
   * One transaction. Returns how many rows were touched.
   */
  clampFutureTimes(now: number, horizon: number, stepBackMs = 0): number {
    return this.db.transaction(() => {
      let n = 0;
      for (const col of ['next_try_at', 'next_poll_at'] as const) {
        const shifted = stepBackMs > 0 ? this.stmt(`UPDATE rows SET ${col} = max(?, ${col} - ?) WHERE ${col} > ?`).run(now, stepBackMs, now).changes : 0;
        const clamped = this.stmt(`UPDATE rows SET ${col} = ? WHERE ${col} > ?`).run(now, horizon).changes;
        n += Math.max(shifted, clamped);
      }
      return n;
    })();
  }

  /**
   * After the wall clock stepped back by `stepBackMs` (store/wall-mark.ts): every doubt clock
   * (`doubt_since`, from which the give-up, the stall bound and an unreadable order's review count)
   * was written on the old clock; it moves back by the step, so the time already in doubt still
   * counts, and none stays ahead of now. Returns how many rows moved.
   */
  shiftDoubtClocks(now: number, stepBackMs: number): number {
    return this.stmt('UPDATE rows SET doubt_since = min(?, doubt_since - ?) WHERE doubt_since IS NOT NULL').run(now, stepBackMs).changes;
  }

  deferPending(batchId: string, until: number): void {
    this.stmt(`UPDATE rows SET next_try_at = max(next_try_at, ?) WHERE batch_id = ? AND state = ${rowState('pending')}`).run(until, batchId);
  }
}
