/**
 * The first start after a restore: reconcile before anything is sent (docs/backup.md).
 *
 * A restored store is older than the world: after the copy was taken, rows may have been sent,
 * bought, or moved to another account and bought there under the trxid a move gives
 * (dispatch/failover.ts: `<first trxid>-<account>`). The copy says `pending` for all of them. Sent
 * again as the copy says, a row on its own account under its own trxid only meets its purchase as
 * a replay; but a row that moved before it was bought would be bought a second time on the account
 * the copy names (an adversarial review: MV-1 on A and MV-1-second on B). So before the runner
 * sends anything, every row that is unsent, in flight or in doubt is looked up by every trxid it
 * could have been bought under, at every account it could have been bought on, and settled from
 * what the suppliers say.
 *
 * MONEY SAFETY. Which durable record says a row may have been sent:
 *  - for what happened before the copy: the copy itself (a `sending`/`resending` row, its trxid,
 *    its moves);
 *  - for what happened after it: nothing of ours survives (that is what a restore means), so the
 *    suppliers' ledgers are the record, read by trxid through GET /history of every account;
 *  - the gate itself: meta `restore.reconcile` (store/backup.ts RECONCILE_KEY), written into every
 *    copy by topup backup and by topup restore, or set at the daemon's start when the store is older
 *    than the home's mark. The runner's loop (and so every send) starts only once it is gone, and it
 *    is removed only after every row's outcome has been written.
 * What happens if the process dies at each await:
 *  - while loading claimed batches (loadBatch): the load is the loader's own transactions; the
 *    next start loads again; nothing was sent (the runner's loop never started);
 *  - while reading history (sweep): nothing was written; the next start reads again;
 *  - between two rows' settlements: each settlement is one transaction (a move and its order in one),
 *    guarded by this process's lease; a row settled stays settled, the rest are looked up again;
 *  - after the last settlement, before the report or the removal of the marker: the next start
 *    looks everything up again (settled rows are no longer in the states looked at) and writes the
 *    report; still nothing sent until the marker is gone.
 * A row whose accounts cannot all answer (history unreadable, too short, or not echoing trxids) at
 * an account it could have moved to is never sent blind: it goes to review (edge restored-unknown),
 * where `topup review` shows why. A row whose own account cannot answer stays as the copy has it,
 * pinned to that account in the store (rows.pinned, the trigger rows_account_moves) before anything
 * of it is sent: resending its own trxid to its own account meets any purchase as a replay, never
 * a second charge, but a failover off that account would read "nothing created" from a refusal of
 * that resend and buy it again elsewhere.
 */
import { foldTrxid, trxidKey } from '../kernel/identity.js';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Priority } from '../api/client.js';
import { auditCopy } from '../api/audit.js';
import type { Order } from '../api/schemas.js';
import type { Runtime } from '../runtime.js';
import type { Row, RowMove } from '../store/row-record.js';
import type { RowState } from '../store/row-states.js';
import { LEASE_MS } from '../store/owner.js';
import { CLAIM_LOOKUP_PREFIX, ORDER_LOOKUP_PREFIX, RECONCILE_KEY, RESTORE_WINDOW_KEY, claimLookups, dropSpentClaimMarks, spentClaim, holdRowsInRestoreWindow, noteOrderBlocked, notReadableWhy, orderLookups, removedSince, type ClaimLookup, type OrderLookup, type ReconcileMarker, type RestoreWindow } from '../store/backup.js';
import { WINDOW_CLOSED_KEY } from './restore-window.js';
import { loadBatch } from '../claim/load.js';
import { recoverClaims } from '../claim/claim.js';
import type { Orphan } from '../claim/orphans.js';
import { describeMismatches, factsFor, mismatches, surelyBefore } from '../dispatch/order-match.js';
import { writeFileAtomic } from '../outbox/atomic-write.js';
import { ApiError, ApiResponseShapeError, ErrorCode, TopupError, coerceError } from '../kernel/errors.js';
import { JOURNAL_DAYS, JOURNAL_RECOVERY_KEY, journalOrdersWaiting, type JournalRecovery } from '../orders/journal.js';
import { roundCents } from '../kernel/money.js';

/** meta: the last reconcile after a restore (RestoreReport without its row lists), for status and doctor. */
export const LAST_RESTORE_KEY = 'restore.last';
/** meta: what adoptOrphans found at the start that must be reconciled (claim/orphans.ts verdicts). */
export const RESTORE_ORPHANS_KEY = 'restore.orphans';

/** The states looked up: unsent, in flight, in doubt. Placed rows carry an order id: the poller follows them. */
const LOOKED_UP: readonly RowState[] = ['pending', 'sending', 'resending', 'verifying', 'searching'];
const PAGE_SIZE = 50;
/** History pages read per account at most (10,000 orders): past it, absence proves nothing. */
const MAX_PAGES = 200;
const RETRY_MS = 15_000;

type ReconcileParts = Pick<Runtime, 'accounts' | 'accountOf' | 'batches' | 'clock' | 'config' | 'db' | 'entropy' | 'log' | 'meta' | 'owner' | 'ownerIsDead' | 'routing' | 'rows'>;

interface Sweep {
  /** Orders by lower-cased trxid. */
  byTrxid: Map<string, Order & { orderId: string }>;
  /** Every order listed carries its trxid: an order missing from the map is not there. */
  echoes: boolean;
  /** The pages read reach back before `since`. */
  reachedBack: boolean;
  /** Every order id listed (HistoryCache: a later read of the newest pages stops at one of them). */
  ids: Set<string>;
  /**
   * Orders listed without a trxid (a history that shows none: the real-world style). In such a
   * history a row is ruled out by its player instead (playerRuledOut), when the echo is proven.
   */
  untagged: (Order & { orderId: string })[];
  /** Whether this history echoes players as this home sent them (echoFaithful), once judged. */
  faithful?: boolean;
  /**
   * Elements of the pages read that could not be taken as orders (api/schemas.ts readHistory: two
   * trxid echoes that disagree, Order.trxidConflict, or no order id): any of them may be the order
   * looked for, so they prove nothing, and absence at this account is not proven (blindness).
   */
  skipped: number;
  /**
   * Why the pages read do not reach back (reachedBack false), in words that say what to check:
   * MAX_PAGES read, or a history that ended without listing the orders this home placed there
   * before `since` (a supplier that keeps only recent orders: cutOff).
   */
  short?: string;
}

export interface SettledRow {
  batch: string;
  line: number;
  trxid: string;
  account: string;
  orderId: string;
  status: string;
  how: 'own trxid' | 'moved trxid';
}

export interface PersonRow {
  batch: string;
  line: number;
  trxid: string | null;
  account: string;
  why: string;
}

export interface RestoreReport {
  at: number;
  marker: ReconcileMarker;
  /** Rows looked up (unsent, in flight or in doubt), and how many of them were left to be sent as the copy has them. */
  lookedUp: number;
  unchanged: number;
  /** Rows followed by the poller (placed in the copy). */
  placed: number;
  settled: SettledRow[];
  needsPerson: PersonRow[];
  /** Batch folders in jobs/ the copy did not know: claimed again, or reported (claim/orphans.ts). */
  orphans: { batch: string; verdict: string; detail: string }[];
  /** API orders the store did not know, accepted again from the journal (orders/journal.ts) before this reconcile. */
  apiOrders: JournalRecovery | null;
  /** The report file written (outbox/reports/). */
  file: string | null;
  /**
   * Per account read, the history elements the lookup could not take as orders (Sweep.skipped:
   * two trxid echoes that disagree, or no order id), with what they mean; absent when none.
   */
  skippedHistory?: SkippedHistory;
}

/** What a report says of the history elements skipped at each account (RestoreReport.skippedHistory). */
export interface SkippedHistory {
  byAccount: Record<string, number>;
  meaning: string;
}

const SKIPPED_MEANING = 'history elements the lookup could not take as orders (two trxid echoes that disagree, or no order id): they prove nothing; any of them may be a row\'s purchase, so a row not found at that account is not proven unbought there (it was held on its own account or sent to review, never sent elsewhere)';

function skippedWhy(n: number): string {
  return `${n} element(s) of its history could not be taken as orders (two trxid echoes that disagree, or no order id): they prove nothing, and the order looked for may be one of them`;
}

/** RestoreReport.skippedHistory from the histories read; undefined when nothing was skipped. */
function skippedOf(sweeps: ReadonlyMap<string, Sweep>): SkippedHistory | undefined {
  const byAccount: Record<string, number> = {};
  for (const [acct, s] of sweeps) if (s.skipped > 0) byAccount[acct] = s.skipped;
  return Object.keys(byAccount).length > 0 ? { byAccount, meaning: SKIPPED_MEANING } : undefined;
}

function skippedField(sweeps: ReadonlyMap<string, Sweep>): { skippedHistory?: SkippedHistory } {
  const k = skippedOf(sweeps);
  return k ? { skippedHistory: k } : {};
}

/** "main 2, second 1", for a log line or topup status. */
export function skippedText(k: SkippedHistory): string {
  return `${Object.entries(k.byAccount).map(([a, n]) => `${a} ${n}`).join(', ')} ${SKIPPED_MEANING}`;
}

/** Is this store a copy not yet reconciled? */
export function restorePending(meta: Pick<Runtime, 'meta'>['meta']): ReconcileMarker | null {
  return meta.getJson<ReconcileMarker>(RECONCILE_KEY) ?? null;
}

/** Remembers what adoptOrphans found, for the reconcile's report (only while a reconcile is due). */
export function noteOrphansForRestore(meta: Pick<Runtime, 'meta'>['meta'], orphans: readonly Orphan[]): void {
  if (!restorePending(meta)) return;
  const prev = meta.getJson<RestoreReport['orphans']>(RESTORE_ORPHANS_KEY) ?? [];
  const next = [...prev];
  for (const o of orphans) {
    if (o.verdict === 'finished' || o.verdict === 'empty') continue;
    if (!next.some((p) => p.batch === o.id)) next.push({ batch: o.id, verdict: o.verdict, detail: o.detail });
  }
  meta.setJson(RESTORE_ORPHANS_KEY, next);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Reads an account's order history, newest first, until it reaches back before `since` (or runs
 * out, or MAX_PAGES). Throws when the history cannot be read.
 *
 * "Runs out" is only what the supplier says: `hasMore: false`, or as many orders read as its
 * `total`, or (when it says neither) an empty page. A page shorter than asked is not the end: the
 * spec's pageSize is "max 50", and a supplier serving 20 with `hasMore: true` had the lookup stop
 * after one page and read a failed-over purchase 25 orders deep as "not bought" (an adversarial
 * review, twice). An empty page while the supplier says there is more, or a page that repeats the
 * one before (paging ignored), proves nothing: the sweep ends without reaching back, and the
 * caller holds what it cannot prove.
 */
