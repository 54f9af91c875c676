/**
 * What the reseller charged their own customer for a row, where they tell it (issue 33: revenue
 * and margin on the console, which only the reseller can know):
 *  - a file's own column named as a sale price (`sale price`, `salePriceUsd`, `sell price`,
 *    `selling price`, `resale price`, `sale_usd`, `Harga Jual`, `Verkaufspreis`, `Precio de venta` …,
 *    SALE_PRICE_SPELLINGS): still carried through to the result untouched; the column report says
 *    it is read as the sale price in USD;
 *  - an API order's `meta.salePriceUsd` (a number, or a decimal in a string).
 * A value that is not a plain non-negative amount (`12.50`, `12,50`, `$12.50`, `12.50 USD`) is not
 * read: the row then has no sale price and counts in no margin, never a wrong one. Never an input
 * to what is bought or at what price.
 */
import { headerKey } from './columns.js';

/**
 * The sale price's names, in the languages whose price-cap spellings the intake reads
 * (intake/columns.ts maxPriceUsd: English, German, Indonesian, Spanish, Portuguese, French,
 * Italian, Dutch, Turkish): a trial s37 file's `Harga Jual` was carried through and never read.
 * Each also with `USD`, `(USD)` or `in USD` after it. Compared by headerKey (case, spaces, `_`, `-`,
 * `.`, accents aside).
 */
export const SALE_PRICE_SPELLINGS: readonly string[] = Object.freeze([
  'sale price', 'sale', 'sell price', 'selling price', 'resale price', 'customer price', 'salePrice',
  'Verkaufspreis', 'VK-Preis', 'VK',
  'Harga Jual', 'Harga Penjualan', 'Harga Pelanggan',
  'Precio de venta', 'Precio venta', 'Preço de venda', 'Preço venda', 'Prix de vente', 'Prix vente',
  'Prezzo di vendita', 'Prezzo vendita', 'Verkoopprijs', 'Satış fiyatı', 'Satis fiyati',
]);
const NAMES = new Set(SALE_PRICE_SPELLINGS.flatMap((n) => [n, `${n} usd`, `${n} (usd)`, `${n} in usd`]).map(headerKey).filter((k) => k !== 'sale' && k !== 'vk'));
// `sale` and `VK` alone are too short to be sure of (a "sale" flag column): only with USD after them.

/** The 0-based position of the file's sale-price column, if it has exactly one. */
export function saleColumn(columns: readonly string[]): number | undefined {
  const at = columns.flatMap((c, i) => (NAMES.has(headerKey(c)) ? [i] : []));
  return at.length === 1 ? at[0] : undefined;
}

/** A sale-price name (any spelling above) followed by anything else: `Harga Jual (Rp)`, `Verkaufspreis EUR`. */
const SALE_STEMS = SALE_PRICE_SPELLINGS.map(headerKey).filter((k) => k.length >= 8);

/**
 * A column named like a sale price that is not read as one (another currency, `Harga Jual (Rp)`, or
 * a second sale-price column): the column report's hint names it, never a silent carry-through.
 * The sale price is read in USD only, as every money figure of the console is.
 */
export function saleLookalikes(columns: readonly string[]): number[] {
  const read = saleColumn(columns);
  return columns.flatMap((c, i) => {
    if (i === read || c.trim() === '') return [];
    const key = headerKey(c);
    return NAMES.has(key) || SALE_STEMS.some((s) => key.startsWith(s)) ? [i] : [];
  });
}

/** A sale price cell as USD, or null when it is empty or not a plain amount. */
export function parseSale(text: string | undefined): number | null {
  if (text === undefined) return null;
  const t = text.trim().replace(/^\$\s*/, '').replace(/\s*usd$/i, '');
  if (!/^\d{1,9}([.,]\d{1,4})?$/.test(t)) return null;
  const usd = Number(t.replace(',', '.'));
  return Number.isFinite(usd) ? usd : null;
}

/** An API order's meta.salePriceUsd, or null. */
export function saleFromMeta(meta: unknown): number | null {
  if (meta === null || typeof meta !== 'object') return null;
  const v = (meta as Record<string, unknown>).salePriceUsd;
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 && v < 1e9 ? v : null;
  return typeof v === 'string' ? parseSale(v) : null;
}
