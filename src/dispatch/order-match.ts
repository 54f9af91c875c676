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
 *  - trxid (case-insensitively, as the intake treats them), pid, quantity: exactly; a key/card
 *    order's codes: no more than the row's quantity;
 *  - the player: the echoed userId must contain ours as a whole token, case-insensitively
 *    (suppliers echo "777888999 (2005)" or "Name#TAG" in other cases); zoneId and moreId exactly;
 *    without a zoneId field, a number the player echo carries beside our player is the zone;
 *  - game and pack name only when the answer has no pid (then they are the only sign of which
 *    pack it is); game against the slug or the catalog's game name, spaces and case aside.
 * serverId is not compared: suppliers echo a server's label as often as its value.
 * The amount is never compared: prices move between the file and the order.
 */
import type { Order } from '../api/schemas.js';
import type { OrderFacts, Row } from '../store/rows.js';
import { sameTrxid, trxidAsGiven } from '../kernel/identity.js';

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

/**
 * Does a player echo name a zone other than ours? The numbers left once our player's token is taken
 * out are the echo's zone candidates; when there are some and none is our zone, it is another
 * zone. Words beside the player (a nickname) prove nothing; an echo without our player is already
 * a userId mismatch.
 */
function echoedZoneDiffers(echo: string, userId: string, zoneId: string): boolean {
  const rest = echoedZones(echo, userId);
  return rest.length > 0 && !rest.includes(zoneId.trim().toLowerCase());
}

/** The numbers beside our player's token in a player echo (none when our player is not a token of it). */
function echoedZones(echo: string, userId: string): string[] {
  const tokens = echo.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t !== '');
  const at = tokens.indexOf(userId.trim().toLowerCase());
  if (at < 0) return [];
  return tokens.filter((t, i) => i !== at && /^\p{N}+$/u.test(t));
}

