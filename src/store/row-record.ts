/**
 * A row as the program sees it (Row) and as SQLite stores it (RowRecord), the one mapping
 * between them, and the vocabulary of its states (the state machine itself is in rows.ts).
 */
import type { OrderRequest } from '../api/schemas.js';

export const ROW_STATES = [
  'pending',
  'sending',
  'processing',
  'verifying',
  'completed',
  'cancelled',
  'invalid',
  'rejected',
  'skipped',
  'review',
] as const;
export type RowState = (typeof ROW_STATES)[number];
export const FINAL_ROW_STATES: readonly RowState[] = ['completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review'];

export interface NewRow {
  idx: number;
  line: number;
  cells: string[];
  /** Valid rows: the full request body, trxid included. Invalid rows: null. */
  request: OrderRequest | null;
  error: string | null;
  productId?: string;
  slug?: string;
  packName?: string;
  quantity?: number;
  unitPriceUsd?: number;
  expectedUsd?: number;
  maxPriceUsd?: number | null;
}

/** What the API told us about a placed order. */
export interface OrderFacts {
  orderId: string;
  status: 'processing' | 'completed' | 'cancelled';
  amountUsd?: number | undefined;
  codes?: string[] | undefined;
  refunded?: boolean | undefined;
  error?: string | undefined;
}

export type StateCounts = Record<RowState, number>;

export function emptyCounts(): StateCounts {
  return Object.fromEntries(ROW_STATES.map((s) => [s, 0])) as StateCounts;
}

/**
 * reject_code of a `verifying` row that was never refused: no send got a definite answer within
 * TOPUP_REVIEW_AFTER_MS. History can show it was placed; nothing can show it was not.
 */
export const NO_ANSWER_CODE = 'TOPUP_NO_DEFINITE_ANSWER';


export interface Row {
  batchId: string;
  idx: number;
  line: number;
  cells: string[];
  state: RowState;
  trxid: string | null;
  request: OrderRequest | null;
  productId: string | null;
  slug: string | null;
  packName: string | null;
  quantity: number | null;
  unitPriceUsd: number | null;
  expectedUsd: number | null;
  maxPriceUsd: number | null;
  orderId: string | null;
  amountUsd: number | null;
  codes: string[];
  refunded: boolean | null;
  error: string | null;
  rejectCode: string | null;
  attempts: number;
  uncertain: boolean;
  firstSentAt: number | null;
  lastSentAt: number | null;
  /** Since when the row has had no definite answer (see migrations), or null. */
  doubtSince: number | null;
  /** Sends since doubtSince that got no definite answer. */
  doubtTries: number;
  nextTryAt: number;
  nextPollAt: number;
  polls: number;
  /**
   * When the row last changed. No transition leaves a final state, so for a final row this is
   * when it ended (the result file's finishedAt).
   */
  updatedAt: number;
}

export interface RowRecord {
  batch_id: string;
  idx: number;
  line: number;
  cells_json: string;
  state: RowState;
  trxid: string | null;
  request_json: string | null;
  product_id: string | null;
  slug: string | null;
  pack_name: string | null;
  quantity: number | null;
  unit_price_usd: number | null;
  expected_usd: number | null;
  max_price_usd: number | null;
  order_id: string | null;
  amount_usd: number | null;
  codes_json: string | null;
  refunded: number | null;
  error: string | null;
  reject_code: string | null;
  attempts: number;
  uncertain: number;
  first_sent_at: number | null;
  last_sent_at: number | null;
  doubt_since: number | null;
  doubt_tries: number;
  next_try_at: number;
  next_poll_at: number;
  polls: number;
  updated_at: number;
}

export function toRow(r: RowRecord): Row {
  return {
    batchId: r.batch_id,
    idx: r.idx,
    line: r.line,
    cells: JSON.parse(r.cells_json) as string[],
    state: r.state,
    trxid: r.trxid,
    request: r.request_json ? (JSON.parse(r.request_json) as OrderRequest) : null,
    productId: r.product_id,
    slug: r.slug,
    packName: r.pack_name,
    quantity: r.quantity,
    unitPriceUsd: r.unit_price_usd,
    expectedUsd: r.expected_usd,
    maxPriceUsd: r.max_price_usd,
    orderId: r.order_id,
    amountUsd: r.amount_usd,
    codes: r.codes_json ? (JSON.parse(r.codes_json) as string[]) : [],
    refunded: r.refunded === null ? null : r.refunded === 1,
    error: r.error,
    rejectCode: r.reject_code,
    attempts: r.attempts,
    uncertain: r.uncertain === 1,
    firstSentAt: r.first_sent_at,
    lastSentAt: r.last_sent_at,
    doubtSince: r.doubt_since,
    doubtTries: r.doubt_tries,
    nextTryAt: r.next_try_at,
    nextPollAt: r.next_poll_at,
    polls: r.polls,
    updatedAt: r.updated_at,
  };
}

