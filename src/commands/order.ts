/** `topup order ORDER_ID`: one order as the API sees it now, and where it came from locally. */
import type { Command } from 'commander';
import { Priority } from '../api/client.js';
import { describeAudit } from '../api/audit.js';
import { NotFoundError, isApiError } from '../kernel/errors.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, when } from './output.js';
import { orderColumns, orderJson } from './order-view.js';

export function registerOrder(program: Command): void {
  addFormatOptions(
    program
      .command('order')
      .description('Show one order (GET /orders/:id) and the batch row that placed it')
      .argument('<orderId>', 'order id (the orderId column of a result file)')
      .option('--show-codes', 'print delivered codes (hidden by default)'),
  ).action(async (orderId: string, opts: { json?: boolean; csv?: boolean; showCodes?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const ctx = await openCommandContext(cmd);
    try {
      let order;
      try {
        order = await ctx.rt.account.client.getOrder(orderId, { priority: Priority.lookup });
      } catch (err) {
        if (isApiError(err, 'not-found')) throw new NotFoundError(`no order ${orderId} on this account [ORDER NOT FOUND]`);
        throw err;
      }
      const placed = ctx.rt.rows.placedBy(order.orderId ?? orderId);
      const row = placed ? ctx.rt.rows.byLine(placed.batchId, placed.line) : undefined;
      const show = opts.showCodes === true;
      const local = row ? { batchId: row.batchId, line: row.line, state: row.state, note: row.note, lastAnswer: row.lastAnswer ? (JSON.parse(row.lastAnswer) as unknown) : null } : null;
      printList(format, [order], orderColumns(show), { ...orderJson(order, show), local });
      if (format === 'table' && row) {
        const times = [row.firstSentAt !== null && `sent ${when(row.firstSentAt)} UTC`, row.updatedAt && `last changed ${when(row.updatedAt)} UTC`].filter(Boolean).join(', ');
        process.stdout.write(`placed by batch ${row.batchId}, line ${row.line} (${row.state}${times ? `; ${times}` : ''})${row.note ? `; ${row.note}` : ''}\n`);
        if (row.lastAnswer) process.stdout.write(`last answer kept for that row: ${describeAudit(row.lastAnswer, 400)}\n`);
      }
    } finally {
      await ctx.close();
    }
  });
}
