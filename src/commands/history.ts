/**
 * `topup history`: recent orders (GET /history), newest first, of every account of the home (or
 * the one named with --account), each with its account: two suppliers number their orders alike,
 * so an order id means nothing without it.
 */
import type { Command } from 'commander';
import { Priority, type HistoryQuery } from '../api/client.js';
import type { Order } from '../api/schemas.js';
import { UsageError } from '../kernel/errors.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, wholeNumber, type Column } from './output.js';
import { orderColumns, orderJson } from './order-view.js';

type Listed = Order & { account: string };

const createdMs = (o: Order): number => {
  const t = o.createdAt;
  const ms = typeof t === 'number' ? t : t === undefined ? NaN : Date.parse(t);
  return Number.isNaN(ms) ? -Infinity : ms;
};

export function registerHistory(program: Command): void {
  addFormatOptions(
    program
      .command('history')
      .description('List recent orders of every account (GET /history), newest first, each with its account')
      .option('--account <name>', 'only this account (as accounts.toml names it)')
      .option('--limit <n>', 'the newest N orders (1-200; default 30)', wholeNumber('--limit', 1, 200))
      .option('--page <p>', "page P (from 1) of each account's paged listing", wholeNumber('--page', 1, 1_000_000))
      .option('--page-size <s>', 'orders per page with --page (1-50; default 20)', wholeNumber('--page-size', 1, 50))
      .option('--show-codes', 'print delivered codes (hidden by default)'),
  ).action(async (opts: { account?: string; limit?: number; page?: number; pageSize?: number; json?: boolean; csv?: boolean; showCodes?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    if (opts.limit !== undefined && opts.page !== undefined) throw new UsageError('use either --limit or --page/--page-size, not both');
    if (opts.pageSize !== undefined && opts.page === undefined) throw new UsageError('--page-size needs --page');
    const query: HistoryQuery =
      opts.page !== undefined ? { page: opts.page, ...(opts.pageSize !== undefined && { pageSize: opts.pageSize }) } : opts.limit !== undefined ? { limit: opts.limit } : {};
    const ctx = await openCommandContext(cmd);
    try {
      const accounts = opts.account !== undefined ? [ctx.rt.accountOf(opts.account)] : ctx.rt.accounts;
      const per: { account: string; count: number; total?: number; hasMore?: boolean }[] = [];
      let orders: Listed[] = [];
      for (const a of accounts) {
        const h = await a.client.history({ ...query, partial: true }, { priority: Priority.lookup });
        per.push({ account: a.id, count: h.count, ...(h.total !== undefined && { total: h.total }), ...(h.hasMore !== undefined && { hasMore: h.hasMore }) });
        orders.push(...h.orders.map((o) => ({ ...o, account: a.id })));
      }
      // Newest first across the accounts (a stable sort keeps each account's own order for equal times).
      // With --limit (or the default) each account gave its newest N, so the newest N of them all are here.
      orders.sort((x, y) => createdMs(y) - createdMs(x));
      const limit = opts.page === undefined ? (opts.limit ?? 30) : undefined;
      const cut = limit !== undefined && orders.length > limit;
      if (cut) orders = orders.slice(0, limit);
      const show = opts.showCodes === true;
      // The account column in a table only when the home has several (JSON always names it).
      const columns: Column<Listed>[] = [...(ctx.rt.accounts.length > 1 ? [{ title: 'account', get: (o: Listed) => o.account }] : []), ...(orderColumns(show) as Column<Listed>[])];
      const totals = per.every((p) => p.total !== undefined) ? { total: per.reduce((s, p) => s + (p.total ?? 0), 0) } : {};
      const hasMore = cut || per.some((p) => p.hasMore === true);
      printList(format, orders, columns, {
        count: orders.length,
        ...totals,
        hasMore,
        ...(opts.page !== undefined && { page: opts.page }),
        accounts: per,
        orders: orders.map((o) => ({ account: o.account, ...orderJson(o, show) })),
      });
      if (format === 'table' && hasMore) {
        process.stdout.write(`more: topup history${opts.account !== undefined ? ` --account ${opts.account}` : ''} --page ${(opts.page ?? 1) + 1}${opts.pageSize ? ` --page-size ${opts.pageSize}` : ''}\n`);
      }
    } finally {
      await ctx.close();
    }
  });
}