async function sweep(rt: ReconcileParts, account: string, since: number, signal?: AbortSignal): Promise<Sweep> {
  const byTrxid = new Map<string, Order & { orderId: string }>();
  const ids = new Set<string>();
  const untagged: (Order & { orderId: string })[] = [];
  const anchors = anchorsOf(rt, account, since);
  let echoes = true;
  let reachedBack = false;
  let ended = false;
  let listed = 0;
  let pages = 0;
  let previousFirst: string | undefined;
  let listedAnchor = false;
  let skipped = 0;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const h = await historyPage(rt, account, page, signal);
    pages = page;
    skipped += h.skipped;
    const first = h.orders[0]?.orderId;
    if (page > 1 && first !== undefined && first === previousFirst) break; // the same page again: paging ignored
    previousFirst = first;
    // Skipped elements were listed too (readHistory counts them in the page's length): the page's
    // total is met by them, and they are reported, not read (Sweep.skipped).
    listed += h.orders.length + h.skipped;
    let anchored = false;
    for (const o of h.orders) {
      if (o.orderId === undefined) continue;
      ids.add(o.orderId);
      if (anchors.ids.has(o.orderId) || (o.trxid !== undefined && anchors.trxids.has(trxidKey(o.trxid)))) anchored = true;
      if (anchors.allIds.has(o.orderId) || (o.trxid !== undefined && anchors.allTrxids.has(trxidKey(o.trxid)))) listedAnchor = true;
      if (o.trxid === undefined || o.trxid.trim() === '') { echoes = false; untagged.push(o as Order & { orderId: string }); }
      else if (!byTrxid.has(trxidKey(o.trxid))) byTrxid.set(trxidKey(o.trxid), o as Order & { orderId: string });
    }
    const oldest = h.orders[h.orders.length - 1];
    // Past `since`: an order dated surely before it, or an order this home placed there before it
    // (its answer was recorded before `since`, so it was made before; everything older is listed
    // after it, newest first). The second also ends a history that shows no dates (the real-world
    // style) at the copy instead of at its end (trial s35, defect 2).
    if ((oldest !== undefined && surelyBefore(oldest, since)) || anchored) {
      reachedBack = true;
      break;
    }
    const saysMore = h.hasMore === true || (h.total !== undefined && listed < h.total);
    if (h.orders.length + h.skipped === 0) {
      // An empty page is the end only when nothing the supplier said promises more.
      reachedBack = !saysMore;
      ended = reachedBack;
      break;
    }
    const totalSaysMore = h.total !== undefined && listed < h.total;
    if (h.hasMore === false) {
      // The end, unless its own total disagrees (then nothing is proven).
      reachedBack = !totalSaysMore;
      ended = reachedBack;
      break;
    }
    if (h.hasMore === undefined && h.total !== undefined && !totalSaysMore) {
      reachedBack = true;
      ended = true;
      break;
    }
    // Otherwise the next page: more was promised, or nothing was said (the end is an empty page).
  }
  let short: string | undefined;
  if (!reachedBack && pages >= MAX_PAGES) {
    short = `its history was read for ${MAX_PAGES} pages (${listed} orders) without reaching back to ${iso(since)}, the most the lookup reads`;
  } else if (ended) {
    short = listedAnchor ? undefined : keptTooShort(rt, since, cutOff(anchors, since)) ?? undefined;
    if (short !== undefined) reachedBack = false;
  } else if (!reachedBack) {
    short = `its history could not be read back to ${iso(since)} (an empty page while more was promised, or the same page again)`;
  }
  return { byTrxid, echoes, reachedBack, ids, untagged, skipped, ...(short !== undefined ? { short } : {}) };
}

/** How many times the lookup reads one history page that was refused for the rate (429), or failed on the way (5xx, no answer, unreadable), before the account counts as not readable now. */
const PAGE_ATTEMPTS = 4;

/**
 * A page that failed on the way: a 5xx or no answer (ambiguous), or a body that cannot be read.
 * Reading a page changes nothing, so it is read again. Before, one such page ended the whole try
 * and the next one began again at page 1 of every account: with a busy history (other buyers'
 * orders, two a second) and one read in five failing, the pages back to the copy outgrew what a
 * try could read without a failure, the reconcile never finished and nothing was sent for hours
 * (the simulator: seed 3838, test/sim/found/restore-history-page-errors.json).
 */
const failedOnTheWay = (err: unknown): boolean =>
  err instanceof ApiResponseShapeError || (err instanceof ApiError && err.classification === 'ambiguous');

/**
 * One page of the account's history for the lookup. A 429 (retry-later) is waited out (its
 * Retry-After, at least a growing pause, at most 30 s) and the page read again: before, one 429
 * made the account "cannot be read" and the file's rows waited for the next try (trial s35,
 * defect 2: a one-row file waited 21 s; measured here 60 s).
 */
async function historyPage(rt: ReconcileParts, account: string, page: number, signal?: AbortSignal): Promise<Awaited<ReturnType<ReconcileParts['accounts'][number]['client']['history']>>> {
  const client = rt.accountOf(account).client;
  for (let attempt = 1; ; attempt++) {
    try {
      // `partial`: a page with elements no reader can take as orders is read, and they are counted
      // (Sweep.skipped, in the report and topup status) as proving nothing, never as absence:
      // refused whole, the account was "unreadable" and a first start's reconcile retried it for
      // ever, its report silent on why.
      return await client.history({ page, pageSize: PAGE_SIZE, partial: true }, { priority: Priority.poll, ...(signal ? { signal } : {}) });
    } catch (err) {
      const rateLimited = err instanceof ApiError && err.classification === 'retry-later';
      if ((!rateLimited && !failedOnTheWay(err)) || attempt >= PAGE_ATTEMPTS || signal?.aborted) throw err;
      const waitMs = Math.min(30_000, Math.max((rateLimited ? (err as ApiError).retryAfterMs : undefined) ?? 0, 1000 * 2 ** (attempt - 1)));
      rt.log.info({ account, page, attempt, waitMs, err: coerceError(err).message }, rateLimited
        ? 'restore lookup: the API said to wait (429); reading the history page again after it'
        : 'restore lookup: a history page failed on the way; reading it again');
      await rt.clock.sleep(waitMs, signal);
    }
  }
}

/** The orders this home placed at an account before `since`, newest first (at most ANCHORS_KEPT). */
interface Anchors {
  /** Orders recorded ANCHOR_MARGIN_MS before `since`: listed, the history reaches back past it. */
  ids: Set<string>;
  trxids: Set<string>;
  /** Every order recorded before `since`: a history that ends listing none of them was cut off. */
  allIds: Set<string>;
  allTrxids: Set<string>;
  newest: { orderId: string; at: number } | null;
}

/** How many of this home's older orders at an account are looked for in its history. */
const ANCHORS_KEPT = 1_000;

/**
 * How long before `since` an order of this home must have been recorded to mark the history as
 * reaching back past `since` (anchorsOf): far more than a supplier's date resolution (a second)
 * and the disorder of orders made in one second.
 */
const ANCHOR_MARGIN_MS = 5 * 60_000;

/**
 * This home's own orders at the account whose answer was recorded before `since` (rows.updated_at
 * is at or after the answer that gave the order id: the order was made before `since`). A history
 * that lists one of them reaches back past `since`; one that ends without listing any of them
 * does not (cutOff).
 */
function anchorsOf(rt: ReconcileParts, account: string, since: number): Anchors {
  const rows = rt.db.prepare(`SELECT order_id AS orderId, trxid, updated_at AS at FROM rows
    WHERE account = ? AND order_id IS NOT NULL AND updated_at < ? ORDER BY updated_at DESC LIMIT ${ANCHORS_KEPT}`).all(account, since) as { orderId: string; trxid: string | null; at: number }[];
  // The sweep stops only at an order recorded ANCHOR_MARGIN_MS before `since`: a supplier dates
  // orders to the second and lists those of one second in no promised order, so an order answered
  // just before the copy may be listed after one bought just after it (an adversarial review: the
  // anchor ended page 1, the row's purchase began page 2, the sweep stopped at page 1 and the row
  // was bought again). Every order before `since` still proves a cut-off history (cutOff).
  const stops = rows.filter((r) => r.at < since - ANCHOR_MARGIN_MS);
  return {
    ids: new Set(stops.map((r) => r.orderId)),
    trxids: new Set(stops.filter((r) => r.trxid !== null).map((r) => trxidKey(r.trxid!))),
    allIds: new Set(rows.map((r) => r.orderId)),
    allTrxids: new Set(rows.filter((r) => r.trxid !== null).map((r) => trxidKey(r.trxid!))),
    newest: rows[0] ? { orderId: rows[0].orderId, at: rows[0].at } : null,
  };
}

/**
 * Why a history the supplier says has ended does not reach back to `since`, or null when nothing
 * says so. The spec calls GET /history "recent orders" without saying how recent: a supplier that
 * keeps N days (or N orders) says `hasMore: false` at its cut-off, and a history read to that end
 * looks complete. A purchase made after the copy and before the cut-off is then absent, and
 * "absent" would read as "not bought" (money). This home knows orders it placed there before
 * `since` (anchorsOf): a history that ends without listing any of them was cut off after them;
 * its end proves nothing. With no such order known (an account first used after the copy) the
 * supplier's end is all there is (docs/backup.md, "Reading a history to its end").
 */
function cutOff(anchors: Anchors, since: number): string | null {
  if (anchors.newest === null) return null;
  return `its history ended without listing order ${anchors.newest.orderId}, which this home placed there before ${iso(since)} (the supplier keeps only recent orders: it does not reach back to the copy)`;
}

const DAY_MS = 86_400_000;
/**
 * The margin on the safe side, one whole day: a supplier's "30 days" may be 30 calendar days on
 * its own clock, counted from a midnight in its time zone (UTC+7 for one real supplier), so it may
 * keep up to almost a day less than 30×24 h. An hour was not enough: a copy 29.5 days old was
 * trusted as within the history. A copy within the last day of what the supplier says it keeps
 * goes to review (more review, never a purchase made twice); under a day kept, every copy does.
 */
const KEPT_MARGIN_MS = DAY_MS;

/**
 * cutOff's verdict, with what the reseller said of the supplier (TOPUP_SUPPLIER_HISTORY_DAYS): a
 * copy older than the days the supplier keeps is before the start of any history it serves, so an
 * end read there is its cut-off, also where this home knows no order placed there before the copy
 * (an account first used after it, which cutOff must trust). The reason says so, for the person
 * who decides the row. Not set, or a copy within those days: cutOff's verdict alone.
 */