/** Every way `order` differs from the purchase `row` asked for; empty when it may be the row's. */
export function mismatches(row: Row, order: Order, gameNames: readonly string[] = []): Mismatch[] {
  const out: Mismatch[] = [];
  const req = row.request;
  const add = (field: string, sent: string, got: string): void => void out.push({ field, sent, got });
  if (order.trxid !== undefined && row.trxid !== null && !sameTrxid(trxidAsGiven(order.trxid), row.trxid)) {
    add('trxid', row.trxid, order.trxid);
  }
  // Two echoes naming two trxids: it cannot be shown to be this row's purchase (api/schemas.ts).
  if (order.trxidConflict && row.trxid !== null) {
    add('trxid', row.trxid, order.trxidConflict.join(' / '));
  }
  if (order.pid !== undefined && row.productId !== null && order.pid.trim() !== row.productId) add('pid', row.productId, order.pid);
  if (order.quantity !== undefined && req && order.quantity !== (req.quantity ?? 1)) add('quantity', String(req.quantity ?? 1), String(order.quantity));
  // A key/card order delivers one code per unit (a card's PIN travels in its code's entry:
  // api/schemas.ts readCodes): more codes than the row asked for is another purchase even when
  // the answer names no quantity (the simulator: an unmarked replay of a foreign 2-key order
  // completed a 1-key row with the other buyer's codes). Fewer proves nothing (late or partial codes).
  else if (order.quantity === undefined && req?.quantity !== undefined && order.codes !== undefined && order.codes.length > req.quantity) {
    add('codes', `quantity ${req.quantity}`, `${order.codes.length} codes`);
  }
  if (req?.userId !== undefined && order.userId !== undefined && !containsToken(order.userId, req.userId)) add('userId', req.userId, order.userId);
  if (req?.zoneId !== undefined && order.zoneId !== undefined && order.zoneId.trim() !== req.zoneId) add('zoneId', req.zoneId, order.zoneId);
  // Without a zoneId field, the zone a player echo carries ("777888999 (2005)") is the order's zone:
  // a number beside our player that is not our zone names another purchase (the simulator, seed
  // 20261127: a Mobile Legends row completed with a foreign order for zone 2005, the row's 2004).
  else if (req?.zoneId !== undefined && req.userId !== undefined && order.zoneId === undefined && order.userId !== undefined && echoedZoneDiffers(order.userId, req.userId, req.zoneId)) {
    add('zoneId', req.zoneId, order.userId);
  }
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
 * How much earlier than the row's first send an order's creation time may be and still be the
 * row's own. Our own order is made after our intent was committed, so only the two clocks'
 * difference can make it look earlier:
 *  - measured (the API's Date header against our clock, account/account.ts lastServerDate): 5 s, for the
 *    header's one-second resolution, the answer's latency and suppliers that stamp seconds;
 *  - not measured yet: 10 minutes, any sane pair of clocks.
 * A trxid reused from yesterday, or from an hour ago, is earlier either way. One used by someone
 * else within seconds of our first send cannot be told apart by time (store/invariants.ts says so).
 */
export const MEASURED_SKEW_MS = 5_000;
export const UNMEASURED_SKEW_MS = 10 * 60_000;

/** A date text that says which zone it is in: ISO with `Z` or an offset, or an HTTP date (GMT/UTC). */
const ZONED = /(Z|[+-]\d{2}:?\d{2}|\b(GMT|UTC))\s*$/i;

/**
 * The order's creation time in epoch ms, when the supplier gave one that can be read without a
 * guess: an epoch number (seconds are read as such: schemas.ts), or a text naming its zone. A text
 * without a zone ("2026-11-26 03:04:05", how many PHP backends write a UTC DATETIME) is NOT read:
 * Date.parse would take it in this host's zone, and a reseller in Jakarta would see every order as
 * seven hours older than it is (found by an adversarial review: our own charged order read as
 * "made earlier", the row "not placed").
 */
export function createdAtMs(o: Order): number | undefined {
  if (o.createdAt === undefined) return undefined;
  if (typeof o.createdAt === 'number') return Number.isFinite(o.createdAt) ? o.createdAt : undefined;
  if (!ZONED.test(o.createdAt.trim())) return undefined;
  const t = Date.parse(o.createdAt);
  return Number.isFinite(t) ? t : undefined;
}

/**
 * How much older than `since` (our clock) an order's creation time must be before it is CERTAINLY
 * older, for the conclusions that read a row as NOT placed (the history check). 15 hours: more than
 * any zone or unset clock puts between two clocks. Not the Date header's measured offset: a
 * supplier's database may stamp orders with another clock than its web server's, and a wrong
 * "older" here would read a charged row as not charged (an adversarial review's finding).
 */
export const SURELY_OLDER_MS = 15 * 3_600_000;

/** Made certainly before `since` (our clock)? False when its time is unknown or too close to tell. */
export function surelyBefore(o: Order, since: number): boolean {
  const t = createdAtMs(o);
  return t !== undefined && t < since - SURELY_OLDER_MS;
}

/**
 * Whether an order that would settle a row was made by one of the row's own sends, as far as the
 * answers tell (store/invariants.ts, "an order the row's sends did not make"):
 *  - `earlier`: it existed before the row's first committed send: its creation time says so, or
 *    the API answered the row's FIRST send with it as a replay (`idempotentReplay: true` on a
 *    trxid this home had never sent). It is another purchase under the same trxid, or, at best,
 *    an identical one made elsewhere (the same file ordered from a home whose database was lost);
 *  - `unknown`: nothing says when it was made: a replay answering a RESEND (what our own lost
 *    first attempt looks like, and also what a trxid used before looks like), or an order found in
 *    history by its trxid, without a creation time, or with one too close to our first send to
 *    tell while the two clocks are not measured (no Date header seen yet);
 *  - `after`: made after the row's first send (its creation time), or by this very send (an answer
 *    to a submit that is not a replay).
 */
export type Origin = 'earlier' | 'unknown' | 'after';

/** How the order came: the answer to a row's first send or a resend (a replay or not), or history. */
export type Came = 'first-send-replay' | 'resend-replay' | 'fresh' | 'history';

/** `serverOffsetMs`: the API's clock minus ours, when a Date header measured it (null: not known). */
export function originOf(o: Order, firstSentAt: number | null, came: Came, serverOffsetMs: number | null = null): Origin {
  if (came === 'first-send-replay') return 'earlier';
  const t = createdAtMs(o);
  if (t !== undefined && firstSentAt !== null) {
    if (serverOffsetMs !== null) return t < firstSentAt + serverOffsetMs - MEASURED_SKEW_MS ? 'earlier' : 'after';
    if (t < firstSentAt - UNMEASURED_SKEW_MS) return 'earlier';
    // Within the margin of two clocks nobody measured, a replay or a history entry made minutes
    // before our first send (a trxid used elsewhere) looks exactly like our own lost first
    // attempt: only an answer to this very send that is not a replay says "made now" (found by
    // the simulator: yesterday's card, replayed to a resend, completed a key/card row).
    return came === 'fresh' ? 'after' : 'unknown';
  }
  return came === 'fresh' ? 'after' : 'unknown';
}

/** The API's clock minus ours, from the last Date header it sent (null before any). */
export function serverOffset(seen: { server: number; local: number } | null): number | null {
  return seen === null ? null : seen.server - seen.local;
}

/**
 * trxids this home derives (claim/row-verdict.ts deriveTrxid: "tu" and 30 hex digits of a hash of the
 * file's bytes and the row): no one else sends them, so an order under one is this purchase's
 * (at worst made by the same file in a home whose database was lost). A trxid the file gives
 * (a shop's order number) may have been used before, by anyone.
 */
export const DERIVED_TRXID = /^tu[0-9a-f]{30}$/;

/**
 * Must the order prove it is the row's (name every field of a top-up, each the same; never a
 * key/card row without a person) before it settles the row? When the trxid is the file's own (a
 * shop's number, which may have been used before) and the order existed before the row's first
 * send, or nothing says when it was made. Never for a trxid this home derived: an order under it
 * is this file line's purchase by construction (the same file, ordered from a home whose database
 * was lost, is the design's case: the API replays instead of charging again; a note says so).
 */
export function mustProve(row: Row, origin: Origin): boolean {
  if (row.trxid !== null && DERIVED_TRXID.test(row.trxid)) return false;
  return origin === 'earlier' || origin === 'unknown';
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
  // The zone, too, here (not in unnamedFields, whose history lookup by player says what it assumed
  // in a note): an order that must prove it is this purchase and names no zone (no zoneId field, no
  // zone in the player echo) cannot be told from the same pack for the same player in another zone
  // (the simulator, seed 20261127: a first send's replay of a foreign order for zone 2002 completed
  // a row of zone 2001). Spec-shaped orders (2.3) have no zone: such a row goes to review.
  if (row.request?.zoneId !== undefined && o.zoneId === undefined && !(o.userId !== undefined && row.request.userId !== undefined && echoedZones(o.userId, row.request.userId).length > 0)) {
    missing.push('zoneId');
  }
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
