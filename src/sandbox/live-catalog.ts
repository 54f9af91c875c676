/**
 * The catalog as the API shows it right now: the static catalog, admin price/status overrides
 * and live stock from the state database. Listings hide inactive lines and packs (spec §2.1
 * "Unavailable games are not listed", §2.2 "One row per active pack"); lookups still find them
 * so an order for them can be refused with the right error.
 */
import { STOCK_CATEGORIES } from './default-catalog.js';
import type { SandboxState } from './state.js';
import type { Catalog, CatalogProduct, ServiceLine } from './types.js';

export const MAX_QUANTITY = 500;
/** Key/card packs in an imported catalog that carry no stock figure get this much. */
export const DEFAULT_STOCK = 1000;

export class LiveCatalog {
  readonly #catalog: Catalog;
  readonly #state: SandboxState;

  constructor(catalog: Catalog, state: SandboxState) {
    this.#catalog = catalog;
    this.#state = state;
    for (const p of catalog.products) {
      if (isStockBased(p)) state.initStock(p.id, typeof p.quantity === 'number' ? p.quantity : DEFAULT_STOCK);
    }
  }

  line(slug: string): ServiceLine | undefined {
    return this.#catalog.services.find((s) => s.slug === slug);
  }

  /** The product with overrides and live stock applied, listed or not. */
  product(id: string): CatalogProduct | undefined {
    const base = this.#catalog.products.find((p) => p.id === id);
    return base && this.#live(base, this.#state.overrides());
  }

  services(): ServiceLine[] {
    return this.#catalog.services.filter((s) => s.status === 'active');
  }

  products(): CatalogProduct[] {
    const overrides = this.#state.overrides();
    const active = new Set(this.services().map((s) => s.slug));
    return this.#catalog.products
      .map((p) => this.#live(p, overrides))
      .filter((p) => p.status === 'active' && active.has(p.slug));
  }

  #live(p: CatalogProduct, overrides: ReturnType<SandboxState['overrides']>): CatalogProduct {
    const o = overrides.get(p.id);
    const out: CatalogProduct = { ...p, price: o?.price ?? p.price, status: o?.status ?? p.status };
    if (isStockBased(p)) {
      const stock = Math.max(0, this.#state.stock(p.id) ?? 0);
      Object.assign(out, { quantity: stock, inStock: stock > 0, quantityMin: 1, quantityMax: Math.min(stock, MAX_QUANTITY) });
    }
    return out;
  }
}

export function isStockBased(p: CatalogProduct): boolean {
  return STOCK_CATEGORIES.has(p.category) || typeof p.quantity === 'number';
}

export function isKeyOrCard(p: CatalogProduct): boolean {
  return STOCK_CATEGORIES.has(p.category);
}