export function keptTooShort(rt: Pick<ReconcileParts, 'clock' | 'config'>, since: number, cut: string | null): string | null {
  const days = rt.config.backup.supplierHistoryDays;
  if (days === null) return cut;
  if (since >= rt.clock.now() - days * DAY_MS + KEPT_MARGIN_MS) return cut;
  const older = `the copy (${iso(since)}) is older than the ${days} day(s) of orders the supplier keeps (TOPUP_SUPPLIER_HISTORY_DAYS=${days}): its history cannot list a purchase made after the copy and more than ${days} day(s) ago`;
  return cut === null ? older : `${older}; ${cut}`;
}

/**
 * Why an account's history cannot tell whether a row was bought there after the copy, or null when
 * it can (docs/backup.md, "Histories without trxids"). An order without a trxid cannot be this
 * home's (every send carries one): among orders that carry theirs it is a website purchase, not a
 * blind spot (trial s34: one website order held every new file of a two-account home for the 8-day
 * window). Only a history none of whose orders carries a trxid cannot be searched.
 */
function blindness(s: Sweep): string | null {
  if (!s.reachedBack) return s.short ?? 'its history does not reach back to the copy';
  if (s.skipped > 0) return skippedWhy(s.skipped);
  if (s.echoes || s.byTrxid.size > 0) return null;
  return 'none of the orders in its history shows a trxid';
}

/**
 * Whether a history that shows no trxid at all (read back to the copy) still proves the row was not
 * bought there: no order listed is for its player (trial s35, defect 1: with the real-world style's
 * history, every file of a two-account home went to review for the 8-day window, retries too).
 *
 * MONEY SAFETY. A purchase of this row at that account is an order for its player, and the history
 * lists every order back to the copy; so the row is ruled out only when every order listed names a
 * player, none of them is its player (the same comparison that tells a replay from another
 * purchase: dispatch/order-match.ts mismatches), and the history is proven to echo players as this
 * home sent them (echoFaithful: its own earlier orders there, found by order id, echo their
 * players). A history that masks, reformats or leaves out players, or where no order of this home
 * can be found to prove it, rules nothing out: the row stays held as before.
 */
function playerRuledOut(rt: ReconcileParts, row: Row, account: string, s: Sweep): boolean {
  if (!s.reachedBack || s.echoes || s.byTrxid.size > 0) return false; // not the no-trxid blindness
  if (row.request?.userId === undefined || row.request.userId.trim() === '') return false; // keys, cards: no player to tell by
  if (!echoFaithful(rt, account, s)) return false;
  const asPlayer = { ...row, trxid: null, productId: null, slug: null, packName: null };
  return s.untagged.every((o) => o.userId !== undefined && o.userId.trim() !== '' && mismatches(asPlayer, o).some((m) => m.field === 'userId' || m.field === 'zoneId'));
}

/**
 * Whether the account's history echoes players as this home sent them: some of the orders it lists
 * are this home's own (the store holds their order ids at that account), and each of those echoes
 * the player that was sent. Judged once per read (Sweep.faithful).
 */
function echoFaithful(rt: ReconcileParts, account: string, s: Sweep): boolean {
  if (s.faithful !== undefined) return s.faithful;
  const q = rt.db.prepare('SELECT request_json FROM rows WHERE order_id = ? AND account = ? AND request_json IS NOT NULL');
  let proven = 0;
  let faithful = true;
  for (const o of s.untagged) {
    const r = q.get(o.orderId, account) as { request_json: string } | undefined;
    if (!r) continue;
    const sent = (JSON.parse(r.request_json) as { userId?: string; zoneId?: string });
    if (sent.userId === undefined) continue;
    if (o.userId === undefined || mismatches({ request: sent, trxid: null, productId: null, slug: null, packName: null } as unknown as Row, o).some((m) => m.field === 'userId' || m.field === 'zoneId')) {
      faithful = false;
      break;
    }
    proven++;
  }
  s.faithful = faithful && proven > 0;
  return s.faithful;
}

/**
 * Runs the reconcile if the store says it is a copy not yet reconciled; returns its report, or null
 * when there was nothing to do. Resolves only once every row has been looked up and settled (it
 * tries again every RETRY_MS while an account cannot be read), or when `stopping()` says so (then
 * with null, the marker kept: the next start reconciles). The caller sends nothing before it resolves.
 */
export interface ReconcileOptions {
  signal?: AbortSignal;
  stopping?: () => boolean;
  /**
   * Accepts again the journal's API orders the store lacks (orders/journal.ts recoverFromJournal;
   * the daemon's, which has the order desk). Called at every try: an order that could not be priced
   * because the supplier did not answer is accepted once it does, before anything is sent.
   */
  recoverJournal?: () => Promise<unknown>;
}

export async function reconcileIfRestored(rt: ReconcileParts, opts: ReconcileOptions = {}): Promise<RestoreReport | null> {
  const marker = restorePending(rt.meta);
  if (!marker) return null;
  rt.log.warn({ restore: marker.detail, copyTakenAt: marker.copy ? new Date(marker.copy.takenAt).toISOString() : undefined },
    'this store is a restored copy: every unsent, in-flight or in-doubt row is looked up at every account before anything is sent');
  for (;;) {
    if (opts.stopping?.()) return null;
    // Another process of this home (a second daemon) may have ended the reconcile while this one
    // waited (for the batches it held, for an account): its report says what it did, and the rows
    // it held were settled under its lease. Before, this loop tried again with the marker it read
    // at its start, for ever, and this daemon never sent anything (the simulator's `restore`, seed 2:
    // "another live process holds batches of this home" every 15 s for 33 simulated minutes).
    if (restorePending(rt.meta) === null) {
      rt.log.info('reconciled after the restore by another process of this home; sending starts now');
      return null;
    }
    try {
      return await reconcileOnce(rt, marker, opts);
    } catch (err) {
      rt.log.warn({ err: coerceError(err).message, againInMs: RETRY_MS }, 'reconcile after the restore could not finish (nothing is sent until it does); trying again');
    }
    try {
      await rt.clock.sleep(RETRY_MS, opts.signal);
    } catch {
      return null;
    }
  }
}

