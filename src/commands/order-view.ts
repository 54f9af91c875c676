/**
 * How an order from the API is shown. Delivered codes are money: they are left out unless the
 * operator asks with --show-codes, because command output ends up in terminals, logs and chats.
 */
import type { Order } from '../api/schemas.js';
import type { Column } from './output.js';
import { usd, when } from './output.js';

/** The order's creation time as the API gave it, shown like every time topup prints (UTC); text it cannot read is shown as sent. */
export function orderTime(t: string | number | undefined): string {
  if (t === undefined) return '';
  const ms = typeof t === 'number' ? t : Date.parse(t);
  return Number.isNaN(ms) ? String(t) : when(ms);
}

export function orderJson(o: Order, showCodes: boolean): Record<string, unknown> {
  // `raw` (the answer as sent) and `answer` (its audit copy) may hold the codes too: never printed here.
  const { codes, raw: _raw, ...rest } = o;
  delete (rest as { answer?: unknown }).answer;
  return showCodes ? { ...rest, codes: codes ?? [] } : { ...rest, codesDelivered: codes?.length ?? 0 };
}

export function orderColumns(showCodes: boolean): Column<Order>[] {
  return [
    { title: 'created UTC', get: (o) => orderTime(o.createdAt) },
    { title: 'orderId', get: (o) => o.orderId },
    { title: 'trxid', get: (o) => o.trxid },
    { title: 'status', get: (o) => o.status },
    { title: 'game', get: (o) => o.game },
    { title: 'pack', get: (o) => o.packName },
    { title: 'amountUsd', get: (o) => usd(o.amountUsd), right: true },
    { title: 'userId', get: (o) => o.userId },
    { title: 'refunded', get: (o) => (o.refunded === undefined ? '' : String(o.refunded)) },
    { title: 'error', get: (o) => o.error },
    showCodes ? { title: 'codes', get: (o) => (o.codes ?? []).join(' ') } : { title: 'codes', get: (o) => (o.codes?.length ? `${o.codes.length} (--show-codes)` : '') },
  ];
}
