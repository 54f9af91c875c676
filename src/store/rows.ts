/**
 * Rows and their state machine (see migrations.ts). Each transition is one guarded UPDATE:
 * it names the states it may leave, and reports whether it happened, so two actors can never
 * both move a row. The reads are in row-reads.ts.
 */
import { RowReads } from './row-reads.js';
import type { NewRow, OrderFacts, Resolution, RowState } from './row-record.js';

export type { NewRow, OrderFacts, Resolution, Row, RowState, StateCounts } from './row-record.js';
export { emptyCounts, FINAL_ROW_STATES, NO_ANSWER_CODE, ROW_STATES, TRXID_USED_CODE } from './row-record.js';

/** A row just sent to review is first looked at again after this (poll/review-recheck.ts takes over). */
const FIRST_RECHECK_MS = 15 * 60_000;

export class RowStore extends RowReads {

  /** Stores every row of a batch in one transaction: a batch is stored whole or not at all. */
  insertAll(batchId: string, rows: Iterable<NewRow>, now: number): number {
    const stmt = this.stmt(
      `INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, request_json, product_id, slug, pack_name, quantity,
         unit_price_usd, expected_usd, max_price_usd, error, updated_at)
       VALUES (@batchId, @idx, @line, @cells, @state, @trxid, @request, @productId, @slug, @packName, @quantity,
         @unitPriceUsd, @expectedUsd, @maxPriceUsd, @error, @now)`,
    );
    let n = 0;
    for (const r of rows) {
      stmt.run({
        batchId,
        idx: r.idx,
        line: r.line,
        cells: JSON.stringify(r.cells),
        state: r.request ? 'pending' : 'invalid',
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
        now,
      });
      n++;
    }
    return n;
  }

  deleteBatchRows(batchId: string): void {
    this.stmt('DELETE FROM rows WHERE batch_id = ?').run(batchId);
  }

  /**
   * THE INTENT. Moves a row to `sending` (or keeps it there for a resend), committed with
   * synchronous=FULL before the request leaves. Guarded by the batch lease, so a process that
   * lost its lease can never send. A resend of a row already `sending` marks it uncertain:
   * an earlier attempt may have created the order. Cancelled batches send no new rows, but
   * rows already `sending` are still resent, because only a resend tells whether they were charged.
   */
  markSending(batchId: string, idx: number, owner: string, now: number, busyUntil: number): boolean {
    return (
      this.stmt(
          `UPDATE rows SET
             uncertain = CASE WHEN state = 'sending' THEN 1 ELSE uncertain END,
             doubt_since = CASE WHEN state = 'sending' THEN coalesce(doubt_since, last_sent_at, @now) ELSE doubt_since END,
             state = 'sending', attempts = attempts + 1, first_sent_at = coalesce(first_sent_at, @now), last_sent_at = @now,
             next_try_at = @busyUntil, updated_at = @now
           WHERE batch_id = @batchId AND idx = @idx AND state IN ('pending', 'sending')
             AND EXISTS (SELECT 1 FROM batches b WHERE b.id = @batchId AND b.owner = @owner AND b.lease_until > @now
                         AND (b.cancel_requested = 0 OR rows.state = 'sending'))`,
        )
        .run({ batchId, idx, owner, now, busyUntil }).changes === 1
    );
  }

  /**
   * The API answered with an order: processing, or already final. `answer` is the audit copy of
   * that answer; `note` a remark that is not an error (a replayed trxid, codes still missing).
   */
  recordOrder(batchId: string, idx: number, o: OrderFacts, now: number, nextPollAt: number, extra: { answer?: string | null; note?: string | null } = {}): boolean {
    const state: RowState = o.status;
    return (
      this.stmt(
          `UPDATE rows SET state = @state, order_id = @orderId, amount_usd = coalesce(@amountUsd, amount_usd),
             codes_json = coalesce(@codes, codes_json), refunded = coalesce(@refunded, refunded),
             error = CASE WHEN @state = 'cancelled' THEN coalesce(@error, error) ELSE NULL END,
             last_answer = coalesce(@answer, last_answer), note = coalesce(@note, note),
             doubt_since = NULL, doubt_tries = 0, next_poll_at = @nextPollAt, updated_at = @now
           WHERE batch_id = @batchId AND idx = @idx AND state IN ('sending', 'pending', 'processing', 'verifying')`,
        )
        .run({
          batchId,
          idx,
          state,
          orderId: o.orderId,
          amountUsd: o.amountUsd ?? null,
          codes: o.codes && o.codes.length > 0 ? JSON.stringify(o.codes) : null,
          refunded: o.refunded === undefined ? null : o.refunded ? 1 : 0,
          error: o.error ?? null,
          answer: extra.answer ?? null,
          note: extra.note ?? null,
          nextPollAt,
          now,
        }).changes === 1
    );
  }