async function reconcileOnce(rt: ReconcileParts, marker: ReconcileMarker, opts: ReconcileOptions): Promise<RestoreReport> {
  const { signal } = opts;
  const now = rt.clock.now();
  // The journal's API orders first: a row not in the store is not looked up, and once the marker
  // is gone it would never be (adv9: recovery tried once while the supplier was down). While any
  // waits for the supplier to answer, this try ends here and the next one (RETRY_MS) accepts again.
  if (opts.recoverJournal) await opts.recoverJournal();
  const waiting = journalOrdersWaiting(rt.meta.getJson<JournalRecovery>(JOURNAL_RECOVERY_KEY));
  if (waiting.length > 0) {
    throw new Error(`${waiting.length} API order(s) of the journal (${waiting.slice(0, 3).map((w) => w.trxid).join(', ')}) cannot be accepted again yet: ${waiting[0]!.why}`);
  }
  // Claims left half-done, then every unfinished batch under this process's lease, and the claimed
  // ones (files claimed after the copy was taken, adopted from jobs/) loaded: their rows, with the
  // trxids their bytes give, are looked up like the copy's own.
  await recoverClaims(rt);
  for (const b of rt.batches.unfinished()) {
    if (!rt.batches.acquire(b.id, rt.owner, rt.clock.now(), LEASE_MS) && b.owner !== null && rt.ownerIsDead(b.owner)) {
      rt.batches.takeOver(b.id, rt.owner, b.owner, rt.clock.now(), LEASE_MS);
    }
  }
  for (const b of rt.batches.ownedBy(rt.owner)) {
    if (b.state !== 'claimed') continue;
    const outcome = await loadBatch(rt, b);
    if (!outcome.loaded && outcome.reason === 'catalog') throw new Error(`batch ${b.id} cannot be loaded yet: ${outcome.message}`);
  }
  const mine = rt.batches.ownedBy(rt.owner);
  if (mine.length < rt.batches.unfinished().length) throw new Error('another live process holds batches of this home: reconcile waits for it');
  // The rows looked up: collected again after every sweep (below), so this is a `let`.
  const collect = (): Row[] => rt.batches.ownedBy(rt.owner).flatMap((b) => rt.rows.inStates(b.id, LOOKED_UP));
  let rows: Row[] = collect();
  const placed = mine.reduce((n, b) => n + rt.rows.inStates(b.id, ['processing', 'unseen']).length, 0);

  // How far back the ledgers must be read: before the copy was taken, and before the first send of
  // any row looked up (an order made by a send the copy knows of, whose answer it did not record).
  // A store marked by the home's mark file (a hand copy) knows when it last ran (markGeneration);
  // a deleted store knows nothing: its rows came back from jobs/ and the journal, and the world
  // moved on from when they were first claimed or accepted (adv9: a deleted store read history back
  // only 15 h from now, missed a failover purchase two days old and bought the order again).
  const takenAt = marker.copy?.takenAt ?? marker.since ?? now;
  const apiRecovered = rt.meta.getJson<JournalRecovery>(JOURNAL_RECOVERY_KEY);
  // Orders recovered from the journal into a store that was lost: read back over the whole span
  // the journal keeps (JOURNAL_DAYS), not only to the oldest entry: the entry is dated by our
  // clock, the purchase a failover made (under a moved trxid) by the supplier's, and the fillers
  // of a busy key in between must not stop the reading early (adv9: 55 newer orders).
  const lost = marker.copy === null && marker.since === undefined;
  const journalFloor = apiRecovered && apiRecovered.recovered.length > 0
    ? Math.min(apiRecovered.oldestAt ?? now, lost ? now - JOURNAL_DAYS * 86_400_000 : now)
    : takenAt;
  const floor = Math.min(takenAt, journalFloor);
  const sinceOf = (list: readonly Row[]): number => {
    const created = new Map(rt.batches.ownedBy(rt.owner).map((b) => [b.id, b.createdAt]));
    // (A loop, not Math.min(...rows): a 100,000-row batch would overflow the call's arguments.)
    return list.reduce((m, r) => {
      let t = Math.min(m, r.firstSentAt ?? r.lastSentAt ?? floor);
      // A batch the store did not have when it was lost or copied (claimed again from jobs/) may
      // have been sent from since its first claim.
      const c = created.get(r.batchId);
      if (c !== undefined && lost) t = Math.min(t, c);
      return t;
    }, floor);
  };
  // The order API is open during this reconcile (a shop's checkout): an order accepted while the
  // ledgers are read is a row this list did not have; if it is a resend of an order bought (or
  // failed over and bought) before the loss, it must be looked up too, or it would be sent as
  // soon as the marker goes (an adversarial attack: a resend racing the first start). So after
  // each reading the rows are collected again, and from there to the marker's removal nothing
  // awaits (settleRows, the report and the last transaction are synchronous): no acceptance can
  // slip in between (the desk's group commit runs on this thread, from a later macrotask). A row
  // that came in is decided against the ledgers just read: nothing was sent by this home since
  // (the loop has not started), so they hold every purchase it could have, back to `since`; when
  // it needs them read further back (or none were read yet), they are read again.
  let since = sinceOf(rows);
  let sweeps = new Map<string, Sweep>();
  let sweptSince = Infinity;
  for (;;) {
    if (rows.length > 0 && since < sweptSince) {
      sweeps = new Map<string, Sweep>();
      for (const account of rt.accounts) sweeps.set(account.id, await sweep(rt, account.id, since, signal));
      sweptSince = since;
    }
    rows = collect();
    since = sinceOf(rows);
    if (rows.length === 0 || since >= sweptSince) break;
  }

  // An account taken out of accounts.toml after the copy was taken may have bought rows after it
  // and cannot be read: the rows that could have moved there go to review (store/backup.ts removedSince).
  const { settled, needsPerson, unchanged } = settleRows(rt, rows, sweeps, removedSince(rt.db, rt.accounts.map((a) => a.id), since));

  // Last, in one transaction that first takes the store's write lock: the marker goes, and with it
  // the gate (a kill before the commit reconciles again). Two daemons of one home both reconcile a
  // copy whose batches neither holds yet; only the first to commit ends it. The second finds the
  // marker gone and writes nothing: before, it wrote its report (the orphans and journal failures
  // the first had read and cleared missing) over the first's, same file name and `restore.last`,
  // and the `submit --again` folder that needed a person was reported nowhere (the simulator's
  // `restore`, seed 2 #58). What needs a person is read inside the same transaction, so the report
  // that ends the reconcile holds every orphan any start noted before it.
  const report = rt.db.transaction((): RestoreReport | null => {
    if (restorePending(rt.meta) === null) return null;
    const orphans = rt.meta.getJson<RestoreReport['orphans']>(RESTORE_ORPHANS_KEY) ?? [];
    for (const o of orphans) {
      if (o.verdict === 'new trxids' || o.verdict === 'submitted' || o.verdict === 'changed') {
        needsPerson.push({ batch: o.batch, line: 0, trxid: null, account: '', why: o.detail });
      }
    }
    const apiOrders = rt.meta.getJson<JournalRecovery>(JOURNAL_RECOVERY_KEY) ?? null;
    for (const f of (apiOrders?.failed ?? []).filter((x) => x.transient !== true)) needsPerson.push({ batch: '', line: 0, trxid: f.trxid, account: '', why: `API order accepted before the store was lost, not accepted again: ${f.why}` });
    const r: RestoreReport = { at: rt.clock.now(), marker, lookedUp: rows.length, unchanged, placed, settled, needsPerson, orphans, apiOrders, file: null, ...skippedField(sweeps) };
    // Written before the commit: a kill between the two leaves the marker, and the next start
    // writes a report again (under a name of its own).
    r.file = writeReport(rt, r);
    // The window after a restore (store/backup.ts RestoreWindow): the operator re-drops the day's
    // files, and a file claimed after the copy (or a lost store) was never known here, so this look
    // never reached its rows; claimed in the window, its rows are looked up as these were (lookUpClaims).
    const window: RestoreWindow | null = {
      since: lost ? Math.min(since, sweptSince, now - JOURNAL_DAYS * 86_400_000) : Math.min(since, sweptSince),
      until: now + JOURNAL_DAYS * 86_400_000,
      detail: marker.detail,
    };
    rt.meta.setJson(RESTORE_WINDOW_KEY, window);
    // The histories just read are the window's (HistoryCache): its lookups read an account again
    // only to reach further back. Readings kept by an earlier window (a copy taken in one) go.
    rt.db.prepare("DELETE FROM meta WHERE key >= ? AND key < ?").run(HISTORY_KEPT_PREFIX, `${HISTORY_KEPT_PREFIX}\uffff`);
    if (sweptSince !== Infinity) for (const [acct, s] of sweeps) keep(rt, acct, sweptSince, window.until, s);
    rt.meta.setJson(LAST_RESTORE_KEY, { ...r, settled: r.settled.length, needsPerson: r.needsPerson.length, people: r.needsPerson.slice(0, 20) });
    rt.meta.delete(RESTORE_ORPHANS_KEY);
    rt.meta.delete(JOURNAL_RECOVERY_KEY);
    rt.meta.delete(RECONCILE_KEY);
    return r;
  }).immediate();
  if (report === null) {
    // What this process settled itself (rows of batches it held) is reported in a file of its own.
    const own: RestoreReport = { at: rt.clock.now(), marker, lookedUp: rows.length, unchanged, placed, settled, needsPerson, orphans: [], apiOrders: null, file: null, ...skippedField(sweeps) };
    if (settled.length > 0 || needsPerson.length > 0) own.file = writeReport(rt, own);
    rt.log.info({ lookedUp: rows.length, settled: settled.length, needsPerson: needsPerson.length, unchanged, report: own.file }, 'reconciled after the restore: another process of this home ended the reconcile first (its report says what else needs a person); sending starts now');
    return own;
  }
  rt.log.warn(
    { lookedUp: rows.length, settled: settled.length, needsPerson: needsPerson.length, unchanged, placed, report: report.file, skippedHistory: report.skippedHistory?.byAccount },
    `reconciled after the restore: ${settled.length} row(s) settled from the suppliers, ${needsPerson.length} need a person, ${unchanged} go on as the copy has them${report.skippedHistory ? `; skipped: ${skippedText(report.skippedHistory)}` : ''}; sending starts now`,
  );
  return report;
}

/** Each row looked up in the sweeps and settled (one transaction each); what was settled, what needs a person, how many go on as they are. */
function settleRows(rt: ReconcileParts, rows: readonly Row[], sweeps: Map<string, Sweep>, unreadable: ReadonlyMap<string, string> = new Map()): { settled: SettledRow[]; needsPerson: PersonRow[]; unchanged: number } {
  const settled: SettledRow[] = [];
  const needsPerson: PersonRow[] = [];
  let unchanged = 0;
  const aliases = formerNames(rt.db);
  const a = (): { owner: string; now: number } => ({ owner: rt.owner, now: rt.clock.now() });
  for (const row of rows) {
    const verdict = decide(rt, row, sweeps, unreadable, aliases);
    if (verdict.kind === 'send as is') {
      unchanged++;
      // Pinned before anything of it is sent (the gate, the claim mark or the order mark, is still
      // there): a kill before this commit looks it up again, after it the store refuses its move.
      if (verdict.hold !== undefined && !rt.rows.holdOnOwnAccount(row.batchId, row.idx, a(), `after a restore: kept on ${row.account}, which cannot say whether it bought trxid ${row.trxid} after the copy (${verdict.hold}); sent there, a purchase is met as a replay; never moved to another account`)) {
        throw new Error(`row ${row.batchId}:${row.line} moved on while it was settled`);
      }
      continue;
    }
    if (verdict.kind === 'person') {
      if (rt.rows.restoredUnknown(row.batchId, row.idx, a(), `REVIEW: after a restore: ${verdict.why}`)) {
        needsPerson.push({ batch: row.batchId, line: row.line, trxid: row.trxid, account: row.account, why: verdict.why });
      }
      continue;
    }
    const { order, account, how } = verdict;
    const { facts } = factsFor(row, order);
    const answer = auditCopy({ route: 'GET /history', status: 200, at: rt.clock.now(), body: order.raw });
    const note = how === 'own trxid'
      ? `found after a restore: order ${order.orderId} under its trxid ${row.trxid} at ${account} (made after the copy was taken)`
      : `found after a restore: it had moved to ${account} and was bought there as ${order.trxid} (order ${order.orderId}); never sent on ${row.account} again`;
    let ok: boolean;
    if (how === 'own trxid') {
      ok = rt.rows.restoredFound(row.batchId, row.idx, a(), facts, rt.clock.now() + rt.config.pollIntervalMs, note, answer);
    } else {
      // The move and the order in one transaction: the row is never left on the new account unsent.
      ok = rt.db.transaction(() => moveTo(rt, row, account, order, a()) && rt.rows.restoredFound(row.batchId, row.idx, a(), facts, rt.clock.now() + rt.config.pollIntervalMs, note, answer))();
    }
    if (ok) settled.push({ batch: row.batchId, line: row.line, trxid: order.trxid ?? row.trxid ?? '', account, orderId: order.orderId, status: facts.status, how });
    else throw new Error(`row ${row.batchId}:${row.line} moved on while it was settled`);
  }

  return { settled, needsPerson, unchanged };
}

/**
 * Batches claimed in the window after a restore (store/backup.ts markClaimInRestoreWindow), run by
 * this process and loaded: their rows looked up at every account under their own trxid and the
 * trxids a move gives, settled from what the suppliers say, then their marks removed (after which
 * the store lets their intents through). The copy never knew these files: a re-dropped file's rows
 * that had failed over were bought on another account as `<trxid>-<account>` (an adversarial review:
 * a re-drop after a restore bought 3 of 3 rows a second time on main).
 *
 * Every account the mark names is looked up, not only those configured now: an account taken out
 * of accounts.toml after the restore may have bought the rows (a second review: `second` removed,
 * the file dropped again, both rows bought again on `main`). An account that cannot be read (no
 * longer configured, its key refused, unreachable) holds the rows of the batch that could have
 * been bought there, one by one (the batch's mark becomes per-row marks, the cause written on each;
 * status and doctor show them), and lookUpOrders tries them again; once they have waited
 * TOPUP_RESTORE_LOOKUP_WAIT they go to review (edge restored-unknown, the account and what to do in
 * their why). The batch's other rows are settled or sent at once. Logs (does not throw) when rows
 * were held.
 */
