/** `topup catalog [--slug S]`: the live packs, with pid, price and stock. */
import type { Command } from 'commander';
import { NotFoundError } from '../kernel/errors.js';
import { isActive } from '../intake/catalog-index.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, usd } from './output.js';

export function registerCatalog(program: Command): void {
  addFormatOptions(
    program
      .command('catalog')
      .description('List the packs on sale (GET /products): pid, game, pack, price, stock')
      .option('--slug <slug>', 'only the packs of this line (see topup services)')
      .option('--all', 'include packs that are not active'),
  ).action(async (opts: { slug?: string; all?: boolean; json?: boolean; csv?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const ctx = await openCommandContext(cmd);
    try {
      const { index } = await ctx.rt.account.catalog.get(0);
      const slug = opts.slug?.trim().toLowerCase();
      const products = index.products.filter((p) => (!slug || p.slug.toLowerCase() === slug) && (opts.all || isActive(p.status)));
      if (slug && products.length === 0) throw new NotFoundError(`no packs for slug "${opts.slug}" (see topup services for the slugs)`);
      printList(format, products, [
        { title: 'pid', get: (p) => p.id },
        { title: 'slug', get: (p) => p.slug },
        { title: 'game', get: (p) => p.gameName },
        { title: 'pack', get: (p) => p.serviceName },
        { title: 'category', get: (p) => p.category },
        { title: 'priceUsd', get: (p) => usd(p.price), right: true },
        { title: 'status', get: (p) => p.status },
        { title: 'stock', get: (p) => (p.inStock === false ? 0 : p.quantity), right: true },
      ]);
    } finally {
      await ctx.close();
    }
  });
}
