/**
 * `topup catalog [--slug S]`: the live packs, with pid, price and stock. `--compare`: each pack at
 * every account of the home (accounts.toml), its pid, price and stock there, the cheapest marked.
 */
import type { Command } from 'commander';
import { NotFoundError, coerceError } from '../kernel/errors.js';
import { isActive } from '../intake/catalog-index.js';
import type { AccountIndex } from '../account/routing.js';
import { comparePacks, type ComparedPack, type PackOffer } from '../ops/account-views.js';
import type { Runtime } from '../runtime.js';
import { openCommandContext } from './context.js';
import { addFormatOptions, formatOf, printList, usd, type Format } from './output.js';

export function registerCatalog(program: Command): void {
  addFormatOptions(
    program
      .command('catalog')
      .description('List the packs on sale (GET /products): pid, game, pack, price, stock')
      .option('--slug <slug>', 'only the packs of this line (see topup services)')
      .option('--all', 'include packs that are not active')
      .option('--compare', 'each pack at every account (accounts.toml): pid, price and stock there, the cheapest marked'),
  ).action(async (opts: { slug?: string; all?: boolean; compare?: boolean; json?: boolean; csv?: boolean }, cmd: Command) => {
    const format = formatOf(opts);
    const ctx = await openCommandContext(cmd);
    try {
      const slug = opts.slug?.trim().toLowerCase();
      if (opts.compare) {
        await compare(ctx.rt, format, slug, opts);
        return;
      }
      const { index } = await ctx.rt.account.catalog.get(0);
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

/** One line per pack and account: the table and the CSV read down a pack's accounts. */
interface OfferLine {
  pack: ComparedPack;
  offer: PackOffer;
  first: boolean;
}

async function compare(rt: Runtime, format: Format, slug: string | undefined, opts: { slug?: string; all?: boolean }): Promise<void> {
  // Every account's catalog read now (not the cached one); an account that cannot be read is named, not hidden.
  const list: AccountIndex[] = [];
  const unreadable: { account: string; error: string }[] = [];
  for (const a of rt.accounts) {
    try {
      list.push({ name: a.id, index: (await a.catalog.get(0)).index });
    } catch (err) {
      unreadable.push({ account: a.id, error: coerceError(err).message });
    }
  }
  if (list.length === 0) throw new NotFoundError(`no account's catalog could be read: ${unreadable.map((u) => `${u.account}: ${u.error}`).join('; ')}`);
  const packs = comparePacks(list, rt.routing.packAliases)
    .filter((p) => !slug || p.slug.toLowerCase() === slug)
    .map((p) => (opts.all ? p : { ...p, offers: p.offers.filter((o) => isActive(o.status)) }))
    .filter((p) => p.offers.length > 0);
  if (slug && packs.length === 0) throw new NotFoundError(`no packs for slug "${opts.slug}" at any account (see topup services for the slugs)`);
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify({ accounts: rt.accounts.map((a) => a.id), unreadable, packs }, null, 2)}\n`);
    return;
  }
  for (const u of unreadable) process.stderr.write(`warning: account ${u.account}: its catalog cannot be read (${u.error}); it is left out below\n`);
  const lines: OfferLine[] = packs.flatMap((pack) => pack.offers.map((offer, i) => ({ pack, offer, first: i === 0 })));
  // The table names a pack once, on its first account's line; the CSV repeats it on every line.
  const named = (get: (l: OfferLine) => string) => (l: OfferLine) => (format === 'table' && !l.first ? '' : get(l));
  printList(format, lines, [
    { title: 'slug', get: named((l) => l.pack.slug) },
    { title: 'game', get: named((l) => l.pack.game) },
    { title: 'pack', get: named((l) => l.pack.pack) },
    { title: 'account', get: (l) => l.offer.account },
    { title: 'pid', get: (l) => l.offer.pid },
    { title: 'priceUsd', get: (l) => usd(l.offer.priceUsd), right: true },
    { title: 'stock', get: (l) => l.offer.stock ?? '', right: true },
    { title: 'status', get: (l) => l.offer.status },
    { title: 'cheapest', get: (l) => (l.pack.cheapest !== l.offer.account ? '' : l.pack.offers.length === 1 ? 'only here' : 'cheapest') },
  ]);
}