export async function lookUpClaims(rt: ReconcileParts, signal?: AbortSignal, cache: HistoryCache = new HistoryCache()): Promise<RestoreReport | null> {
  // No mark (the usual case, asked every step): one seek, not a read of every batch this process holds.
  const marks = claimLookups(rt.db);
  if (marks.length === 0) return null;
  const owned = new Map(rt.batches.ownedBy(rt.owner).map((b) => [b.id, b]));
  const due = marks.filter((c) => owned.get(c.batchId)?.state === 'open');
  if (due.length === 0) {
    // Marks of batches that ended without their lookup (cancelled, refused, duplicates) hold nothing.
    if (dropSpentClaimMarks(rt.db) > 0) rt.log.info('restore lookup: marks of batches that ended without sending were removed');
    return null;
  }
  const now = rt.clock.now();
  const configured = new Set(rt.accounts.map((a) => a.id));
  // Marks of earlier versions name no accounts: the configured ones. An account renamed since the
  // claim (same URL and key, store/account-identity.ts) is looked up under its name now.
  const renamedTo = currentNames(rt.db, configured);
  for (const c of due) if (c.accounts) c.accounts = c.accounts.map((a) => renamedTo(a));
  const wanted = new Set<string>(configured);
  for (const c of due) for (const a of c.accounts ?? []) wanted.add(a);
  const rowsOf = (ids: readonly ClaimLookup[]): Row[] => ids.flatMap((c) => rt.rows.inStates(c.batchId, LOOKED_UP));
  const since = Math.min(...due.map((c) => c.since));
  const sweeps = new Map<string, Sweep>();
  const unreadable = new Map<string, string>();
  if (rowsOf(due).length > 0) {
    for (const account of wanted) {
      if (!configured.has(account)) {
        unreadable.set(account, notReadableWhy(account));
        continue;
      }
      try {
        sweeps.set(account, await cache.read(rt, account, since, signal));
      } catch (err) {
        if (signal?.aborted) throw err;
        unreadable.set(account, `account "${account}" cannot be read: ${unreadableWhy(err)}`);
      }
    }
  }
  // Which batches wait for an account still, and which have waited long enough (their rows that
  // could have been bought there go to review now).
  const waitMs = rt.config.backup.restoreLookupWaitMs;
  const ready: ClaimLookup[] = [];
  const waiting: ClaimLookup[] = [];
  for (const c of due) {
    const relevant = new Map([...unreadable].filter(([a]) => (c.accounts ?? [...configured]).includes(a)));
    if (relevant.size === 0 || now >= (c.blocked?.since ?? now) + waitMs) ready.push(c);
    else waiting.push(c);
  }
  // A batch waiting for an account is held row by row, not whole (trial s34: with one account's
  // key refused, every new file waited 30 min and then went to review, the rows pinned to the
  // account that was read, and those found bought there, too). Only a row whose verdict rests on
  // an account that cannot be read waits (decide: `waitsFor`): a row not found at the accounts
  // read, not pinned, that routing or a move could have placed on that account before the loss
  // (bought there as its trxid or `<trxid>-<account>`; nothing read elsewhere rules that out).
  // Every other row is decided now from the histories read: found bought → settled, never sent;
  // pinned to an account that was read and not found there → sent (a resend meets its purchase
  // as a replay). Each held row gets the per-row mark API orders use (ORDER_LOOKUP_PREFIX, with
  // its line and the batch's wait so far); lookUpOrders then waits, settles, sends or reviews it.
  let heldRows = 0;
  if (waiting.length > 0) {
    const aliases = formerNames(rt.db);
    for (const c of waiting) {
      const rows = rowsOf([c]);
      const verdicts = rows.map((row) => ({ row, verdict: decide(rt, row, sweeps, unreadable, aliases) }));
      const hold = verdicts.filter((v) => v.verdict.kind === 'person' && v.verdict.waitsFor !== undefined).map((v) => v.row);
      const held = new Set(hold.map((r) => r.idx));
      const decidable = rows.filter((r) => !held.has(r.idx));
      const blocked = { since: c.blocked?.since ?? now, at: now, accounts: Object.fromEntries(unreadable) };
      if (decidable.length > 0) {
        // Settled one row per transaction under the batch's mark (nothing of it is sent until the
        // mark goes, below); a kill in between decides the rest again at the next try.
        const { settled, needsPerson, unchanged } = settleRows(rt, decidable, sweeps, unreadable);
        if (settled.length > 0 || needsPerson.length > 0) {
          const marker: ReconcileMarker = { kind: 'claim', copy: null, restoredAt: null, from: null, since: c.since, detail: c.detail };
          const part: RestoreReport = { at: rt.clock.now(), marker, lookedUp: decidable.length, unchanged, placed: 0, settled, needsPerson, orphans: [], apiOrders: null, file: null, ...skippedField(sweeps) };
          part.file = writeReport(rt, part);
        }
        rt.log.warn(
          { batch: c.batchId, decided: decidable.length, settled: settled.length, needsPerson: needsPerson.length, held: hold.length, unreadable: Object.fromEntries(unreadable) },
          `batch ${c.batchId} claimed after a restore: ${settled.length} row(s) settled from the accounts read, ${unchanged} sent now, ${hold.length} wait for ${[...unreadable.keys()].join(', ')} (they could have been bought there)`,
        );
      }
      // The row marks and the batch mark's removal in one transaction: no moment where a held row
      // is unmarked. Nothing awaited since the histories were read.
      rt.db.transaction(() => {
        holdRowsInRestoreWindow(rt.db, hold.map((r) => ({ batchId: r.batchId, idx: r.idx, trxid: r.trxid!, line: r.line, at: now, since: c.since, accounts: c.accounts ?? [...configured], blocked })));
        rt.meta.delete(CLAIM_LOOKUP_PREFIX + c.batchId);
      })();
      heldRows += hold.length;
    }
  }
  let report: RestoreReport | null = null;
  if (ready.length > 0) {
    const rows = rowsOf(ready);
    const { settled, needsPerson, unchanged } = settleRows(rt, rows, sweeps, unreadable);
    const marker: ReconcileMarker = { kind: 'claim', copy: null, restoredAt: null, from: null, since, detail: ready.map((c) => c.detail).join('; ') };
    report = { at: rt.clock.now(), marker, lookedUp: rows.length, unchanged, placed: 0, settled, needsPerson, orphans: [], apiOrders: null, file: null, ...skippedField(sweeps) };
    report.file = writeReport(rt, report);
    rt.db.transaction(() => {
      for (const c of ready) rt.meta.delete(CLAIM_LOOKUP_PREFIX + c.batchId);
    })();
    rt.log.warn(
      { batches: ready.map((c) => c.batchId), lookedUp: rows.length, settled: settled.length, needsPerson: needsPerson.length, report: report.file, unreadable: Object.fromEntries(unreadable) },
      `looked up ${rows.length} row(s) of file(s) claimed after a restore: ${settled.length} settled from the suppliers (bought before), ${needsPerson.length} need a person${unreadable.size > 0 ? ` (could not be looked up at ${[...unreadable.keys()].join(', ')}: see topup review)` : ''}, ${unchanged} are sent now`,
    );
  }
  if (heldRows > 0) {
    // Said, not thrown: the batches' marks are gone (their held rows are lookUpOrders' now), and a
    // throw would put off the lookup of the next file claimed by the runner's retry delay.
    const first = waiting.reduce((a, b) => ((a.blocked?.since ?? now) <= (b.blocked?.since ?? now) ? a : b));
    const until = (first.blocked?.since ?? now) + waitMs;
    rt.log.warn(
      { batches: waiting.map((c) => c.batchId), held: heldRows, unreadable: Object.fromEntries(unreadable) },
      `${heldRows} row(s) of file(s) claimed after a restore (${waiting.map((c) => c.batchId).join(', ')}) wait for their lookup: ${[...unreadable.values()].join('; ')}; none of them is sent (the rest of the files are); they go to review at ${new Date(until).toISOString()} (TOPUP_RESTORE_LOOKUP_WAIT) unless it can be read before`,
    );
  }
  return report;
}

/** meta prefix: an account's history as read in the window after a restore (HistoryCache), one key per account. */
export const HISTORY_KEPT_PREFIX = 'restore.history:';

/** What HistoryCache keeps in the store for an account. */
interface KeptHistory {
  /** RestoreWindow.until of the window it was read in: a history kept by another window (a copy taken during one) is never used. */
  window: number;
  /** The account's identity when it was read (its origin and key fingerprint): another endpoint is read again. */
  identity: string;
  /** How far back it was read (the `since` it was read for), and when. */
  since: number;
  readAt: number;
  reachedBack: boolean;
  echoes: boolean;
  short?: string;
  /** Sweep.skipped (absent in readings kept by earlier versions, which refused such pages: 0). */
  skipped?: number;
  orders: (Order & { orderId: string })[];
}

/**
 * Each account's history as read in the window after a restore, kept in the store (meta
 * HISTORY_KEPT_PREFIX) and in memory, so that the lookups of the window (files claimed, API
 * orders, rows held one by one) read each account once per window, not once per file (trial s35,
 * defect 2: every file read every account's history back to the copy first; a one-row file waited
 * 21 s on the rate limit, and the pages grew with the orders made since the copy, for 8 days).
 *
 * MONEY SAFETY: why one reading is enough. What a row claimed (or an order accepted) in the window
 * must not be bought again over is a purchase made after the copy was taken and before the store
 * was lost: that is what the lost store knew and the copy does not. A reading taken after the
 * restore holds every such purchase (back to `since`; sweep). What any account bought after that
 * reading was bought by this home's restored store, which records its trxids before any send: a
 * row with such a trxid is a repeat at its claim, never a lookup. So orders made after the reading
 * cannot matter, and the reading is not repeated. The reconcile's own reading (before its marker
 * goes, nothing sent yet) is kept the same way (keep). A reading is used only for the window it
 * was read in (a copy taken during a window carries that window's readings: they are older than
 * the copy, and a restore of it opens another window), for the account's endpoint and key it was
 * read from, and when it reaches back as far as asked; otherwise the account is read again.
 * A reading that does not reach back (MAX_PAGES, a history cut off: sweep) is kept too: reading it
 * again shows no more, and the rows it cannot clear go to a person.
 */
export class HistoryCache {
  readonly #kept = new Map<string, KeptHistory & { sweep: Sweep }>();

  /** Drops the readings held in memory (their window is over: ops/restore-history-prune.ts). */
  forget(): void {
    this.#kept.clear();
  }

  /** The account's history back to `since`, from the store when this window read it already. */
  async read(rt: ReconcileParts, account: string, since: number, signal?: AbortSignal): Promise<Sweep> {
    const window = rt.meta.getJson<RestoreWindow>(RESTORE_WINDOW_KEY);
    const identity = identityOf(rt, account);
    const usable = (k: KeptHistory | undefined): k is KeptHistory => k !== undefined && window !== undefined && window !== null
      && k.window === window.until && k.identity === identity && k.since <= since;
    const mem = this.#kept.get(account);
    if (usable(mem)) return mem.sweep;
    const stored = rt.meta.getJson<KeptHistory>(HISTORY_KEPT_PREFIX + account);
    if (usable(stored)) {
      const s = sweepOf(stored);
      this.#kept.set(account, { ...stored, sweep: s });
      return s;
    }
    const fresh = await sweep(rt, account, since, signal);
    if (window) keep(rt, account, since, window.until, fresh);
    return fresh;
  }
}

/** The account's endpoint and key as the store knows them (store/account-identity.ts), never the key itself. */
function identityOf(rt: ReconcileParts, account: string): string {
  const r = rt.db.prepare('SELECT origin, key_fp AS keyFp FROM account_identities WHERE name = ?').get(account) as { origin: string; keyFp: string } | undefined;
  return r ? `${r.origin} ${r.keyFp}` : rt.accountOf(account).apiUrl;
}