  /** Keeps the audit copy of the latest answer about a row (no state change). */
  noteAnswer(batchId: string, idx: number, answer: string | null): void {
    if (answer !== null) this.stmt('UPDATE rows SET last_answer = ? WHERE batch_id = ? AND idx = ?').run(answer, batchId, idx);
  }

  /**
   * A key/card order reported completed without codes: read it again at `at` (it stays
   * `processing`). Returns how many times it has now been re-read for its codes.
   */
  awaitCodes(batchId: string, idx: number, at: number, answer: string | null): number {
    const r = this.stmt(
      `UPDATE rows SET code_reads = code_reads + 1, next_poll_at = ?, polls = polls + 1, last_answer = coalesce(?, last_answer)
       WHERE batch_id = ? AND idx = ? AND state = 'processing' RETURNING code_reads AS n`,
    ).get(at, answer, batchId, idx) as { n: number } | undefined;
    return r?.n ?? 0;
  }

  /**
   * A send that got no definite answer: keep the intent, try again at `nextTryAt`. `uncertain`:
   * the order may exist (the row stays `sending`). `unanswered`: this send counts towards
   * TOPUP_REVIEW_AFTER_MS (a timeout, reset or 5xx; not DUPLICATE_IN_FLIGHT, where the API is
   * still working on it). Returns the row's doubt afterwards.
   */
  retryLater(
    batchId: string,
    idx: number,
    opts: { nextTryAt: number; uncertain: boolean; unanswered?: boolean; note: string | null; answer?: string | null },
    now: number,
  ): { doubtSince: number | null; doubtTries: number; state: RowState } | undefined {
    return this.stmt(
        `UPDATE rows SET state = CASE WHEN uncertain = 1 OR @uncertain = 1 THEN 'sending' ELSE 'pending' END,
           doubt_since = CASE WHEN uncertain = 1 OR @uncertain = 1 THEN coalesce(doubt_since, last_sent_at, @now) ELSE doubt_since END,
           doubt_tries = doubt_tries + @unanswered, last_answer = coalesce(@answer, last_answer),
           uncertain = max(uncertain, @uncertain), next_try_at = @nextTryAt, error = @note, updated_at = @now
         WHERE batch_id = @batchId AND idx = @idx AND state = 'sending'
         RETURNING doubt_since AS doubtSince, doubt_tries AS doubtTries, state`,
      )
      .get({
        batchId, idx, nextTryAt: opts.nextTryAt, uncertain: opts.uncertain ? 1 : 0, unanswered: opts.unanswered ? 1 : 0,
        note: opts.note, answer: opts.answer ?? null, now,
      }) as
      | { doubtSince: number | null; doubtTries: number; state: RowState }
      | undefined;
  }

  /** A definite refusal of a row that was never in doubt: nothing was charged. */
  reject(batchId: string, idx: number, error: string, code: string | null, now: number, answer: string | null = null): boolean {
    return (
      this.stmt(
          `UPDATE rows SET state = 'rejected', error = @error, reject_code = @code, last_answer = coalesce(@answer, last_answer), updated_at = @now
           WHERE batch_id = @batchId AND idx = @idx AND state IN ('pending', 'sending', 'verifying')`,
        )
        .run({ batchId, idx, error, code, answer, now }).changes === 1
    );
  }

  /**
   * A 400 after an attempt whose answer was lost: not proof of "not charged". Look in history
   * first. Also a row in doubt for longer than TOPUP_REVIEW_AFTER_MS, with `code` NO_ANSWER_CODE.
   */
  toVerify(batchId: string, idx: number, error: string, code: string | null, verifyAt: number, now: number, answer: string | null = null): void {
    this.stmt(
        `UPDATE rows SET state = 'verifying', error = @error, reject_code = @code, next_poll_at = @verifyAt,
           last_answer = coalesce(@answer, last_answer), updated_at = @now
         WHERE batch_id = @batchId AND idx = @idx AND state = 'sending'`,
      )
      .run({ batchId, idx, error, code, verifyAt, answer, now });
  }

  /** Back to pending without the doubt (history proved nothing was placed), e.g. to wait for balance. */
  clearToPending(batchId: string, idx: number, nextTryAt: number, now: number): void {
    this.stmt(
        `UPDATE rows SET state = 'pending', uncertain = 0, doubt_since = NULL, doubt_tries = 0, next_try_at = @nextTryAt, updated_at = @now
         WHERE batch_id = @batchId AND idx = @idx AND state IN ('sending', 'verifying')`,
      )
      .run({ batchId, idx, nextTryAt, now });
  }

  /**
   * Undecidable: the row ends `review`, if it is still in the state the caller decided from.
   * It is rechecked against the API from `recheckAt` (see poll/review-recheck.ts).
   */
  markReview(
    batchId: string,
    idx: number,
    error: string,
    now: number,
    from: 'verifying' | 'sending' | 'processing' = 'verifying',
    extra: { answer?: string | null; recheckAt?: number } = {},
  ): boolean {
    return (
      this.stmt(
        `UPDATE rows SET state = 'review', error = @error, review_since = @now, next_poll_at = @recheckAt,
           last_answer = coalesce(@answer, last_answer), updated_at = @now
         WHERE batch_id = @batchId AND idx = @idx AND state = @from`,
      ).run({ batchId, idx, error, now, from, answer: extra.answer ?? null, recheckAt: extra.recheckAt ?? now + FIRST_RECHECK_MS }).changes === 1
    );
  }

