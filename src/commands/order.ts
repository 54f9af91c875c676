/**
 * `topup order ORDER_ID`: one order as the API sees it now, and where it came from locally.
 *
 * Order ids are each account's own numbering (two suppliers both start at ORD1000001), so the
 * id is looked up at every account of the home (or only the one --account names), the API's
 * answer and the local row each paired on that account alone. When the id is at more than one
 * account, each is shown separately with its account: never one account's order beside another's row.
 */
import type { Command } from 'commander';
import { Priority } from '../api/client.js';
import { describeAudit } from '../api/audit.js';
import type { Order } from '../api/schemas.js';
import { NotFoundError, isApiError } from '../kernel/errors.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, when, type Column } from './output.js';
import { orderColumns, orderJson } from './order-view.js';

export function registerOrder(program: Command): void {
  addFormatOptions(
    program
      .command('order')
      .description('Show one order (GET /orders/:id) and the batch row that placed it, at every account holding that id')
      .argument('<orderId>', 'order id (the orderId column of a result file)')
      .option('--account <name>', 'only this account (as accounts.toml names it)')
      .option('--show-codes', 'print delivered codes (hidden by default)'),
  ).action(async (orderId: string, opts: { account?: string; json?: boolean; csv?: boolean; showCodes?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const ctx = await openCommandContext(cmd);
    try {
      const accounts = opts.account !== undefined ? [ctx.rt.accountOf(opts.account)] : ctx.rt.accounts;
      const several = ctx.rt.accounts.length > 1;
      const found: { account: string; order: Order | undefined; row: ReturnType<typeof ctx.rt.rows.byLine> }[] = [];
      let failure: unknown;
      for (const a of accounts) {
        let order: Order | undefined;
        try {
          order = await a.client.getOrder(orderId, { priority: Priority.lookup });
        } catch (err) {
          if (!isApiError(err, 'not-found')) {
            // One account unreadable does not hide another's order; said below when nothing is found.
            if (accounts.length === 1) throw err;
            failure ??= err;
          }
        }
        // The local row on this account only (ids repeat across accounts).
        const placed = ctx.rt.rows.placedBy(order?.orderId ?? orderId, a.id) ?? (order?.orderId !== undefined && order.orderId !== orderId ? ctx.rt.rows.placedBy(orderId, a.id) : undefined);
        const row = placed ? ctx.rt.rows.byLine(placed.batchId, placed.line) : undefined;
        if (order || row) found.push({ account: a.id, order, row });
      }
      if (found.length === 0) {
        if (failure !== undefined) throw failure;
        throw new NotFoundError(`no order ${orderId} ${opts.account !== undefined ? `at account ${opts.account}` : several ? 'at any account of this home' : 'on this account'} [ORDER NOT FOUND]`);
      }
      const show = opts.showCodes === true;
      const localOf = (row: (typeof found)[number]['row']) =>
        row ? { batchId: row.batchId, line: row.line, state: row.state, note: row.note, lastAnswer: row.lastAnswer ? (JSON.parse(row.lastAnswer) as unknown) : null } : null;
      const entries = found.map((f) => ({ account: f.account, ...(f.order ? orderJson(f.order, show) : { orderId, apiAnswer: 'not found' }), local: localOf(f.row) }));
      type Shown = Order & { account: string };
      const shown: Shown[] = found.filter((f) => f.order).map((f) => ({ ...f.order!, account: f.account }));
      const columns: Column<Shown>[] = [...(several ? [{ title: 'account', get: (o: Shown) => o.account }] : []), ...(orderColumns(show) as Column<Shown>[])];
      if (found.length === 1) printList(format, shown, columns, entries[0]);
      else printList(format, shown, columns, { orderId, accounts: found.map((f) => f.account), orders: entries });
      if (format === 'table') {
        if (found.length > 1) {
          process.stdout.write(`order id ${orderId} is at ${found.length} accounts (${found.map((f) => f.account).join(', ')}): each is a different order; to see one: topup order ${orderId} --account NAME\n`);
        }
        for (const f of found) {
          const at = several ? `at ${f.account}: ` : '';
          if (!f.order) process.stdout.write(`${at}the API does not find order ${orderId}\n`);
          const row = f.row;
          if (!row) continue;
          const times = [row.firstSentAt !== null && `sent ${when(row.firstSentAt)} UTC`, row.updatedAt && `last changed ${when(row.updatedAt)} UTC`].filter(Boolean).join(', ');
          process.stdout.write(`${at}placed by batch ${row.batchId}, line ${row.line} (${row.state}${times ? `; ${times}` : ''})${row.note ? `; ${row.note}` : ''}\n`);
          if (row.lastAnswer) process.stdout.write(`${at}last answer kept for that row: ${describeAudit(row.lastAnswer, 400)}\n`);
        }
      }
    } finally {
      await ctx.close();
    }
  });
}