function sweepOf(k: KeptHistory): Sweep {
  const byTrxid = new Map<string, Order & { orderId: string }>();
  const untagged: (Order & { orderId: string })[] = [];
  for (const o of k.orders) {
    if (o.trxid === undefined || o.trxid.trim() === '') untagged.push(o);
    else if (!byTrxid.has(trxidKey(o.trxid))) byTrxid.set(trxidKey(o.trxid), o);
  }
  return { byTrxid, echoes: k.echoes, reachedBack: k.reachedBack, ids: new Set(k.orders.map((o) => o.orderId)), untagged, skipped: k.skipped ?? 0, ...(k.short !== undefined ? { short: k.short } : {}) };
}

/** Keeps a reading in the store for the window `until` (HistoryCache). Over any reading of the account kept before. */
function keep(rt: ReconcileParts, account: string, since: number, until: number, s: Sweep): void {
  const orders = [...s.byTrxid.values(), ...s.untagged];
  const k: KeptHistory = { window: until, identity: identityOf(rt, account), since, readAt: rt.clock.now(), reachedBack: s.reachedBack, echoes: s.echoes, orders, skipped: s.skipped, ...(s.short !== undefined ? { short: s.short } : {}) };
  rt.meta.setJson(HISTORY_KEPT_PREFIX + account, k);
}

/**
 * API orders accepted in the window after a restore (store/backup.ts markOrderInRestoreWindow), in
 * batches this process runs: each looked up at every account the mark names, under its own trxid
 * and the trxids a move gives, back to the window's start, and decided as a restored row is
 * (decide): found bought on another account under a moved trxid → moved there and settled from
 * that purchase, never sent; found under its own trxid → settled; found in two places, another
 * purchase, or an account that cannot say → review; found nowhere with every account able to say
 * so → its mark goes and it is sent. An account that cannot be read (its key refused,
 * unreachable, taken out of accounts.toml) holds the orders that could have been bought there;
 * once they have waited TOPUP_RESTORE_LOOKUP_WAIT they go to review, never sent blind.
 *
 * Runs beside the runner's loop (it does not hold other batches' sends, nor any 202): the 202 was
 * answered when the order and its mark were committed together. Only the marks read at its start
 * are decided; an order accepted while the histories are read waits for the next round (it may
 * name an account this round did not read). Between the last read and the removal of the marks
 * nothing awaits: no send of these rows, nor any acceptance, can come in between. Returns what it
 * decided, or null when nothing was due; throws OrderLookupWaiting while some order waits for an
 * account, after deciding the others.
 */
export async function lookUpOrders(rt: ReconcileParts, cache: HistoryCache, signal?: AbortSignal): Promise<{ lookedUp: number; settled: number; needsPerson: number; sent: number } | null> {
  const owned = new Set(rt.batches.ownedBy(rt.owner).map((b) => b.id));
  const due = orderLookups(rt.db).filter((o) => owned.has(o.batchId));
  if (due.length === 0) return null;
  const keyOf = (o: Pick<OrderLookup, 'batchId' | 'idx'>): string => `${ORDER_LOOKUP_PREFIX}${o.batchId}:${o.idx}`;
  const open = (o: OrderLookup): Row | undefined => {
    const r = rt.rows.get(o.batchId, o.idx);
    return r && LOOKED_UP.includes(r.state) ? r : undefined;
  };
  // Orders already at an end, settled or in review (a reconcile or a person got there first): nothing to look up.
  const ended = due.filter((o) => open(o) === undefined);
  if (ended.length > 0) rt.db.transaction(() => { for (const o of ended) rt.meta.delete(keyOf(o)); })();
  const live = due.filter((o) => open(o) !== undefined);
  if (live.length === 0) return { lookedUp: 0, settled: 0, needsPerson: 0, sent: 0 };
  const now = rt.clock.now();
  const configured = new Set(rt.accounts.map((a) => a.id));
  const renamedTo = currentNames(rt.db, configured);
  for (const o of live) o.accounts = o.accounts.map((a) => renamedTo(a));
  const wanted = new Set<string>(configured);
  for (const o of live) for (const a of o.accounts) wanted.add(a);
  const since = Math.min(...live.map((o) => o.since));
  const sweeps = new Map<string, Sweep>();
  const unreadable = new Map<string, string>();
  for (const account of wanted) {
    if (!configured.has(account)) {
      unreadable.set(account, notReadableWhy(account));
      continue;
    }
    try {
      sweeps.set(account, await cache.read(rt, account, since, signal));
    } catch (err) {
      if (signal?.aborted) throw err;
      unreadable.set(account, `account "${account}" cannot be read: ${unreadableWhy(err)}`);
    }
  }
  // From here to the marks' removal nothing awaits.
  const waitMs = rt.config.backup.restoreLookupWaitMs;
  const ready: OrderLookup[] = [];
  const waiting: OrderLookup[] = [];
  for (const o of live) {
    if (open(o) === undefined) continue;
    const relevant = [...unreadable.keys()].some((a) => o.accounts.includes(a));
    if (!relevant || now >= (o.blocked?.since ?? now) + waitMs) ready.push(o);
    else waiting.push(o);
  }
  let out = { lookedUp: 0, settled: 0, needsPerson: 0, sent: 0 };
  if (ready.length > 0) {
    const rows = ready.map((o) => open(o)!);
    const { settled, needsPerson, unchanged } = settleRows(rt, rows, sweeps, unreadable);
    // A held refusal (claim/held-refusals.ts) found nowhere is refused in the transaction that
    // removes its mark: its request, built from its cells, never becomes sendable.
    let refused = 0;
    let reviewed = 0;
    rt.db.transaction(() => {
      for (const o of ready) {
        if (o.refusal !== undefined) {
          const r = refuseHeld(rt, o);
          if (r === 'refused') refused++;
          else if (r === 'review' && ++reviewed > 0) needsPerson.push({ batch: o.batchId, line: o.line ?? 0, trxid: o.trxid, account: open(o)?.account ?? '', why: heldWhy(o) });
        }
        rt.meta.delete(keyOf(o));
      }
    })();
    const sent = unchanged - refused - reviewed;
    out = { lookedUp: rows.length, settled: settled.length, needsPerson: needsPerson.length, sent };
    if (settled.length > 0 || needsPerson.length > 0 || refused > 0) {
      const marker: ReconcileMarker = { kind: 'claim', copy: null, restoredAt: null, from: null, since, detail: `${what(ready)} ${ready.map((o) => o.trxid).slice(0, 10).join(', ')}${ready.length > 10 ? ' …' : ''} within the window after a restore` };
      const report: RestoreReport = { at: rt.clock.now(), marker, lookedUp: rows.length, unchanged: sent, placed: 0, settled, needsPerson, orphans: [], apiOrders: null, file: null, ...skippedField(sweeps) };
      report.file = writeReport(rt, report);
      rt.log.warn(
        { lookedUp: rows.length, settled: settled.length, needsPerson: needsPerson.length, refused, report: report.file, unreadable: Object.fromEntries(unreadable) },
        `looked up ${rows.length} ${what(ready)} after a restore: ${settled.length} settled from the suppliers (bought before, never sent again), ${needsPerson.length} need a person, ${refused} refused as the catalog says now (bought nowhere), ${sent} are sent now`,
      );
    } else {
      rt.log.info({ lookedUp: rows.length }, `looked up ${rows.length} ${what(ready)} after a restore at every account: bought nowhere, sent now`);
    }
  }
  if (waiting.length > 0) {
    rt.db.transaction(() => {
      for (const o of waiting) noteOrderBlocked(rt.db, o, { since: o.blocked?.since ?? now, at: now, accounts: Object.fromEntries(unreadable) });
    })();
    const first = Math.min(...waiting.map((o) => o.blocked?.since ?? now));
    throw new OrderLookupWaiting(`${waiting.length} ${what(waiting)} after a restore (${waiting.slice(0, 5).map((o) => o.trxid).join(', ')}${waiting.length > 5 ? ' …' : ''}) wait for their lookup: ${[...unreadable.values()].join('; ')}; nothing of them is sent; at ${new Date(first + waitMs).toISOString()} (TOPUP_RESTORE_LOOKUP_WAIT) they go to review unless it can be read before`);
  }
  return out;
}

/**
 * A held refusal after its lookup (claim/held-refusals.ts), in lookUpOrders' transaction: settled
 * or reviewed already (settleRows) → nothing; held on its own account because that account could
 * not say whether it bought it (pinned) → review, never refused (its purchase would be held by no
 * row) nor sent (its request is its cells'); else → refused with the error it was held with.
 */
function refuseHeld(rt: ReconcileParts, o: OrderLookup): 'refused' | 'review' | 'settled' {
  const row = rt.rows.get(o.batchId, o.idx);
  if (!row || !LOOKED_UP.includes(row.state)) return 'settled';
  const now = rt.clock.now();
  if (row.pinned) {
    if (!rt.rows.restoredUnknown(o.batchId, o.idx, { owner: rt.owner, now }, `REVIEW: after a restore: ${heldWhy(o)}`)) throw new Error(`row ${o.batchId}:${o.line ?? o.idx} moved on while it was settled`);
    return 'review';
  }
  if (!rt.rows.priceRose(o.batchId, o.idx, now, `${o.refusal} (looked up after a restore at ${o.accounts.join(', ')}: bought nowhere under trxid ${o.trxid})`)) {
    throw new Error(`row ${o.batchId}:${o.line ?? o.idx} moved on while it was refused`);
  }
  return 'refused';
}

function heldWhy(o: OrderLookup): string {
  return `its account could not say whether it bought trxid ${o.trxid} after the copy was taken, and the catalog refuses the row now (${o.refusal}); check that account's orders for it before ordering it again (topup review resolve)`;
}

/** What the per-row marks are, in a log line: API orders, rows of files held one by one, or both. */
function what(marks: readonly OrderLookup[]): string {
  const files = marks.filter((o) => o.line !== undefined).length;
  if (files === 0) return 'API order(s) accepted';
  if (files === marks.length) return 'row(s) of files claimed';
  return 'API order(s) and file row(s) claimed';
}

/** An API orders' lookup that waits for an account it cannot read. */
export class OrderLookupWaiting extends TopupError {
  constructor(message: string) {
    super(ErrorCode.Backup, message);
    this.name = 'OrderLookupWaiting';
  }
}

/** Why an account's history could not be read, in an operator's words (never the key). */
function unreadableWhy(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 401 || err.status === 403) return `its key is refused (${err.status}${err.apiCode ? ` ${err.apiCode}` : ''}): fix its key in accounts.toml`;
    return `${err.codeOrStatus}${err.apiError && err.apiError !== err.apiCode ? ` (${err.apiError})` : ''}`;
  }
  return coerceError(err).message;
}

