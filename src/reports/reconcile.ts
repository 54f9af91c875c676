/**
 * Reconciliation: the local ledger (orders this home placed) against the API's history and
 * the balance movement. Writes outbox/reports/reconcile-YYYY-MM-DD.csv listing
 *  - status-differs / amount-differs: an order whose status or amount disagrees;
 *  - missing-in-history: a local order not found in the history pages read (by its id, nor by
 *    its trxid);
 *  - id-differs: a local order the history lists under another id and the same trxid (a
 *    supplier that changed how it spells ids): paired by trxid, then compared as any other;
 *  - not-in-ledger: an order in the history (among the pages that cover our window) that
 *    this home did not place — another tool, the web panel, or a lost record;
 *  - refund: a cancelled order the API refunded;
 *  - balance: the balance movement since the last reconciliation against what the ledger
 *    spent in that time (the rest is top-ups, which happen outside the API, or unknown charges);
 *  - history-unread: a page of GET /history that could not be read. One 502 from a proxy must
 *    not sink the whole report (it did, in real-world mode), so a page is tried again
 *    (PAGE_RETRY_MS), then skipped and listed here; a local order not found while a page was
 *    skipped says it may be on that page. After MAX_UNREAD_IN_A_ROW skipped pages in a row the
 *    API is taken to be down and reading stops (listed too). An account problem (401/403) still
 *    fails the job: no page would be readable.
 * A run on the same day rewrites that day's file (atomically): it is a report of the state now.
 * With several supplier accounts, each account is compared with its own history and balance, and
 * the report has one more column, `account`.
 */
import { join } from 'node:path';
import { csvText } from '../kernel/csv-text.js';
import { Priority } from '../api/client.js';
import type { Order } from '../api/schemas.js';
import { safeCell } from '../outbox/cell-safety.js';
import { writeFileAtomic } from '../outbox/atomic-write.js';
import type { Runtime } from '../runtime.js';
import type { Row } from '../store/rows.js';
import { dayOf, type ReportCell } from './csv-append.js';
import { TimeZone } from '../kernel/time-zone.js';
import { roundCents as cents } from '../kernel/money.js';
import { chargedUsd } from '../store/cost.js';
import { PLACED_STATES } from '../store/row-states.js';
import { ApiError, coerceError } from '../kernel/errors.js';
import type { History } from '../api/schemas.js';
import type { Account } from '../account/account.js';
import { reconcileLastKey } from '../store/account-keys.js';
import { foldTrxid } from '../kernel/identity.js';

export const RECONCILE_COLUMNS = ['kind', 'orderId', 'trxid', 'batchId', 'line', 'localStatus', 'apiStatus', 'localAmountUsd', 'apiAmountUsd', 'refunded', 'note'] as const;
const DAY = 86_400_000;
/** Waits before each new try of a page that could not be read: three more tries over 14 s. */
export const PAGE_RETRY_MS: readonly number[] = [1_000, 3_000, 10_000];
const MAX_UNREAD_IN_A_ROW = 3;

export interface ReconcileResult {
  file: string;
  checked: number;
  differences: number;
  refunds: number;
  /** Pages of /history skipped because they could not be read (listed in the report). */
  unreadPages: number[];
}

interface Unread {
  page: number;
  tries: number;
  error: string;
}

/** One page of /history, tried again after each delay; what went wrong when no try could read it. */
async function readPage(rt: Pick<Runtime, 'clock' | 'log'>, account: Account, page: number, delays: readonly number[]): Promise<History | Unread> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await account.client.history({ page, pageSize: 50, partial: true }, { priority: Priority.report });
    } catch (err) {
      // No page of an account the API refuses is readable: that fails the job, and says why.
      if (err instanceof ApiError && (err.classification === 'account' || err.classification === 'forbidden')) throw err;
      const error = coerceError(err).message;
      if (attempt >= delays.length) return { page, tries: attempt + 1, error };
      rt.log.info({ account: account.id, page, err: error, retryInMs: delays[attempt] }, 'reconcile: a page of /history could not be read; trying it again');
      await rt.clock.sleep(delays[attempt]!);
    }
  }
}

type ReconcileParts = Pick<Runtime, 'accounts' | 'clock' | 'config' | 'log' | 'meta' | 'rows'>;

/** The last reconciliation's time and balance, per account (`default` keeps the key of before; store/account-keys.ts). */
const lastKey = reconcileLastKey;

/**
 * Every account of the home is reconciled against its own history and balance (order ids are each
 * account's own numbering); with several accounts the report has an `account` column.
 */
