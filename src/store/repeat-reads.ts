/**
 * The reads behind the repeat rule (claim/repeats.ts): the earlier purchases a row of a batch being
 * opened may repeat, the rows whose repeat is decided in the opening transaction, and what a retry
 * chain's rows already stand for. Read-only, like row-reads.ts and row-lookups.ts, which it extends.
 */
import { REPEAT_CODE } from './row-reads.js';
import { RowLookups } from './row-lookups.js';
import { batchState, rowState } from './state-sql.js';
import type { OrderRequest } from '../api/schemas.js';
import type { RowState } from './row-states.js';

/** A row of another batch with the same purchase fingerprint: a purchase a row may repeat (claim/repeats.ts decides). */
export interface EarlierPurchase {
  batchId: string;
  /** Its row's index in its batch (what a skipped row's repeat_of names). */
  idx: number;
  file: string;
  line: number;
  orderId: string | null;
  state: RowState;
  refunded: boolean | null;
  error: string | null;
  /** When it was sent (or its batch claimed, while not sent yet). */
  at: number;
  /** Its file's header and its cells, for the reseller's own columns (claim/repeats.ts). */
  header: string[];
  cells: string[];
}

/**
 * The rows of other batches with fingerprint @fp that a row of batch @batchId may repeat: in a
 * batch that is not being stored (`claimed`), sent within the window from @since or not sent yet.
 * The window counts from when the purchase was SENT, not when its batch was claimed: a batch that
 * waited for balance over a weekend and bought an hour ago is a purchase of an hour ago (found by
 * an adversarial review: an edited re-drop 30 h after the first claim bought everything again).
 * Which of them is a purchase the row repeats is claim/repeats.ts's rule (one rule for the
 * opening's decision and the dry run's). @chain (a JSON array): the batches a retry descends from,
 * the retried batch and, for a retry of a retry, the ones before it: their rows are the file's own
 * rows, where equal rows are separate purchases, never earlier purchases of it (an adversarial
 * review: a retry of a retry skipped a row as a repeat of its twin in the first batch).
 */
const EARLIER_TERMS = `r.fingerprint IN (SELECT value FROM json_each(@fps)) AND r.batch_id != @batchId AND r.batch_id NOT IN (SELECT value FROM json_each(@chain)) AND b.state != ${batchState('claimed')}
         AND (r.first_sent_at IS NULL OR r.first_sent_at >= @since)`;

export class RepeatReads extends RowLookups {
  /**
   * Every row of another batch with this fingerprint in the window, newest batch first. No limit:
   * a key/card fingerprint (pack and quantity) is shared by every customer's card of the day, and
   * a re-drop's row must be matched against all of them (an adversarial review: with the 200
   * newest only, a re-drop after 200 other cards of the pack bought its cards again). The caller
   * reads them once per fingerprint (claim/repeats.ts RepeatMatcher).
   */
  earlierRows(fingerprints: string | readonly string[], batchId: string, since: number, chain: readonly string[] = []): EarlierPurchase[] {
    const fps = JSON.stringify(typeof fingerprints === 'string' ? [fingerprints] : [...new Set(fingerprints)]);
    const rows = this.stmt(
      `SELECT r.batch_id AS batchId, r.idx, b.source_name AS file, r.line, r.order_id AS orderId, r.state, r.refunded, r.error,
         coalesce(r.first_sent_at, b.created_at) AS at, b.header_json AS header, r.cells_json AS cells
       FROM rows r JOIN batches b ON b.id = r.batch_id
       WHERE ${EARLIER_TERMS}
       ORDER BY b.seq DESC, r.idx`,
    ).all({ fps, batchId, since, chain: JSON.stringify(chain) }) as (Omit<EarlierPurchase, 'header' | 'cells' | 'refunded'> & { header: string | null; cells: string; refunded: number | null })[];
    // One header array per batch (a file's rows share it).
    const headers = new Map<string, string[]>();
    return rows.map((r) => {
      let header = headers.get(r.batchId);
      if (!header) headers.set(r.batchId, (header = r.header ? (JSON.parse(r.header) as string[]) : []));
      return { ...r, refunded: r.refunded === null ? null : r.refunded === 1, header, cells: JSON.parse(r.cells) as string[] };
    });
  }

  /** The batches `batchId` retries, nearest first (a retry of a retry: both). */
  retryChain(batchId: string | null): string[] {
    const out: string[] = [];
    for (let id = batchId; id !== null && !out.includes(id); ) {
      out.push(id);
      id = (this.stmt('SELECT retry_of FROM batches WHERE id = ?').pluck().get(id) as string | null | undefined) ?? null;
    }
    return out;
  }

  /**
   * The rows of a batch being opened whose repeat is decided now (repeat_check, still pending),
   * with their request (a top-up names a player). No per-row look at earlier rows here: the
   * matcher reads the earlier purchases once per fingerprint (an adversarial review: an EXISTS per
   * row walked the batch's own rows of the fingerprint, quadratic in a file of one card pack).
   */
  repeatCandidates(batchId: string): { idx: number; line: number; fingerprint: string; alts: string[]; cells: string[]; request: OrderRequest | null }[] {
    return (this.stmt(
      `SELECT idx, line, fingerprint, fingerprint_alts AS alts, cells_json AS cells, request_json AS request FROM rows
       WHERE batch_id = ? AND state = ${rowState('pending')} AND repeat_check = 1
       ORDER BY idx`,
    ).all(batchId) as { idx: number; line: number; fingerprint: string; alts: string | null; cells: string; request: string | null }[]).map((r) => ({
      ...r,
      alts: r.alts === null ? [] : (JSON.parse(r.alts) as string[]),
      cells: JSON.parse(r.cells) as string[],
      request: r.request === null ? null : (JSON.parse(r.request) as OrderRequest),
    }));
  }

  /** Rows of these batches skipped as repeats of earlier purchases, with their file's header (claim/repeats.ts skipRepeats). */
  skippedAsRepeats(batchIds: readonly string[]): { line: number; fingerprint: string; cells: string[]; request: OrderRequest | null; header: string[] }[] {
    if (batchIds.length === 0) return [];
    return (this.stmt(
      `SELECT r.line, r.fingerprint, r.cells_json AS cells, r.request_json AS request, b.header_json AS header
       FROM rows r JOIN batches b ON b.id = r.batch_id
       WHERE r.batch_id IN (SELECT value FROM json_each(?)) AND r.state = ${rowState('skipped')} AND r.reject_code = ? AND r.fingerprint IS NOT NULL
       ORDER BY b.seq, r.idx`,
    ).all(JSON.stringify(batchIds), REPEAT_CODE) as { line: number; fingerprint: string; cells: string; request: string | null; header: string | null }[]).map((r) => ({
      line: r.line,
      fingerprint: r.fingerprint,
      cells: JSON.parse(r.cells) as string[],
      request: r.request === null ? null : (JSON.parse(r.request) as OrderRequest),
      header: r.header === null ? [] : (JSON.parse(r.header) as string[]),
    }));
  }
}
