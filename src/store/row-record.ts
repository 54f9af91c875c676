/**
 * A row as the program sees it (Row) and as SQLite stores it (RowRecord), the one mapping
 * between them, and the vocabulary of its states (the state machine itself is in rows.ts).
 */
import type { OrderRequest } from '../api/schemas.js';

import { ROW_STATES, type RowState } from './row-states.js';

export type { RowState } from './row-states.js';

export interface NewRow {
  idx: number;
  line: number;
  cells: string[];
  /** Valid rows: the full request body, trxid included. Invalid rows: null. */
  request: OrderRequest | null;
  error: string | null;
  /** Stored as `skipped` (a duplicate file, a repeated row): never sent, its error says why. */
  skipped?: boolean;
  productId?: string;
  slug?: string;
  packName?: string;
  quantity?: number;
  unitPriceUsd?: number;
  expectedUsd?: number;
  maxPriceUsd?: number | null;
  /** The purchase's fingerprint (claim/repeats.ts), for valid rows. */
  fingerprint?: string | null;
  /** The same purchase's fingerprints as homes before several accounts stored them (by pid), for the repeat look-up. */
  fingerprintAlts?: readonly string[];
  /** reject_code to store (a row skipped as a repeat says so for topup retry --repeats). */
  rejectCode?: string | null;
  /** Judged as a possible repeat of an earlier purchase when its batch opens (claim/repeats.ts). */
  repeatCheck?: boolean;
  /** The supplier account it is placed on (routing, account/routing.ts); `default` when the home has one. */
  account?: string;
  /** The file's account column named the account: the row never moves to another (failover). */
  pinned?: boolean;
  /** The player's name a check gave (claim/player-checks.ts); absent when no check was made. */
  playerName?: string | null;
  /** What the reseller charged for it (intake/sale-price.ts), for revenue and margin; never what is paid. */
  saleUsd?: number | null;
  /** A row skipped as a repeat: the earlier row whose purchase it is (migration 26). */
  repeatOf?: RowRef | null;
}

/** One row of one batch. */
export interface RowRef {
  batchId: string;
  idx: number;
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

/** An operator's (or the recheck's) decision on a review row. */
export type Resolution = 'charged' | 'not-charged' | 'found';


/** An account that refused a row with nothing created, before the row moved to another (failover). */
export interface RowMove {
  /** The account that refused it. */
  from: string;
  /** The trxid it had there (a move always takes a new one: accounts at one supplier share trxids). */
  trxid: string;
  /** The API's code, or why the row left without an answer (an account pause, maintenance). */
  code: string;
  why: string;
  at: number;
}

export interface Row {
  batchId: string;
  idx: number;
  line: number;
  cells: string[];
  state: RowState;
  /** The supplier account the row is on (rows.account): its one and only. */
  account: string;
  /** The accounts that refused it with nothing created before it moved here, oldest first. */
  moves: RowMove[];
  /** Pinned to its account by the file's account column: never moved (the trigger holds it too). */
  pinned: boolean;
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
  firstSentAt: number | null;
  lastSentAt: number | null;
  /** Start of the doubt clock of a `resending` or `unseen` row (or of failed history checks), else null. */
  doubtSince: number | null;
  /** Sends since doubtSince that got no definite answer. */
  doubtTries: number;
  nextTryAt: number;
  nextPollAt: number;
  polls: number;
  /** The last answer about this row, redacted and capped (JSON of an ApiAnswer), for operators. */
  lastAnswer: string | null;
  /** Information that is not an error: a replayed trxid, codes still missing. */
  note: string | null;
  /** How often a completed key/card order without codes was read again for them. */
  codeReads: number;
  /** When the row entered `review` (the recheck window counts from here). */
  reviewSince: number | null;
  resolution: Resolution | null;
  resolvedBy: string | null;
  resolvedAt: number | null;
  /** updated_at: for a final row, when it ended. */
  updatedAt: number;
  /** The player's name a check gave before the row was stored; null when none was made (or it said not found). */
  playerName?: string | null;
  /** Skipped as a repeat: the earlier row whose purchase it is (its trxid and order id go in the result), else null. */
  repeatOf?: RowRef | null;
}

export interface RowRecord {
  batch_id: string;
  idx: number;
  line: number;
  cells_json: string;
  state: RowState;
  account: string;
  moves_json: string | null;
  pinned: number;
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
  first_sent_at: number | null;
  last_sent_at: number | null;
  doubt_since: number | null;
  doubt_tries: number;
  next_try_at: number;
  next_poll_at: number;
  polls: number;
  last_answer: string | null;
  note: string | null;
  code_reads: number;
  review_since: number | null;
  resolution: Resolution | null;
  resolved_by: string | null;
  resolved_at: number | null;
  updated_at: number;
  player_name?: string | null;
  repeat_of?: string | null;
}

/**
 * The row's own trxid: the one its file (or shop) gave it, or the one derived for it, before any
 * move to another account. A move sends it under `<own>-<account>` (dispatch/failover.ts), but
 * the reseller joins results to their records by their own (a new-user trial: the result
 * overwrote their trxid cell with the moved one). Null for a row never stored for sending.
 */
export function ownTrxid(row: Pick<Row, 'trxid' | 'moves'>): string | null {
  return row.moves[0]?.trxid ?? row.trxid;
}

export function toRow(r: RowRecord): Row {
  return {
    batchId: r.batch_id,
    idx: r.idx,
    line: r.line,
    cells: JSON.parse(r.cells_json) as string[],
    state: r.state,
    account: r.account,
    moves: r.moves_json ? (JSON.parse(r.moves_json) as RowMove[]) : [],
    pinned: r.pinned === 1,
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
    firstSentAt: r.first_sent_at,
    lastSentAt: r.last_sent_at,
    doubtSince: r.doubt_since,
    doubtTries: r.doubt_tries,
    nextTryAt: r.next_try_at,
    nextPollAt: r.next_poll_at,
    polls: r.polls,
    lastAnswer: r.last_answer,
    note: r.note,
    codeReads: r.code_reads,
    reviewSince: r.review_since,
    resolution: r.resolution,
    resolvedBy: r.resolved_by,
    resolvedAt: r.resolved_at,
    updatedAt: r.updated_at,
    playerName: r.player_name ?? null,
    repeatOf: r.repeat_of ? (JSON.parse(r.repeat_of) as RowRef) : null,
  };
}

