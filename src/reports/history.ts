/**
 * History export: orders that are new since the last export, read page by page through
 * GET /history (newest first) and appended, oldest first, to outbox/reports/history-YYYY-MM.csv
 * (the month of the export, UTC). Each account of the home is exported from its own history into
 * its own file (reports/files.ts: history-<account>-YYYY-MM.csv for an account of accounts.toml;
 * order ids are each account's own numbering), with its own record of what was exported.
 *
 * No duplicates: an order is exported once, when it has ended (a `processing` order waits for
 * a later run). What was exported is remembered in `meta` and, in case a kill came between the
 * append and that record, also read back from the month's file. Reading stops at the first
 * page on which every order was already exported (the previous export's frontier), but not
 * before every order that was still processing last time has been seen again: newer orders
 * that were exported meanwhile can sit between it and the top of the history. One that is not
 * found within maxPages is given up (it is logged).
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { Priority } from '../api/client.js';
import { ApiError } from '../kernel/errors.js';
import type { Order } from '../api/schemas.js';
import type { Runtime } from '../runtime.js';
import type { Account } from '../account/account.js';
import { coerceError } from '../kernel/errors.js';
import { appendCsv } from './csv-append.js';
import { historyFile } from './files.js';
import { historyExportedKey, historyWaitingKey } from '../store/account-keys.js';

export const HISTORY_COLUMNS = ['exportedAt', 'orderId', 'trxid', 'status', 'game', 'packName', 'amountUsd', 'refunded', 'error', 'userId', 'serverId', 'moreId', 'createdAt'] as const;
const REMEMBER = 20_000;
const PAGE_SIZE = 50;

export interface HistoryExportResult {
  file: string;
  exported: number;
  pages: number;
  waiting: number;
}


/**
 * Every account, each into its own file. The totals, the first account's file, and each account's
 * part. An account whose history cannot be read does not hold back the others: they are exported,
 * then the run fails naming it.
 */
export async function runHistoryExport(
  rt: Pick<Runtime, 'accounts' | 'clock' | 'config' | 'db' | 'log' | 'meta'>,
  opts: { now?: number; maxPages?: number } = {},
): Promise<HistoryExportResult & { accounts: (HistoryExportResult & { account: string })[] }> {
  const accounts: (HistoryExportResult & { account: string })[] = [];
  const failed: string[] = [];
  for (const a of rt.accounts) {
    try {
      accounts.push({ account: a.id, ...(await exportAccount(rt, a, opts)) });
    } catch (err) {
      failed.push(`${a.id}: ${coerceError(err).message}`);
    }
  }
  if (failed.length > 0) throw new Error(`history export: ${failed.join('; ')}${accounts.length > 0 ? ' (the other accounts were exported)' : ''}`);
  const sum = (k: 'exported' | 'pages' | 'waiting'): number => accounts.reduce((n, a) => n + a[k], 0);
  return { file: accounts[0]!.file, exported: sum('exported'), pages: sum('pages'), waiting: sum('waiting'), accounts };
}

/** How many times one page is read before the run gives up (a rate refusal each time). */
const PAGE_ATTEMPTS = 6;

/**
 * One page of the account's history. The call waits at the account's rate gate like every call
 * (the spec's limits are per account, every route together); a 429 RATE_LIMIT holds that gate for
 * its Retry-After, and the page is read again once it clears, with a growing pause when the answer
 * named none (trial s35: one 429 failed the whole export until the next scheduled run).
 */
async function readPage(rt: Pick<Runtime, 'clock' | 'log'>, account: Account, page: number): Promise<Awaited<ReturnType<Account['client']['history']>>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await account.client.history({ page, pageSize: PAGE_SIZE, partial: true }, { priority: Priority.report });
    } catch (err) {
      if (!(err instanceof ApiError) || err.classification !== 'retry-later' || attempt >= PAGE_ATTEMPTS) throw err;
      const waitMs = Math.min(60_000, Math.max(err.retryAfterMs ?? 0, 1000 * 2 ** (attempt - 1)));
      rt.log.info({ account: account.id, page, attempt, waitMs }, 'history export: the API said to wait (429); reading the page again after it');
      await rt.clock.sleep(waitMs);
    }
  }
}

function idsInFile(path: string): string[] {
  if (!existsSync(path)) return [];
  const rows = parse(readFileSync(path, 'utf8'), { columns: true, skip_empty_lines: true, relax_column_count: true }) as Record<string, string>[];
  return rows.map((r) => r.orderId ?? '').filter(Boolean);
}

async function exportAccount(rt: Pick<Runtime, 'clock' | 'config' | 'db' | 'log' | 'meta'>, account: Account, opts: { now?: number; maxPages?: number }): Promise<HistoryExportResult> {
  const now = opts.now ?? rt.clock.now();
  const file = historyFile(rt.config.reportsDir, account.id, now, rt.config.timeZone);
  // Per account (`default` keeps the keys of homes from before several accounts; store/account-keys.ts).
  const exportedKey = historyExportedKey(account.id);
  const waitingKey = historyWaitingKey(account.id);
  const remembered = rt.meta.getJson<string[]>(exportedKey) ?? [];
  const seen = new Set([...remembered, ...idsInFile(file)]);
  const lookingFor = new Set(rt.meta.getJson<string[]>(waitingKey) ?? []);
  const fresh: Order[] = [];
  const freshIds = new Set<string>();
  const stillProcessing: string[] = [];
  let pages = 0;
  for (let page = 1; page <= (opts.maxPages ?? 100); page++) {
    const h = await readPage(rt, account, page);
    pages++;
    let unexported = 0;
    for (const o of h.orders) {
      if (!o.orderId || seen.has(o.orderId) || freshIds.has(o.orderId)) continue;
      lookingFor.delete(o.orderId);
      unexported++;
      if (o.status === 'processing') {
        stillProcessing.push(o.orderId);
        continue;
      }
      fresh.push(o);
      freshIds.add(o.orderId);
    }
    if (h.orders.length === 0 || h.hasMore === false) break;
    if (unexported === 0 && seen.size > 0 && lookingFor.size === 0) break;
  }
  if (lookingFor.size > 0) rt.log.warn({ account: account.id, orders: [...lookingFor], pages }, 'history export: orders that were processing last time were not found again; not exported');
  const at = new Date(now).toISOString();
  fresh.reverse();
  appendCsv(
    file,
    HISTORY_COLUMNS,
    fresh.map((o) => [at, o.orderId, o.trxid, o.status, o.game, o.packName, o.amountUsd, o.refunded, o.error, o.userId, o.serverId, o.moreId, o.createdAt]),
  );
  // Both records in one transaction: a kill between them cannot lose a waiting order.
  rt.db.transaction(() => {
    if (fresh.length > 0) rt.meta.setJson(exportedKey, [...remembered, ...freshIds].slice(-REMEMBER));
    rt.meta.setJson(waitingKey, stillProcessing);
  })();
  return { file, exported: fresh.length, pages, waiting: stillProcessing.length };
}
