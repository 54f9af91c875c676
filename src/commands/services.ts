/** `topup services`: the lines (games) on sale and the fields an order for each needs. */
import type { Command } from 'commander';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList } from './output.js';

export function registerServices(program: Command): void {
  addFormatOptions(
    program.command('services').description('List the lines on sale (GET /services) and the fields an order for each needs'),
  ).action(async (opts: { json?: boolean; csv?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const ctx = await openCommandContext(cmd);
    try {
      const { index } = await ctx.rt.account.catalog.get(0);
      printList(format, index.services, [
        { title: 'slug', get: (s) => s.slug },
        { title: 'game', get: (s) => s.gameName },
        { title: 'product', get: (s) => s.productName },
        { title: 'status', get: (s) => s.status },
        { title: 'required', get: (s) => s.required.map((r) => r.field).join(' ') },
        { title: 'options', get: (s) => [...(s.serverIdOptions ?? []), ...(s.regionOptions ?? [])].map((o) => o.value).join(' | ') },
      ]);
    } finally {
      await ctx.close();
    }
  });
}