  /**
   * A review row settled: its order was found (`found`, by the recheck) or an operator decided
   * (`charged` with an order, `not-charged`). Only from `review`, and only once.
   */
  settleReview(
    batchId: string,
    idx: number,
    to: { state: 'processing' | 'completed' | 'cancelled' | 'rejected'; order?: OrderFacts; error: string | null; note: string | null },
    resolution: { kind: Resolution; by: string; at: number },
    answer: string | null,
  ): boolean {
    const o = to.order;
    return (
      this.stmt(
        `UPDATE rows SET state = @state, order_id = coalesce(@orderId, order_id), amount_usd = coalesce(@amountUsd, amount_usd),
           codes_json = coalesce(@codes, codes_json), refunded = coalesce(@refunded, refunded), error = @error, note = coalesce(@note, note),
           resolution = @kind, resolved_by = @by, resolved_at = @at, last_answer = coalesce(@answer, last_answer),
           doubt_since = NULL, next_poll_at = @at, updated_at = @at
         WHERE batch_id = @batchId AND idx = @idx AND state = 'review' AND resolution IS NULL`,
      ).run({
        batchId,
        idx,
        state: to.state,
        orderId: o?.orderId ?? null,
        amountUsd: o?.amountUsd ?? null,
        codes: o?.codes && o.codes.length > 0 ? JSON.stringify(o.codes) : null,
        refunded: o?.refunded === undefined ? null : o.refunded ? 1 : 0,
        error: to.error,
        note: to.note,
        kind: resolution.kind,
        by: resolution.by,
        at: resolution.at,
        answer,
      }).changes === 1
    );
  }

  /** The next recheck of a review row. */
  scheduleReviewCheck(batchId: string, idx: number, at: number, answer: string | null): void {
    this.stmt(`UPDATE rows SET next_poll_at = ?, last_answer = coalesce(?, last_answer) WHERE batch_id = ? AND idx = ? AND state = 'review'`)
      .run(at, answer, batchId, idx);
  }

  /** A row that failed a check just before sending (e.g. the price rose above maxPriceUsd). */
  invalidateUnsent(batchId: string, idx: number, error: string, now: number): boolean {
    return (
      this.stmt(`UPDATE rows SET state = 'invalid', error = @error, updated_at = @now WHERE batch_id = @batchId AND idx = @idx AND state = 'pending'`)
        .run({ batchId, idx, error, now }).changes === 1
    );
  }

  skipPending(batchId: string, now: number): number {
    return this.stmt(
        `UPDATE rows SET state = 'skipped', error = 'batch cancelled by the operator before this row was sent', updated_at = ?
         WHERE batch_id = ? AND state = 'pending'`,
      )
      .run(now, batchId).changes;
  }

  /** A batch taken from a dead process: its `sending` rows are owed a resend now, not at its timeout. */
  resendNow(batchId: string): void {
    this.stmt(`UPDATE rows SET next_try_at = 0 WHERE batch_id = ? AND state = 'sending'`).run(batchId);
  }

  deferPending(batchId: string, until: number): void {
    this.stmt(`UPDATE rows SET next_try_at = max(next_try_at, ?) WHERE batch_id = ? AND state = 'pending'`).run(until, batchId);
  }

  /** The next look at a followed row; `seen`: the API just showed its order, so nothing about it is in doubt. */
  schedulePoll(batchId: string, idx: number, at: number, seen = false, answer: string | null = null): void {
    this.stmt(
      `UPDATE rows SET next_poll_at = ?, polls = polls + 1, doubt_since = CASE WHEN ? THEN NULL ELSE doubt_since END,
         last_answer = coalesce(?, last_answer) WHERE batch_id = ? AND idx = ?`,
    ).run(at, seen ? 1 : 0, answer, batchId, idx);
  }

  /** A poll that did not find the row's order: looked at again at `at`. Returns since when it has not been found. */
  notFoundOnPoll(batchId: string, idx: number, at: number, now: number, answer: string | null = null): number {
    const r = this.stmt(
      `UPDATE rows SET next_poll_at = ?, polls = polls + 1, doubt_since = coalesce(doubt_since, ?), last_answer = coalesce(?, last_answer)
       WHERE batch_id = ? AND idx = ? RETURNING doubt_since AS since`,
    ).get(at, now, answer, batchId, idx) as { since: number } | undefined;
    return r?.since ?? now;
  }

  /** Every row of a batch that duplicates an earlier file: nothing of it is sent. */
  skipAll(batchId: string): void {
    this.stmt(`UPDATE rows SET state = 'skipped' WHERE batch_id = ?`).run(batchId);
  }
}