export async function runReconcile(rt: ReconcileParts, opts: { now?: number; maxPages?: number; retryDelaysMs?: readonly number[] } = {}): Promise<ReconcileResult> {
  const now = opts.now ?? rt.clock.now();
  const several = rt.accounts.length > 1 || rt.accounts[0]!.id !== 'default';
  const out: ReportCell[][] = [];
  const result: Omit<ReconcileResult, 'file'> = { checked: 0, differences: 0, refunds: 0, unreadPages: [] };
  const balances = new Map<string, number>();
  for (const account of rt.accounts) {
    const part = await reconcileAccount(rt, account, now, several, opts);
    out.push(...(several ? part.out.map((r) => [...r, account.id]) : part.out));
    result.checked += part.checked;
    result.refunds += part.refunds;
    result.unreadPages.push(...part.unreadPages);
    balances.set(account.id, part.balanceUsd);
  }
  // Named by the day of the run in TOPUP_TIME_ZONE: the 00:45 run in Jakarta writes Jakarta's date.
  const file = join(rt.config.reportsDir, `reconcile-${dayOf(now, rt.config.timeZone)}.csv`);
  const cells = (r: readonly ReportCell[]): string[] => r.map((c) => safeCell(c === null || c === undefined ? '' : String(c)));
  writeFileAtomic(file, csvText([several ? [...RECONCILE_COLUMNS, 'account'] : RECONCILE_COLUMNS, ...out].map(cells)));
  for (const [account, balanceUsd] of balances) rt.meta.setJson(lastKey(account), { at: now, balanceUsd });
  // A pairing by trxid is said, not counted: the same purchase under another spelling of its id.
  result.differences = out.filter((r) => r[0] !== 'refund' && r[0] !== 'balance' && r[0] !== 'id-differs').length;
  return { file, ...result };
}