/** What `topup status` and `topup doctor` say of files claimed after a restore that wait for their lookup. */
export function claimLookupStatus(db: ReconcileParts['db'], now: number, waitMs: number): { lines: string[]; waiting: number } {
  // A batch that ended without its lookup (cancelled, refused, a duplicate) waits for nothing.
  const marks = claimLookups(db).filter((c) => !spentClaim(db, c.batchId));
  const lines = marks.map((c) => {
    const b = c.blocked;
    if (!b) return `restore lookup: batch ${c.batchId} is looked up at ${(c.accounts ?? []).join(', ') || 'every account'} before it sends (claimed within the window after a restore)`;
    const why = Object.values(b.accounts).join('; ');
    const at = b.since + waitMs;
    return `restore lookup: batch ${c.batchId} is waiting for the restore lookup since ${iso(b.since)} (last try ${iso(b.at)}): ${why}; nothing of it is sent; ${at > now ? `at ${iso(at)} (TOPUP_RESTORE_LOOKUP_WAIT)` : 'at the next try'} its rows that could have been bought there go to review (topup review), unless the account can be read before (put it back in accounts.toml, or fix its key, and restart)`;
  });
  // API orders accepted in the window (store/backup.ts markOrderInRestoreWindow): one line for
  // those on their way through the lookup, one for those waiting for an account.
  const all = orderLookups(db);
  // Rows of files held one by one (holdRowsInRestoreWindow): a line per batch.
  const fileRows = all.filter((o) => o.line !== undefined);
  const byBatch = new Map<string, OrderLookup[]>();
  for (const o of fileRows) byBatch.set(o.batchId, [...(byBatch.get(o.batchId) ?? []), o]);
  for (const [batch, held] of byBatch) {
    const since = Math.min(...held.map((o) => o.blocked?.since ?? o.at));
    const last = Math.max(...held.map((o) => o.blocked?.at ?? o.at));
    const why = [...new Set(held.flatMap((o) => Object.values(o.blocked?.accounts ?? {})))].join('; ');
    const at = since + waitMs;
    lines.push(`restore lookup: ${held.length} row(s) of batch ${batch} (line ${held.slice(0, 5).map((o) => o.line).join(', ')}${held.length > 5 ? ' …' : ''}) are waiting for the restore lookup since ${iso(since)} (last try ${iso(last)}): ${why}; nothing of these rows is sent (they could have been bought there after the copy was taken; the batch's other rows go on); ${at > now ? `at ${iso(at)} (TOPUP_RESTORE_LOOKUP_WAIT)` : 'at the next try'} they go to review (topup review), unless the account can be read before (put it back in accounts.toml, or fix its key, and restart)`);
  }
  const orders = all.filter((o) => o.line === undefined);
  const stuck = orders.filter((o) => o.blocked !== undefined);
  const moving = orders.length - stuck.length;
  if (moving > 0) lines.push(`restore lookup: ${moving} API order(s) accepted within the window after a restore are looked up at every account before they are sent`);
  if (stuck.length > 0) {
    const since = Math.min(...stuck.map((o) => o.blocked!.since));
    const last = Math.max(...stuck.map((o) => o.blocked!.at));
    const why = [...new Set(stuck.flatMap((o) => Object.values(o.blocked!.accounts)))].join('; ');
    const at = since + waitMs;
    lines.push(`restore lookup: ${stuck.length} API order(s) accepted after a restore (${stuck.slice(0, 5).map((o) => o.trxid).join(', ')}${stuck.length > 5 ? ' …' : ''}) are waiting for the restore lookup since ${iso(since)} (last try ${iso(last)}): ${why}; none is sent; ${at > now ? `at ${iso(at)} (TOPUP_RESTORE_LOOKUP_WAIT)` : 'at the next try'} they go to review (topup review), unless the account can be read before (put it back in accounts.toml, or fix its key, and restart)`);
  }
  return { lines, waiting: marks.filter((c) => c.blocked !== undefined).length + stuck.length + fileRows.length };
}

