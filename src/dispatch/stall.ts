/**
 * THE stall bound (issue 29): how long a row may stay in doubt, whatever the answers it meets.
 *
 * A row in doubt (an order may exist) is resent with its trxid, and its history is checked, until
 * an answer settles it. Some answers never do, and some never change: a supplier's in-flight lock
 * that never clears (429 DUPLICATE_IN_FLIGHT for ever), maintenance or an account problem that
 * never ends (no send at all, or every one turned away), 5xx for ever, a history that never lists
 * the order or cannot be read. The ordinary give-up (sender.ts stopResending) counts only
 * unanswered sends, so such a row was resent for ever, its batch never finished, and nobody was
 * told. The bound, stated once (docs/state-machine.md, docs/results.md):
 *
 *   - a row in doubt for 2 × TOPUP_REVIEW_AFTER_MS (from its first unanswered send) is resent no
 *     more, whatever it was answered: order history decides (`searching`, event give-up);
 *   - a row whose doubt history has not settled by 3 × TOPUP_REVIEW_AFTER_MS + 5 request timeouts
 *     (TOPUP_REQUEST_TIMEOUT_MS) goes to `review` (event undecidable).
 *
 * Review keeps it in doubt: never read as "not charged", its order is looked for again by the review
 * recheck (poll/review-recheck.ts), and its batch finishes with it listed for review. Every move is
 * logged with why, and the row's error says it (topup status BATCH, the console, the result file).
 */
import type { Runtime } from '../runtime.js';
import type { Row } from '../store/rows.js';
import { CHECKED_STATES } from '../store/row-states.js';

export interface StallBound {
  /** After this long in doubt a row is resent no more: history decides. */
  resendForMs: number;
  /** After this long in doubt a row not settled by history goes to review. */
  reviewByMs: number;
}

/** THE bound, from the settings (see the comment above). */
export function stallBound(config: Pick<Runtime['config'], 'reviewAfterMs' | 'requestTimeoutMs'>): StallBound {
  return { resendForMs: 2 * config.reviewAfterMs, reviewByMs: 3 * config.reviewAfterMs + 5 * config.requestTimeoutMs };
}

/** How many request timeouts a history check waits after the last send (the supplier may finish a request after we gave up on it). */
export const HISTORY_CHECK_DELAY_TIMEOUTS = 4;

const DOUBT_STATES = ['resending', ...CHECKED_STATES] as const;

/** When a row's doubt began: its doubt clock, else its first send. */
function doubtBegan(row: Row): number | null {
  return row.doubtSince ?? row.firstSentAt;
}

/** What the row was last answered, for the operator (the stored answer's status and code, never its body). */
function lastAnswerOf(row: Row): string {
  if (!row.lastAnswer) return 'no answer';
  try {
    const a = JSON.parse(row.lastAnswer) as { status?: number; route?: string; body?: unknown };
    const body = a.body !== null && typeof a.body === 'object' ? (a.body as Record<string, unknown>) : {};
    const code = typeof body.code === 'string' ? body.code : typeof body.error === 'string' ? body.error : undefined;
    return `HTTP ${a.status ?? '?'}${code ? ` ${code.slice(0, 60)}` : ''}`;
  } catch {
    return 'an unreadable answer';
  }
}

/**
 * Applies the bound to the rows in doubt of these batches (held by this process; moves are
 * lease-guarded). `busy`: rows whose send runs now (left alone: their answer comes first). Returns
 * the wall time of the next deadline among the rows left, if any.
 */
export function sweepStalled(
  rt: Pick<Runtime, 'clock' | 'config' | 'log' | 'owner' | 'rows'>,
  batchIds: readonly string[],
  busy: { has(batchId: string, idx: number): boolean },
  now: number,
): number | undefined {
  const bound = stallBound(rt.config);
  let next: number | undefined;
  const later = (t: number): void => {
    if (next === undefined || t < next) next = t;
  };
  for (const batchId of batchIds) {
    for (const row of rt.rows.inStates(batchId, DOUBT_STATES)) {
      // A first send stored before the wall clock stepped back would put the start ahead of now and
      // hold the bound back by the step: a doubt never begins later than now.
      const first = doubtBegan(row);
      const began = first === null ? null : Math.min(first, now);
      if (began === null || busy.has(batchId, row.idx)) continue;
      const since = new Date(began).toISOString();
      const where = { batch: batchId, line: row.line, trxid: row.trxid, state: row.state, since };
      if (row.state === 'resending') {
        if (now < began + bound.resendForMs) {
          later(began + bound.resendForMs);
          continue;
        }
        const last = lastAnswerOf(row);
        const why =
          `in doubt since ${since}: ${row.attempts} sends, none settled it (last: ${last}); resending stops after ` +
          `${Math.round(bound.resendForMs / 1000)} s in doubt (2 × TOPUP_REVIEW_AFTER_MS), order history decides, and the row goes to review if it cannot`;
        if (rt.rows.giveUp(batchId, row.idx, { owner: rt.owner, now }, why, now + HISTORY_CHECK_DELAY_TIMEOUTS * rt.config.requestTimeoutMs)) {
          // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
          rt.log.error({ ...where, last, sends: row.attempts }, 'a row in doubt met no settling answer within the stall bound: no more resends, checking order history, then review');
          later(began + bound.reviewByMs);
        }
        continue;
      }
      // verifying / searching: history decides, unless it cannot be asked (an account pause) or never settles it.
      if (now < began + bound.reviewByMs) {
        later(began + bound.reviewByMs);
        continue;
      }
      const error =
        `REVIEW: in doubt since ${since} and not settled within the stall bound (${Math.round(bound.reviewByMs / 1000)} s: 3 × TOPUP_REVIEW_AFTER_MS + 5 request timeouts): ` +
        `${row.error ?? 'no answer settled it'}. It may have been charged: check the supplier's order history for trxid ${row.trxid} before ordering it again (topup review)`;
      if (rt.rows.toReview('undecidable', batchId, row.idx, { owner: rt.owner, now }, error)) {
        // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
        rt.log.error(where, 'a row in doubt was not settled within the stall bound: marked for review');
      }
    }
  }
  return next;
}
