/**
 * A row as the program sees it (Row) and as SQLite stores it (RowRecord), and the one mapping
 * between them.
 */
import type { OrderRequest } from '../api/schemas.js';
import type { RowState } from './rows.js';

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
  };
}

