/**
 * `topup template SLUG`: a header and one example row with exactly the columns an order for that
 * line needs, taken from the live catalog (so a new line or a changed requirement shows at once).
 * The example row passes `topup validate`; replace its values with real ones.
 */
import type { Command } from 'commander';
import { csvText } from '../kernel/csv-text.js';
import { NotFoundError } from '../kernel/errors.js';
import type { CatalogEntry, RequiredField } from '../intake/catalog-index.js';
import { isActive } from '../intake/catalog-index.js';
import { safeCell } from '../outbox/cell-safety.js';
import { openCommandContext } from './context.js';
import { systemEntropy, type Entropy } from '../kernel/entropy.js';

export function exampleValue(entry: CatalogEntry, field: RequiredField['field']): string {
  const line = entry.line;
  switch (field) {
    case 'userId':
      if (entry.kind === 'riot-id') return 'PlayerName#EUW1';
      return '5123456789';
    case 'zoneId':
      return '2001';
    case 'serverId':
      return line?.serverIdOptions?.[0]?.value ?? '1001';
    case 'region':
      return line?.regionOptions?.[0]?.value ?? 'eu';
    case 'moreId':
      return '1001';
  }
}

/**
 * The example row's trxid: the pack's id and a random part, so no two templates (nor the same one
 * printed twice) share one. A reseller who copies the rows of two templates into one file, or
 * drops two files made from them, keeps two purchases: with one example trxid for every template
 * (`SHOP-1001`, as before), the second row was a repeat of the first and never bought.
 */
export function exampleTrxid(pid: string, entropy: Pick<Entropy, 'hex'> = systemEntropy): string {
  const pack = pid.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 24).toUpperCase() || 'PACK';
  return `MYSHOP-${pack}-${entropy.hex(3).toUpperCase()}`;
}

/** What the template says of the trxid (on stderr, after the CSV, and in --help). */
export const TRXID_NOTE = 'trxid: your own order number, unique per purchase: a new one for every row you ever send (or leave it blank and one is made from the file). The example is only an example: replace it; a trxid already used is never bought again';

/**
 * The columns the line needs, then `trxid`: the reseller's own order number. With it, every
 * purchase has its own id: a file dropped twice, edited, or retried can never buy a row twice,
 * and the supplier's history shows the reseller's numbers. Left blank, one is derived from the file.
 */
export function templateFor(entry: CatalogEntry, entropy: Pick<Entropy, 'hex'> = systemEntropy): { header: string[]; example: string[] } {
  const header = ['pid', ...entry.required.map((r) => r.field)];
  const example = [entry.product.id, ...entry.required.map((r) => exampleValue(entry, r.field))];
  if (entry.kind === 'stock') {
    header.push('quantity');
    example.push('1');
  }
  header.push('trxid');
  example.push(exampleTrxid(entry.product.id, entropy));
  return { header, example };
}

export function registerTemplate(program: Command): void {
  program
    .command('template')
    .description('Print a CSV header and one example row with exactly the columns an order for line SLUG needs')
    .argument('<slug>', 'line slug (see topup services)')
    .option('--pid <pid>', 'use this pack in the example row (default: the first pack on sale)')
    .addHelpText('after', `\nExample: topup template pubg > pubg-orders.csv   (then edit the rows, check with topup validate, and move the file into inbox/)\n\nThe ${TRXID_NOTE}. Each template prints an example trxid of its own, so rows copied from two templates never share one.`)
    .action(async (slug: string, opts: { pid?: string }, cmd: Command) => {
      const ctx = await openCommandContext(cmd);
      try {
        const { index } = await ctx.rt.account.catalog.get(0);
        const want = slug.trim().toLowerCase();
        const packs = index.products.filter((p) => p.slug.toLowerCase() === want && isActive(p.status));
        const product = opts.pid ? packs.find((p) => p.id === opts.pid) : packs[0];
        if (!product) {
          const slugs = [...new Set(index.products.filter((p) => isActive(p.status)).map((p) => p.slug))].sort();
          throw new NotFoundError(
            opts.pid && packs.length > 0
              ? `no pack with pid "${opts.pid}" on sale for ${slug} (see topup catalog --slug ${slug})`
              : `no line "${slug}" with packs on sale; slugs: ${slugs.join(', ')}`,
          );
        }
        const t = templateFor(index.byPid(product.id)!);
        // The values come from the supplier's catalog: guarded like every other CSV cell we write.
        process.stdout.write(csvText([t.header.map(safeCell), t.example.map(safeCell)]));
        process.stderr.write(`# ${product.gameName}: example pack "${product.serviceName}" (${product.price} USD); other packs: topup catalog --slug ${product.slug}\n`);
        process.stderr.write(`# ${TRXID_NOTE}\n`);
      } finally {
        await ctx.close();
      }
    });
}