function iso(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

/**
 * Each account's former names (account_renames, followed through chains of renames): a row moved
 * to an account before it was renamed was bought there as `<trxid>-<old name>` (an adversary's
 * case: `second` renamed after a restore, the file re-dropped, its moved trxid not recognised).
 */
function formerNames(db: ReconcileParts['db']): Map<string, string[]> {
  const renames = db.prepare('SELECT from_name AS fromName, to_name AS toName FROM account_renames').all() as { fromName: string; toName: string }[];
  const out = new Map<string, string[]>();
  const walk = (name: string, seen: Set<string>): void => {
    for (const r of renames) {
      if (r.toName !== name || seen.has(r.fromName)) continue;
      seen.add(r.fromName);
      walk(r.fromName, seen);
    }
  };
  for (const name of new Set(renames.map((r) => r.toName))) {
    const seen = new Set<string>([name]);
    walk(name, seen);
    seen.delete(name);
    out.set(name, [...seen]);
  }
  return out;
}

/** An account's name now, following account_renames from a name it had (a chain of renames included; a name configured now is itself). */
function currentNames(db: ReconcileParts['db'], configured: ReadonlySet<string>): (name: string) => string {
  const renames = db.prepare('SELECT from_name AS fromName, to_name AS toName FROM account_renames ORDER BY at').all() as { fromName: string; toName: string }[];
  return (name) => {
    let n = name;
    for (let i = 0; i < renames.length && !configured.has(n); i++) {
      const r = renames.findLast((x) => x.fromName === n);
      if (!r || r.toName === n) break;
      n = r.toName;
    }
    return n;
  };
}

type Verdict =
  /** `hold`: why its own account cannot say whether its own trxid was bought there; it is pinned to that account (RowStore.holdOnOwnAccount). */
  | { kind: 'send as is'; hold?: string }
  /**
   * `waitsFor`: the person verdict rests only on accounts that cannot be read now (a key refused,
   * unreachable, out of accounts.toml): once they can, the row may be settled or sent with nothing
   * to decide, so in the window's lookup it waits for them (TOPUP_RESTORE_LOOKUP_WAIT) row by row.
   */
  | { kind: 'person'; why: string; waitsFor?: string[] }
  | { kind: 'found'; order: Order & { orderId: string }; account: string; how: 'own trxid' | 'moved trxid' };

/** What the suppliers say of one row. */
function decide(rt: ReconcileParts, row: Row, sweeps: Map<string, Sweep>, unreadable: ReadonlyMap<string, string>, aliases: ReadonlyMap<string, string[]>): Verdict {
  if (row.trxid === null) return { kind: 'send as is' };
  const own = sweeps.get(row.account)?.byTrxid.get(trxidKey(row.trxid));
  // Its own trxid bought on another account: a file claimed before under another routing (the
  // cheapest account then, another now) was bought there as it is; sent here it would be bought again.
  const ownElsewhere: { account: string; order: Order & { orderId: string } }[] = [];
  for (const [acct, s] of sweeps) {
    if (acct === row.account) continue;
    const o = s.byTrxid.get(trxidKey(row.trxid));
    if (o) ownElsewhere.push({ account: acct, order: o });
  }
  if (ownElsewhere.length > 0) {
    return { kind: 'person', why: `bought already under its trxid ${row.trxid} on another account: ${ownElsewhere.map((e) => `order ${e.order.orderId} at ${e.account}`).join(', ')}${own ? `, and order ${own.orderId} at ${row.account}` : ''}` };
  }
  // Every trxid a move to another account would have given it there (failover.ts trxidFor: the
  // first trxid, the account's name, a number if a file already used that).
  const root = row.moves[0]?.trxid ?? row.trxid;
  const elsewhere: { account: string; order: Order & { orderId: string } }[] = [];
  // An account that cannot be read (store/backup.ts ClaimLookup: one taken out of accounts.toml, a
  // key refused) may have bought it too, under its own trxid or a moved one.
  const mayMove = !row.pinned && (rt.accounts.length > 1 || unreadable.size > 0);
  const blind: string[] = [];
  // A moved trxid is searched at every account, the row's own included: a row recovered from the
  // journal or re-routed (routing edited) may now sit on the account it had moved to, where its
  // moved trxid bought it (adv9).
  const movedHere: (Order & { orderId: string })[] = [];
  for (const acct of rt.accounts) {
    const s = sweeps.get(acct.id);
    if (!s) continue;
    // Under its name now and every name it had (a renamed account keeps its rows, and a move made
    // under the old name gave `<trxid>-<old name>`: store/account-identity.ts account_renames).
    const names = [acct.id, ...(aliases.get(acct.id) ?? [])];
    const re = new RegExp(`^(${names.map((n) => escapeRe(foldTrxid(`${root}-${n}`))).join('|')})\\d*$`);
    for (const [t, o] of s.byTrxid) {
      if (!re.test(t)) continue;
      // Its own trxid (a row that moved here holds the moved trxid as its own) is `own`, above.
      if (acct.id === row.account) { if (t !== trxidKey(row.trxid)) movedHere.push(o); }
      else elsewhere.push({ account: acct.id, order: o });
    }
    if (acct.id === row.account) continue;
    const why = mayMove ? blindness(s) : null;
    if (why !== null && !playerRuledOut(rt, row, acct.id, s)) blind.push(`${acct.id} (${why})`);
  }
  // Bought on this very account under a trxid a move gave it: never sent again; a person settles
  // which purchase the row is (money safe: nothing is sent blind).
  if (movedHere.length > 0) {
    return { kind: 'person', why: `bought already on ${row.account} under a moved trxid: ${movedHere.map((o) => `order ${o.orderId} under ${o.trxid}`).join(', ')}${own ? `, and order ${own.orderId} under ${row.trxid}` : ''}` };
  }
  if (own && elsewhere.length > 0) {
    return { kind: 'person', why: `bought twice already: order ${own.orderId} at ${row.account} under ${row.trxid}, and ${elsewhere.map((e) => `order ${e.order.orderId} at ${e.account} under ${e.order.trxid}`).join(', ')}` };
  }
  if (own) {
    const wrong = mismatches(row, own);
    if (wrong.length > 0) return { kind: 'person', why: `order ${own.orderId} at ${row.account} carries its trxid ${row.trxid} but is another purchase (${describeMismatches(wrong)})` };
    return { kind: 'found', order: own, account: row.account, how: 'own trxid' };
  }
  if (elsewhere.length > 1) {
    return { kind: 'person', why: `several orders carry the trxids a move gives it: ${elsewhere.map((e) => `${e.order.orderId} at ${e.account} (${e.order.trxid})`).join(', ')}` };
  }
  if (elsewhere.length === 1) {
    const { account, order } = elsewhere[0]!;
    // Compared as the moved row would be: its new trxid, and the other account's own pid.
    const wrong = mismatches({ ...row, trxid: order.trxid ?? row.trxid, productId: null }, order);
    if (wrong.length > 0) return { kind: 'person', why: `order ${order.orderId} at ${account} carries the trxid a move gives it (${order.trxid}) but is another purchase (${describeMismatches(wrong)})` };
    if (!['pending', 'sending', 'verifying', 'resending', 'searching'].includes(row.state) || row.orderId !== null) {
      return { kind: 'person', why: `it was bought at ${account} as ${order.trxid} (order ${order.orderId}) after the copy, and the copy has it ${row.state} at ${row.account}` };
    }
    // In doubt on its own account (a send there whose answer was lost; a copy caught `sending` is
    // `resending` here, batches_taken_over made it so when this process took the batch): it left
    // that account, and was bought once, on the other, only if its own account shows it was not
    // bought there under its own trxid. Its history, read back to before the copy and before that
    // send, with every order's trxid, and nothing under it (`own`, above): settled as moved. A
    // history that cannot say (no trxids, not reaching back, not read) proves nothing, and the row
    // may have been bought twice: a person decides (stop 38: a hand copy taken during the paused
    // account's probe sent a row bought once on `second` to review).
    if (row.state === 'resending' || row.state === 'searching') {
      const ownSweep = sweeps.get(row.account);
      const ownWhy = ownSweep ? blindness(ownSweep) : (unreadable.get(row.account) ?? `account "${row.account}" was not read`);
      if (ownWhy !== null) {
        return { kind: 'person', why: `it was bought at ${account} as ${order.trxid} (order ${order.orderId}) after the copy, but the copy has it in doubt on ${row.account} (${row.state}: a send there under ${row.trxid} whose answer was lost), and ${row.account} cannot show it was not bought there too: ${ownWhy}` };
      }
    }
    return { kind: 'found', order, account, how: 'moved trxid' };
  }
  const waitsFor: string[] = [];
  for (const [acct, why] of unreadable) {
    if (!mayMove || acct === row.account || sweeps.has(acct)) continue;
    blind.push(`${acct} (${why})`);
    waitsFor.push(acct);
  }
  // Its own account too, when the row could have moved there before the loss: a failover to it gave
  // `<root>-<account>`, and a send under its own trxid is a new purchase there, not a replay (the
  // simulator's `restore`, and an adversarial review: routed now to the account it had failed over
  // to, whose history shows no trxid or cannot be read, a re-dropped row was bought twice there).
  // A history that cannot say clears it only by the row's player (playerRuledOut); one that cannot
  // be read is waited for; the person is told every account to look at.
  if (mayMove) {
    const ownSweep = sweeps.get(row.account);
    const ownWhy = ownSweep ? blindness(ownSweep) : (unreadable.get(row.account) ?? `account "${row.account}" was not read`);
    if (ownWhy !== null && !(ownSweep !== undefined && playerRuledOut(rt, row, row.account, ownSweep))) {
      blind.push(`${row.account} (its own account, also under ${root}-${row.account}: ${ownWhy})`);
      if (ownSweep === undefined && unreadable.has(row.account)) waitsFor.push(row.account);
    }
  }
  if (blind.length > 0) {
    const why = `it may have been bought after the copy was taken and cannot be looked up at ${blind.join(', ')}; check those accounts' orders for trxid ${row.trxid} and ${root}-<account> before ordering it (topup review resolve)`;
    // Waiting helps only when every account that cannot say is one that cannot be read now (a
    // history read that does not reach back or shows no trxid says no more later).
    return waitsFor.length === blind.length ? { kind: 'person', why, waitsFor } : { kind: 'person', why };
  }
  // Sent under its own trxid on its own account, a purchase made there after the copy is met as a
  // replay, but only there: when that account cannot say whether it holds one, the row must never
  // leave it (a failover reads "nothing created" from the refusal of the next send, MAINTENANCE or
  // no stock, not from a purchase made before the restore: bought again elsewhere, the simulator's
  // `restore`, seed 3 #44).
  if (!row.pinned) {
    const s = sweeps.get(row.account);
    const why = s ? blindness(s) : (unreadable.get(row.account) ?? `account "${row.account}" was not read`);
    // Reached only when the row could not have moved here (one account), or its own account's
    // history clears it by its player (above): pinned, a resend here meets a purchase as a replay.
    if (why !== null) return { kind: 'send as is', hold: `${row.account}: ${why}` };
  }
  return { kind: 'send as is' };
}

/** The failover move (store edge `moved`), with the trxid the other account already has the order under. */
function moveTo(rt: ReconcileParts, row: Row, account: string, order: Order & { orderId: string }, a: { owner: string; now: number }): boolean {
  const target = rt.accountOf(account);
  const entry = row.slug !== null && row.packName !== null ? target.catalog.cached?.index.bySlugPack(row.slug, row.packName) : undefined;
  const pid = order.pid ?? entry?.product.id ?? row.productId ?? '';
  const quantity = row.quantity ?? 1;
  const price = order.amountUsd !== undefined ? order.amountUsd / quantity : (entry?.product.price ?? row.unitPriceUsd ?? 0);
  const trxid = order.trxid!.trim();
  const move: RowMove = { from: row.account, trxid: row.trxid!, code: 'RESTORE', why: `found bought on ${account} as ${trxid} after a restore`, at: a.now };
  const m = {
    from: row.account,
    fromTrxid: row.trxid!,
    to: account,
    trxid,
    request: JSON.stringify({ ...row.request, pid, trxid }),
    productId: pid,
    unitPriceUsd: price,
    expectedUsd: roundCents(price * quantity),
    moves: JSON.stringify([...row.moves, move]),
    note: `moved to ${account} after a restore: bought there as ${trxid}`,
  };
  // A row in doubt on its own account leaves it by its own edge (decide proved its own account holds nothing under its trxid).
  return row.state === 'resending' || row.state === 'searching'
    ? rt.rows.restoredMove(row.batchId, row.idx, a, { ...m, fromState: row.state })
    : rt.rows.move(row.batchId, row.idx, a, { ...m, fromState: row.state as 'pending' | 'sending' | 'verifying' });
}

function writeReport(rt: ReconcileParts, report: RestoreReport): string | null {
  try {
    mkdirSync(rt.config.reportsDir, { recursive: true, mode: 0o700 });
    // Never over another report: two in one second (a claim lookup and a reconcile, two processes)
    // each keep theirs.
    const stem = join(rt.config.reportsDir, `restore-${new Date(report.at).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`);
    let file = `${stem}.json`;
    for (let n = 2; existsSync(file); n++) file = `${stem}-${n}.json`;
    writeFileAtomic(file, `${JSON.stringify({ ...report, file }, null, 2)}\n`);
    return file;
  } catch (err) {
    rt.log.error({ err: coerceError(err).message }, 'the restore report could not be written (the log line below says the same)');
    return null;
  }
}

/** What `topup status` and `topup doctor` say about restores: a reconcile still due, or the last one. */
/**
 * The backup this store was restored from (topup restore), whether its reconcile is still due or
 * done: the marker, with the backup's path and when it was taken and restored. Null for a store
 * never restored from a backup.
 */
export function restoredFromBackup(meta: Pick<Runtime, 'meta'>['meta']): { from: string; takenAt: number; restoredAt: number | null } | null {
  const m = restorePending(meta) ?? meta.getJson<{ marker: ReconcileMarker }>(LAST_RESTORE_KEY)?.marker ?? null;
  if (!m || m.kind !== 'backup' || m.from === null || m.copy === null) return null;
  return { from: m.from, takenAt: m.copy.takenAt, restoredAt: m.restoredAt };
}

/**
 * The elements skipped per account, by the reconcile (its report) and by the window's lookups since
 * (the readings kept for the window, HistoryCache): the most any reading of an account skipped.
 */
function skippedSince(meta: Pick<Runtime, 'meta'>['meta'], reconcile: SkippedHistory | undefined): SkippedHistory | undefined {
  const byAccount: Record<string, number> = { ...(reconcile?.byAccount ?? {}) };
  for (const { key, value } of meta.listPrefix(HISTORY_KEPT_PREFIX)) {
    const n = (JSON.parse(value) as KeptHistory).skipped ?? 0;
    const acct = key.slice(HISTORY_KEPT_PREFIX.length);
    if (n > (byAccount[acct] ?? 0)) byAccount[acct] = n;
  }
  return Object.keys(byAccount).length > 0 ? { byAccount, meaning: SKIPPED_MEANING } : undefined;
}

export function restoreStatus(meta: Pick<Runtime, 'meta'>['meta'], now: number): { line: string; pending: boolean; needsPerson: number } | null {
  const due = restorePending(meta);
  if (due) return { line: `restore: this store is a restored copy (${due.detail}); the next start reconciles it with the suppliers before sending anything`, pending: true, needsPerson: 0 };
  const last = meta.getJson<Omit<RestoreReport, 'settled' | 'needsPerson'> & { settled: number; needsPerson: number; people: PersonRow[] }>(LAST_RESTORE_KEY);
  if (!last) return null;
  const when = new Date(last.at).toISOString().replace('T', ' ').slice(0, 19);
  const people = last.people.length > 0 ? `: ${last.people.map((p) => (p.line > 0 ? `${p.batch}:${p.line}` : p.batch || p.trxid)).join(', ')}` : '';
  const api = last.apiOrders ? `, ${last.apiOrders.recovered.length} API order(s) recovered from the journal` : '';
  // The window that follows (files and API orders looked up at every account first), or its early close.
  const w = meta.getJson<RestoreWindow>(RESTORE_WINDOW_KEY);
  const closed = meta.getJson<{ at: number; actor: string }>(WINDOW_CLOSED_KEY);
  const open = w !== null && w !== undefined && w.until > now;
  const windowText = open && w.filesClosedAt === undefined
    ? `; restore window open until ${iso(w.until)} (files claimed and API orders accepted until then are looked up at every account before they are sent; to close it early for files: topup restore --close-window)`
    : open && closed ? `; restore window closed early for files ${iso(closed.at)} by ${closed.actor} (API orders are still looked up until ${iso(w.until)})`
    : closed ? `; restore window closed early ${iso(closed.at)} by ${closed.actor}` : '';
  const skipped = skippedSince(meta, last.skippedHistory);
  const skippedLine = skipped ? `; history elements skipped by the lookup: ${skippedText(skipped)}` : '';
  return {
    line: `restore: reconciled ${when} UTC (${last.marker.detail}): ${last.lookedUp} row(s) looked up, ${last.settled} settled from the suppliers${api}, ${last.needsPerson} need a person${people}${last.file ? `; report ${last.file}` : ''}${skippedLine}${windowText}`,
    pending: false,
    needsPerson: last.needsPerson,
  };
}
