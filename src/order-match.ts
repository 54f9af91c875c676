/**
 * Is the order an answer carries THIS row's purchase?
 *
 * The API answers a submit whose trxid it has seen with the existing order (an idempotent
 * replay). If the trxid was used before for another purchase (a reseller reusing SHOP-1001, an
 * earlier install, a deleted database), that order is someone else's: taking it would report the
 * row completed, with another customer's amount and delivered codes, while nothing was bought
 * for it. So every order that would settle a row is compared with the row's own request first;
 * a mismatch never completes the row (the caller sends it to `review`, both sides shown).
 *
 * Compared only where the answer names the field (absent proves nothing either way):
 *  - trxid (case-insensitively, as the intake treats them), pid, quantity: exactly;
 *  - the player: the echoed userId must contain ours as a whole token, case-insensitively
 *    (suppliers echo "777888999 (2005)" or "Name#TAG" in other cases); zoneId and moreId exactly;
 *  - game and pack name only when the answer has no pid (then they are the only sign of which
 *    pack it is); game against the slug or the catalog's game name, spaces and case aside.
 * serverId is not compared: suppliers echo a server's label as often as its value.
 * The amount is never compared: prices move between the file and the order.
 */
import type { Order } from './api/schemas.js';
import type { OrderFacts, Row } from './store/rows.js';

export interface Mismatch {
  field: string;
  sent: string;
  got: string;
}

const fold = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

function containsToken(echo: string, ours: string): boolean {
  const e = echo.toLowerCase();
  const o = ours.trim().toLowerCase();
  let at = e.indexOf(o);
  while (at >= 0) {
    const before = e[at - 1];
    const after = e[at + o.length];
    const edge = (c: string | undefined): boolean => c === undefined || !/[\p{L}\p{N}]/u.test(c);
    if (edge(before) && edge(after)) return true;
    at = e.indexOf(o, at + 1);
  }
  return false;
}

/** Every way `order` differs from the purchase `row` asked for; empty when it may be the row's. */
export function mismatches(row: Row, order: Order, gameNames: readonly string[] = []): Mismatch[] {
  const out: Mismatch[] = [];
  const req = row.request;
  const add = (field: string, sent: string, got: string): void => void out.push({ field, sent, got });
  if (order.trxid !== undefined && row.trxid !== null && order.trxid.trim().toLowerCase() !== row.trxid.toLowerCase()) {
    add('trxid', row.trxid, order.trxid);
  }
  if (order.pid !== undefined && row.productId !== null && order.pid.trim() !== row.productId) add('pid', row.productId, order.pid);
  if (order.quantity !== undefined && req && order.quantity !== (req.quantity ?? 1)) add('quantity', String(req.quantity ?? 1), String(order.quantity));
  if (req?.userId !== undefined && order.userId !== undefined && !containsToken(order.userId, req.userId)) add('userId', req.userId, order.userId);
  if (req?.zoneId !== undefined && order.zoneId !== undefined && order.zoneId.trim() !== req.zoneId) add('zoneId', req.zoneId, order.zoneId);
  if (req?.moreId !== undefined && order.moreId !== undefined && order.moreId.trim().toLowerCase() !== req.moreId.toLowerCase()) {
    add('moreId', req.moreId, order.moreId);
  }
  if (order.pid === undefined) {
    if (order.game !== undefined && row.slug !== null) {
      const names = [row.slug, ...gameNames].map(fold);
      if (!names.includes(fold(order.game))) add('game', row.slug, order.game);
    }
    if (order.packName !== undefined && row.packName !== null && fold(order.packName) !== fold(row.packName)) {
      add('packName', row.packName, order.packName);
    }
  }
  return out;
}

// ───────────────────────────── where an order came from ─────────────────────────────

/**
 * How far the supplier's clock may be from ours before an order's creation time is believed to be
 * before the row's first send. A trxid reused from yesterday is hours older; our own order, made
 * after our intent was committed, is never more than a request timeout younger.
 */
export const CLOCK_SKEW_MS = 10 * 60_000;

/** The order's creation time in epoch ms, when the supplier gave one that can be read. */
export function createdAtMs(o: Order): number | undefined {
  if (o.createdAt === undefined) return undefined;
  const t = typeof o.createdAt === 'number' ? o.createdAt : Date.parse(o.createdAt);
  return Number.isFinite(t) ? t : undefined;
}

