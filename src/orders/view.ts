/**
 * How an API order is shown to a shop (GET /orders/{trxid}, the feed, webhooks): one function from
 * the stored row, so every way of reading an order says the same thing.
 */
import { rowMoney } from '../store/cost.js';
import type { ApiRow, EventRecord } from '../store/order-reads.js';
import { publicStatus, type OrderChange, type OrderEvent, type OrderEventType, type OrderView, type PublicStatus } from './types.js';

/** The API batch's columns, in order (orders/desk.ts writes each order's cells in this order; results show them). */
export const API_COLUMNS = ['trxid', 'pid', 'slug', 'pack', 'userId', 'zoneId', 'serverId', 'region', 'moreId', 'quantity', 'maxPriceUsd', 'meta'] as const;
/** With several accounts, the account column pins an order (as a file's does). */
export const API_COLUMNS_ACCOUNTS = [...API_COLUMNS.slice(0, -1), 'account', 'meta'] as const;

const iso = (ms: number): string => new Date(ms).toISOString();

function cell(cells: readonly string[], columns: readonly string[], name: string): string | undefined {
  const i = columns.indexOf(name);
  const v = i < 0 ? undefined : cells[i];
  return v === undefined || v === '' ? undefined : v;
}

export function eventId(id: number): string {
  return `evt_${id}`;
}

export function changeOf(e: EventRecord): OrderChange {
  return { eventId: eventId(e.id), type: e.type as OrderEventType, status: e.status as PublicStatus, at: iso(e.at) };
}

/**
 * `waiting`: why the order's account holds it now (its pause), shown as the `error` of an order
 * that was sent, refused before any order was made, and waits to be sent again (docs/order-api.md:
 * `error` says why a `sent` order waits; trial s35: it read `null` through a maintenance).
 */
export function orderView(o: ApiRow, columns: readonly string[], opts: { codes: boolean; history?: readonly EventRecord[]; waiting?: (account: string) => { code: string; message: string } | null }): OrderView {
  const r = o.row;
  const money = rowMoney(r);
  const metaText = cell(r.cells, columns, 'meta');
  let meta: Record<string, unknown> | null = null;
  if (metaText !== undefined) {
    try {
      meta = JSON.parse(metaText) as Record<string, unknown>;
    } catch {
      meta = null;
    }
  }
  const player: OrderView['player'] = {};
  for (const f of ['userId', 'zoneId', 'serverId', 'region', 'moreId'] as const) {
    const v = r.request?.[f] ?? cell(r.cells, columns, f);
    if (v !== undefined) player[f] = v;
  }
  const status = publicStatus(r.state, r.firstSentAt !== null);
  const showError = status === 'rejected' || status === 'review' || status === 'cancelled';
  // The shop's trxid (its cell); a row that moved to another account is sent under a new one.
  const trxid = cell(r.cells, columns, 'trxid') ?? r.trxid ?? '';
  return {
    trxid,
    ...(r.trxid !== null && r.trxid !== trxid ? { sentAs: r.trxid } : {}),
    status,
    state: r.state,
    batchId: r.batchId,
    account: r.account,
    orderId: r.orderId,
    pid: r.productId,
    slug: r.slug,
    pack: r.packName,
    quantity: r.quantity,
    player,
    // '' is a check that found the player without a name: shown as no name.
    playerName: r.playerName === undefined || r.playerName === null || r.playerName === '' ? null : r.playerName,
    unitPriceUsd: r.unitPriceUsd,
    expectedUsd: r.expectedUsd,
    maxPriceUsd: r.maxPriceUsd,
    amountUsd: money.amountCents === null ? null : money.amountCents / 100,
    refunded: r.refunded,
    netUsd: money.netCents === null ? null : money.netCents / 100,
    ...(opts.codes ? { codes: [...r.codes] } : {}),
    codeCount: r.codes.length,
    error: showError && r.error !== null
      ? { code: r.rejectCode, message: r.error }
      : status === 'sent' && r.state === 'pending'
        ? (r.error !== null ? { code: r.rejectCode, message: r.error } : (opts.waiting?.(r.account) ?? null))
        : null,
    meta,
    createdAt: iso(o.createdAt),
    updatedAt: iso(r.updatedAt),
    ...(opts.history ? { history: opts.history.map(changeOf) } : {}),
  };
}

/** One event as the feed lists it and a webhook posts it: the order now, with the event's own status. */
export function orderEvent(e: EventRecord, o: ApiRow, columns: readonly string[], opts: { codes: boolean }): OrderEvent {
  // Codes go out only with the event that completes the order (and only when allowed): an earlier
  // event delivered late must not carry them either way.
  const view = orderView(o, columns, { codes: opts.codes && e.status === 'completed' });
  return { id: eventId(e.id), type: e.type as OrderEventType, createdAt: iso(e.at), data: { ...view, status: e.status as PublicStatus } };
}