async function reconcileAccount(
  rt: ReconcileParts,
  account: Account,
  now: number,
  several: boolean,
  opts: { maxPages?: number; retryDelaysMs?: readonly number[] },
): Promise<{ out: ReportCell[][]; checked: number; refunds: number; unreadPages: number[]; balanceUsd: number }> {
  const last = rt.meta.getJson<{ at: number; balanceUsd: number }>(lastKey(account.id));
  // At least the whole day before today (in TOPUP_TIME_ZONE: a run at 00:45 covers all of
  // yesterday there) and the last 24 h, with an hour of overlap with the previous run, at most a week.
  const zone = TimeZone.of(rt.config.timeZone);
  const yesterday = zone.startOf(zone.lastDays(now, 2)[0]!);
  const since = Math.max(now - 7 * DAY, Math.min(last?.at ?? now, now - DAY, yesterday) - 3_600_000);
  const mine = (rows: Row[]): Row[] => (several ? rows.filter((r) => r.account === account.id) : rows);
  const local = mine(rt.rows.placedOrders(since));
  const wanted = new Map(local.map((r) => [r.orderId!, r]));
  const api = new Map<string, Order>();
  const listed: Order[] = [];
  let found = 0;
  let deepest = -1;
  const unread: Unread[] = [];
  let unreadInARow = 0;
  let stoppedAt: number | null = null;
  for (let page = 1; page <= (opts.maxPages ?? 100) && found < wanted.size; page++) {
    const h = await readPage(rt, account, page, opts.retryDelaysMs ?? PAGE_RETRY_MS);
    if ('error' in h) {
      unread.push(h);
      rt.log.warn({ account: account.id, page, tries: h.tries, err: h.error }, 'reconcile: a page of /history could not be read; skipped, and listed in the report');
      if (++unreadInARow >= MAX_UNREAD_IN_A_ROW) {
        stoppedAt = page;
        break;
      }
      continue;
    }
    unreadInARow = 0;
    for (const o of h.orders) {
      if (!o.orderId || api.has(o.orderId)) continue;
      api.set(o.orderId, o);
      listed.push(o);
      if (wanted.has(o.orderId)) {
        found++;
        deepest = listed.length - 1;
      }
    }
    if (h.orders.length === 0 || h.hasMore === false) break;
  }

  // An order not found under its id is paired by its trxid (this account's history, the trxid
  // folded as the store folds it), when the history's order under that trxid is not one the
  // ledger knows by id: a supplier that changed how it spells ids (trial s34: its answers switched
  // to real-world and back; the ledger held `1000073`, the history listed `ORD1000073`) had each
  // such order listed twice, missing and unknown. Every trxid this home sends is its own, so one
  // order carrying it on this account is the same purchase; two are not paired (a person looks).
  const byTrxid = new Map<string, Order[]>();
  for (const o of listed) {
    const t = o.trxid?.trim();
    if (!t || wanted.has(o.orderId!)) continue;
    const k = foldTrxid(t);
    byTrxid.set(k, [...(byTrxid.get(k) ?? []), o]);
  }
  const pairedIds = new Set<string>();
  const out: ReportCell[][] = [];
  let refunds = 0;
  for (const r of local) {
    let o = api.get(r.orderId!);
    const base = [r.orderId, r.trxid, r.batchId, r.line, r.state] as const;
    const localAmount = r.amountUsd ?? r.expectedUsd;
    if (!o && r.trxid) {
      const same = byTrxid.get(foldTrxid(r.trxid.trim())) ?? [];
      const other = same.length === 1 ? same[0]! : undefined;
      if (other && !rt.rows.isOrderIdKnown(other.orderId!, several ? account.id : undefined)) {
        o = other;
        pairedIds.add(other.orderId!);
        deepest = Math.max(deepest, listed.indexOf(other));
        out.push(['id-differs', ...base, o.status, localAmount, o.amountUsd, o.refunded, `the history lists this order as ${o.orderId}, the ledger as ${r.orderId}: paired by trxid (the supplier spells its order ids another way now)`]);
      }
    }
    if (!o) {
      const maybe = unread.length > 0 ? `; it may be on ${pagesText(unread)} of /history, which could not be read` : '';
      out.push(['missing-in-history', ...base, '', localAmount, '', r.refunded, `not among the ${listed.length} most recent orders of the account${maybe}`]);
      continue;
    }
    if (o.status !== r.state) {
      const note = PLACED_STATES.includes(r.state) ? 'the ledger has not seen the end yet (the daemon polls it)' : 'the ledger and the API disagree: check this order';
      out.push(['status-differs', ...base, o.status, localAmount, o.amountUsd, o.refunded, note]);
    }
    if (o.amountUsd !== undefined && localAmount !== null && Math.abs(o.amountUsd - localAmount) > 0.005) {
      out.push(['amount-differs', ...base, o.status, localAmount, o.amountUsd, o.refunded, 'the API charged a different amount than the ledger holds']);
    }
    if (o.status === 'cancelled' && o.refunded === true) {
      refunds++;
      out.push(['refund', ...base, o.status, localAmount, o.amountUsd, true, o.error ?? '']);
    }
  }
  for (const o of listed.slice(0, deepest + 1)) {
    if (wanted.has(o.orderId!) || pairedIds.has(o.orderId!) || rt.rows.isOrderIdKnown(o.orderId!, several ? account.id : undefined)) continue;
    out.push(['not-in-ledger', o.orderId, o.trxid, '', '', '', o.status, '', o.amountUsd, o.refunded, 'placed by something other than this topup home']);
  }

  for (const u of unread) {
    out.push(['history-unread', '', '', '', '', '', '', '', '', '', `page ${u.page} of /history could not be read after ${u.tries} tries (${u.error}); the orders on it were not compared`]);
  }
  if (stoppedAt !== null) {
    out.push(['history-unread', '', '', '', '', '', '', '', '', '', `stopped reading /history after ${MAX_UNREAD_IN_A_ROW} pages in a row could not be read (pages ${stoppedAt - MAX_UNREAD_IN_A_ROW + 1}-${stoppedAt}); run the report again later`]);
  }

  const { balanceUsd } = await account.client.balance({ priority: Priority.report });
  if (last) {
    const spent = cents(mine(rt.rows.placedOrders(last.at)).reduce((s, r) => s + chargedUsd(r), 0));
    const moved = cents(balanceUsd - last.balanceUsd);
    const unexplained = cents(moved + spent);
    const note =
      Math.abs(unexplained) < 0.01
        ? 'balance movement matches the ledger'
        : unexplained > 0
          ? `${unexplained} USD more than the ledger explains: top-ups or refunds of older orders`
          : `${-unexplained} USD less than the ledger explains: charges this home did not place`;
    out.push(['balance', '', '', '', '', `since ${new Date(last.at).toISOString()}`, `now ${balanceUsd}`, -spent, moved, '', note]);
  }
  return { out, checked: local.length, refunds, unreadPages: unread.map((u) => u.page), balanceUsd };
}

function pagesText(unread: Unread[]): string {
  const pages = unread.map((u) => u.page);
  return pages.length === 1 ? `page ${pages[0]}` : `pages ${pages.join(', ')}`;
}
