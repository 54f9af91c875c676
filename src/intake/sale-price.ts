/**
 * What the reseller charged their own customer for a row, where they tell it (issue 33: revenue
 * and margin on the console, which only the reseller can know):
 *  - a file's own column named as a sale price (`sale price`, `salePriceUsd`, `sell price`,
 *    `selling price`, `resale price`, `sale_usd` …): still carried through to the result untouched;
 *    the column report says it is read as the sale price;
 *  - an API order's `meta.salePriceUsd` (a number, or a decimal in a string).
 * A value that is not a plain non-negative amount (`12.50`, `12,50`, `$12.50`, `12.50 USD`) is not
 * read: the row then has no sale price and counts in no margin, never a wrong one. Never an input
 * to what is bought or at what price.
 */
import { headerKey } from './columns.js';

const NAMES = new Set(['saleprice', 'salepriceusd', 'saleusd', 'sellprice', 'sellpriceusd', 'sellingprice', 'sellingpriceusd', 'resaleprice', 'resalepriceusd', 'customerprice', 'customerpriceusd']);

/** The 0-based position of the file's sale-price column, if it has exactly one. */
export function saleColumn(columns: readonly string[]): number | undefined {
  const at = columns.flatMap((c, i) => (NAMES.has(headerKey(c)) ? [i] : []));
  return at.length === 1 ? at[0] : undefined;
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
