/** `topup history`: recent orders of the account (GET /history), newest first. */
import type { Command } from 'commander';
import { Priority, type HistoryQuery } from '../api/client.js';
import { UsageError } from '../kernel/errors.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, wholeNumber } from './output.js';
import { orderColumns, orderJson } from './order-view.js';

export function registerHistory(program: Command): void {
  addFormatOptions(
    program
      .command('history')
      .description('List recent orders of the account (GET /history), newest first')
      .option('--limit <n>', 'the newest N orders (1-200; default 30)', wholeNumber('--limit', 1, 200))
      .option('--page <p>', 'page P (from 1) of the paged listing', wholeNumber('--page', 1, 1_000_000))
      .option('--page-size <s>', 'orders per page with --page (1-50; default 20)', wholeNumber('--page-size', 1, 50))
      .option('--show-codes', 'print delivered codes (hidden by default)'),
  ).action(async (opts: { limit?: number; page?: number; pageSize?: number; json?: boolean; csv?: boolean; showCodes?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    if (opts.limit !== undefined && opts.page !== undefined) throw new UsageError('use either --limit or --page/--page-size, not both');
    if (opts.pageSize !== undefined && opts.page === undefined) throw new UsageError('--page-size needs --page');
    const query: HistoryQuery =
      opts.page !== undefined ? { page: opts.page, ...(opts.pageSize !== undefined && { pageSize: opts.pageSize }) } : opts.limit !== undefined ? { limit: opts.limit } : {};
    const ctx = await openCommandContext(cmd);
    try {
      const h = await ctx.rt.account.client.history(query, { priority: Priority.lookup });
      const show = opts.showCodes === true;
      printList(format, h.orders, orderColumns(show), {
        count: h.count,
        ...(h.total !== undefined && { total: h.total }),
        ...(h.hasMore !== undefined && { hasMore: h.hasMore }),
        ...(opts.page !== undefined && { page: opts.page }),
        orders: h.orders.map((o) => orderJson(o, show)),
      });
      if (format === 'table' && h.hasMore) process.stdout.write(`more: topup history --page ${(opts.page ?? 1) + 1}${opts.pageSize ? ` --page-size ${opts.pageSize}` : ''}\n`);
    } finally {
      await ctx.close();
    }
  });
}
