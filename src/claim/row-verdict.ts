/**
 * One row's verdict: may it be ordered, and under which trxid? The same function for the load
 * (claim/load.ts, which stores the row by it), `topup validate` and the console's upload check
 * (ops/quote.ts, which report it), so the dry run can never pass a row the load then refuses.
 *
 * In order: a record that could not be read; the checks against the live catalog
 * (intake/validate.ts: fields, pack, price, a trxid repeated in the file); then the trxid the row
 * would be sent with, the file's own or one derived from the batch's bytes (deriveTrxid), which
 * must not be held by a row of another batch (the API would answer with that row's order, or
 * refuse it as used). Whether a row repeats an earlier purchase is not decided here: the load
 * decides it in the transaction that opens the batch (claim/repeats.ts), the dry run asks the
 * same rule.
 */
import { createHash } from 'node:crypto';
import { formatProblems, type RowProblem, type RowValidator, type ValidOrder } from '../intake/validate.js';
import type { RawRow } from '../intake/formats/index.js';

/**
 * A trxid for a row whose file gave none: from the batch's stored content hash and the row's index,
 * so the same file dropped again, even after the database was lost, produces the same trxids, and
 * the API replays the earlier orders instead of charging again.
 */
export function deriveTrxid(seed: string, idx: number): string {
  return `tu${createHash('sha256').update(`${seed}:${idx}`).digest('hex').slice(0, 30)}`;
}

export type RowJudgement =
  | {
      ok: true;
      order: ValidOrder;
      /** The trxid it is sent with; null only when the seed is not known yet (a dry run of `--again`). */
      trxid: string | null;
    }
  | {
      ok: false;
      /** Each problem, for a report (the dry run's table). */
      problems: RowProblem[];
      /** One sentence, as the row's error in the store and the result file. */
      error: string;
      /**
       * Its trxid is held by a row that bought it (or may have): the same purchase, stored
       * `skipped` (not `invalid`: nothing is wrong with it) and never advised to be bought again.
       */
      boughtBefore?: true;
      /** With boughtBefore: the row that holds the trxid (the purchase this row is). */
      repeatOf?: { batchId: string; idx: number };
    };

export interface JudgeContext {
  validator: RowValidator;
  /**
   * What a trxid the file did not give is derived from: the batch's stored content hash (for the
   * inbox and `topup submit`, the file's sha256). Null when it cannot be known before the claim:
   * an `--again` batch's hash is salted with its own new id, so its trxids are new by construction.
   */
  trxidSeed: string | null;
  /** The batch already holding this trxid, if any (RowStore.byTrxid). */
  usedBy(trxid: string): { batchId: string; idx: number } | undefined;
  /**
   * What the row holding the trxid did, when it bought it or may have (claim/repeats.ts
   * boughtBefore): then this row is that purchase, reported as such. Undefined when that row bought
   * nothing (refused, invalid, skipped), or when the caller cannot tell (no store).
   */
  boughtBefore?(used: { batchId: string; idx: number }, trxid: string): string | undefined;
}

export function judgeRow(raw: RawRow, ctx: JudgeContext): RowJudgement {
  if (raw.parseError !== undefined) {
    return { ok: false, problems: [{ column: 'row', reason: raw.parseError }], error: `line ${raw.line}: ${raw.parseError}` };
  }
  const v = ctx.validator.validate(raw);
  if (!v.ok) return { ok: false, problems: v.problems, error: formatProblems(v.problems) };
  const o = v.order;
  const trxid = o.givenTrxid ?? (ctx.trxidSeed === null ? null : deriveTrxid(ctx.trxidSeed, raw.index));
  const usedBy = trxid === null ? undefined : ctx.usedBy(trxid);
  if (usedBy) {
    // Issue 29: the same file dropped again after a cancel part-way. Its bought rows derive the
    // trxids they were bought with: they are those purchases, not new ones refused, and the advice
    // "a new purchase needs a new trxid" would buy them a second time.
    const bought = ctx.boughtBefore?.(usedBy, trxid!);
    if (bought !== undefined) return { ok: false, problems: [{ column: 'trxid', reason: bought }], error: bought, boughtBefore: true, repeatOf: { batchId: usedBy.batchId, idx: usedBy.idx } };
    const reason = `${o.givenTrxid ? 'trxid' : 'generated trxid'} ${trxid} was already used by batch ${usedBy.batchId}; a new purchase needs a new trxid`;
    return { ok: false, problems: [{ column: 'trxid', reason }], error: `trxid: ${reason}` };
  }
  return { ok: true, order: o, trxid };
}