/**
 * Whether an order that would settle a row was made by one of the row's own sends, as far as the
 * answers tell (store/invariants.ts, "an order the row's sends did not create"):
 *  - `earlier`: it existed before the row's first committed send: its creation time says so, or
 *    the API answered the row's FIRST send with it as a replay (`idempotentReplay: true` on a
 *    trxid this home had never sent). It is another purchase under the same trxid, or, at best,
 *    an identical one made elsewhere (the same file ordered from a home whose database was lost);
 *  - `unknown`: nothing says when it was made (no creation time, and a resend's replay, which is
 *    what our own lost first attempt also looks like);
 *  - `after`: made after the row's first send.
 */
export type Origin = 'earlier' | 'unknown' | 'after';

export function originOf(o: Order, firstSentAt: number | null, replayOnFirstSend = false): Origin {
  if (replayOnFirstSend) return 'earlier';
  const t = createdAtMs(o);
  if (t === undefined || firstSentAt === null) return 'unknown';
  return t < firstSentAt - CLOCK_SKEW_MS ? 'earlier' : 'after';
}

/**
 * The fields of the row's purchase that the order does not name. An order that names one of them
 * differently is a mismatch (mismatches()); one that leaves it out cannot be told from another
 * purchase of the same pack. Not asked for: zoneId and serverId, which the spec's order shape
 * (2.3) does not have (serverId carries a region for some lines; suppliers echo a label or
 * nothing), and the trxid of a replay (it is the answer to our own trxid). Compared when named.
 */
export function unnamedFields(row: Row, o: Order): string[] {
  const req = row.request;
  const out: string[] = [];
  if (o.pid === undefined && o.packName === undefined) out.push('pack');
  if (req?.userId !== undefined && o.userId === undefined) out.push('userId');
  if (req?.moreId !== undefined && o.moreId === undefined) out.push('moreId');
  if (req?.quantity !== undefined && o.quantity === undefined) out.push('quantity');
  return out;
}

/**
 * May an order this row's sends did not (provably) create settle the row without a person? Null
 * when it may: a top-up order that names every field of the row's purchase, each the same. Else
 * why not, for the review text. A key or gift card order never may: its answer names no buyer (the
 * spec's order shape has no player, often no pid or quantity), so yesterday's card for another
 * customer looks exactly like this row's, and its codes may already be in someone's hands.
 */
export function foreignOrderProblem(row: Row, o: Order, gameNames: readonly string[] = []): string | null {
  const wrong = mismatches(row, o, gameNames);
  if (wrong.length > 0) return `it is another purchase (${describeMismatches(wrong)})`;
  if (needsCodes(row)) return 'a key/card order names no buyer, so it cannot be told from an earlier purchase of the same pack for someone else, and its codes may already have been handed out';
  const missing = unnamedFields(row, o);
  if (missing.length > 0) return `it does not name this row's ${missing.join(', ')}, so it cannot be told from another purchase of the same pack`;
  return null;
}

/** `userId: sent "5123", the order has "9999"; game: …` */
export function describeMismatches(list: readonly Mismatch[]): string {
  return list.map((m) => `${m.field}: sent "${m.sent}", the order has "${m.got}"`).join('; ');
}

/** A key or gift card row: the only kind whose completed order must carry codes (spec 2.3). */
export function needsCodes(row: Row): boolean {
  return row.request?.quantity !== undefined;
}

/** Times a completed key/card order without codes is read again before it is given up as "codes missing". */
export const MAX_CODE_READS = 5;

/**
 * What an order answer settles for a row: the facts to record. A completed key/card order
 * without codes is not final yet: the supplier may deliver them a moment later, so it is recorded
 * as `processing` and read again (poll/poller.ts counts the reads).
 */
export function factsFor(row: Row, order: Order & { orderId: string }): { facts: OrderFacts; awaitingCodes: boolean } {
  const awaitingCodes = order.status === 'completed' && needsCodes(row) && (order.codes?.length ?? 0) === 0;
  return {
    facts: {
      orderId: order.orderId,
      status: awaitingCodes ? 'processing' : order.status,
      amountUsd: order.amountUsd,
      codes: order.codes,
      refunded: order.refunded,
      error: order.error,
    },
    awaitingCodes,
  };
}
