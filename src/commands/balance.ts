/** `topup balance`: the account's balance, and what unfinished batches still have to spend. */
import type { Command } from 'commander';
import { Priority } from '../api/client.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, usd } from './output.js';

export function registerBalance(program: Command): void {
  addFormatOptions(program.command('balance').description('Show the balance (GET /balance) and the USD that unfinished batches still have to spend')).action(
    async (opts: { json?: boolean; csv?: boolean }, cmd: Command) => {
      const format = formatOf(opts);
      const ctx = await openCommandContext(cmd);
      try {
        const b = await ctx.rt.account.client.balance({ priority: Priority.lookup });
        const row = {
          balanceUsd: b.balanceUsd,
          currency: b.currency,
          reservedUsd: ctx.rt.rows.reservedUsd(),
          mode: ctx.config.sandbox ? 'SANDBOX' : 'LIVE',
          at: new Date(ctx.rt.clock.now()).toISOString(),
        };
        printList(format, [row], [
          { title: 'balance', get: (r) => usd(r.balanceUsd), right: true },
          { title: 'currency', get: (r) => r.currency },
          { title: 'reservedByUnfinishedBatches', get: (r) => usd(r.reservedUsd), right: true },
          { title: 'mode', get: (r) => r.mode },
        ], row);
      } finally {
        await ctx.close();
      }
    },
  );
}
