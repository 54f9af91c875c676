/**
 * `topup balance`: the balance, and what unfinished batches still have to spend. With several
 * accounts (accounts.toml): one line per account, each with its own balance and reserved USD.
 */
import type { Command } from 'commander';
import { Priority } from '../api/client.js';
import { coerceError } from '../kernel/errors.js';
import { ExitCode } from '../kernel/exit-codes.js';
import { namedAccounts, reservedByAccount } from '../ops/account-views.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, usd } from './output.js';

export function registerBalance(program: Command): void {
  addFormatOptions(program.command('balance').description('Show the balance (GET /balance) and the USD that unfinished batches still have to spend (per account with accounts.toml)')).action(
    async (opts: { json?: boolean; csv?: boolean }, cmd: Command) => {
      const format = formatOf(opts);
      const ctx = await openCommandContext(cmd);
      try {
        const mode = ctx.config.sandbox ? 'SANDBOX' : 'LIVE';
        if (namedAccounts(ctx.config)) {
          const reserved = reservedByAccount(ctx.rt);
          const rows = [];
          for (const a of ctx.rt.accounts) {
            // One account that cannot be read does not hide the others' balances.
            const b = await a.client.balance({ priority: Priority.lookup }).catch((err: unknown) => coerceError(err));
            const read = b instanceof Error ? null : b;
            rows.push({
              account: a.id,
              balanceUsd: read?.balanceUsd ?? null,
              currency: read?.currency ?? null,
              reservedUsd: reserved.get(a.id) ?? 0,
              error: b instanceof Error ? b.message : null,
              mode: a.setting.url === null ? 'SANDBOX' : mode,
              at: new Date(ctx.rt.clock.now()).toISOString(),
            });
          }
          printList(format, rows, [
            { title: 'account', get: (r) => r.account },
            { title: 'balance', get: (r) => usd(r.balanceUsd), right: true },
            { title: 'currency', get: (r) => r.currency },
            { title: 'reservedByUnfinishedBatches', get: (r) => usd(r.reservedUsd), right: true },
            { title: 'mode', get: (r) => r.mode },
            { title: 'error', get: (r) => r.error },
          ], { accounts: rows });
          if (rows.some((r) => r.error !== null)) process.exitCode = ExitCode.NotAllCompleted;
          return;
        }
        const b = await ctx.rt.account.client.balance({ priority: Priority.lookup });
        const row = {
          balanceUsd: b.balanceUsd,
          currency: b.currency,
          reservedUsd: ctx.rt.rows.reservedUsd(),
          mode,
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
