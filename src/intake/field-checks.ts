/**
 * The checks of a game line's fields and of the quantity that need the catalog entry (options,
 * stock, the line's shape). Single-value rules live in field-rules.ts.
 */
import { resolveRegion } from '../api/regions.js';
import type { OrderRequest } from '../api/schemas.js';
import { isWellFormed, NOT_WELL_FORMED } from '../kernel/identity.js';
import type { CatalogEntry, RequiredField } from './catalog-index.js';
import { checkKindOfSlug } from '../config/player-check-settings.js';
import {
  digitsIdProblem,
  freeFireIdProblem,
  idProblem,
  matchOption,
  numberFormatDamage,
  optionList,
  parseWholeNumber,
  riotIdProblem,
  zoneIdProblem,
} from './field-rules.js';

const MAX_PER_ORDER = 500;

/** A reason the value is refused, undefined when it is sent as written, or the listed option's value to send instead. */
export function fieldProblem(field: RequiredField['field'], entry: CatalogEntry, game: string, value: string): string | undefined | { send: string } {
  const line = entry.line;
  switch (field) {
    case 'userId': {
      if (entry.kind === 'riot-id') return riotIdProblem(value);
      if (/^ff/i.test(entry.product.slug)) return freeFireIdProblem(value);
      const digits = digitsGame(entry);
      if (entry.kind === 'ml') return mlUserIdProblem(value, digits);
      return digits !== null ? digitsIdProblem(value, digits) : idProblem(value);
    }
    case 'zoneId':
      return zoneIdProblem(value);
    case 'serverId': {
      const options = line?.serverIdOptions;
      if (!options || options.length === 0) return idProblem(value);
      const chosen = matchOption(value, options);
      if (chosen !== undefined) return { send: chosen };
      return numberFormatDamage(value) ?? `"${value}" is not a server of ${game}; choose one of: ${optionList(options)}`;
    }
    case 'region': {
      const options = line?.regionOptions;
      if (!options || options.length === 0) return !isWellFormed(value) ? NOT_WELL_FORMED : /[\u0000-\u001f]/.test(value) ? 'contains invisible control characters' : undefined;
      const chosen = resolveRegion(value, options);
      if (chosen !== undefined) return { send: chosen };
      return `"${value}" is not a region of ${game}; choose one of: ${optionList(options)}`;
    }
    case 'moreId':
      return idProblem(value);
  }
}

/**
 * The game whose player ids are digits only (field-rules.ts digitsIdProblem), by the line's slug as
 * the supplier's player checks know it, or its game name (a real catalog's slug may differ); null
 * for any other line, whose ids may be names or carry letters ("player / uid / username as the line
 * defines", spec §2.1).
 */
function digitsGame(entry: CatalogEntry): string | null {
  if (entry.kind === 'stock' || entry.kind === 'riot-id') return null;
  const bySlug = checkKindOfSlug(entry.product.slug);
  const name = entry.product.gameName;
  if (bySlug === 'ml' || /mobile\s*legends/i.test(name)) return 'Mobile Legends';
  if (bySlug === 'pubg' || /^pubg/i.test(name)) return 'PUBG Mobile';
  return null;
}

/** `777888999 2005` on an ML line: most likely id and zone, but it could be grouped digits, so it is refused with the way to write it. */
function mlUserIdProblem(value: string, digits: string | null): string | undefined {
  const bad = digits !== null ? digitsIdProblem(value, digits) : idProblem(value);
  if (bad === undefined) return undefined;
  const m = /^(\d+)\s+(\d+)$/.exec(value);
  if (!m || numberFormatDamage(value)) return bad;
  return `"${value}": write the zone in the zoneId column, or together with the id as ${m[1]} (${m[2]})`;
}

/**
 * The quantity to order, or undefined when it is unusable (the reason is then added under `column`).
 * `availability: false`: the stock the catalog shows now is not judged (an order accepted before,
 * recovered after the store was lost: validate.ts RowValidatorOptions).
 */
export function checkQuantity(entry: CatalogEntry, text: string, problems: { column: string; reason: string }[], column: string, availability = true): number | undefined {
  const { product } = entry;
  const refuse = (reason: string): undefined => void problems.push({ column, reason });
  if (entry.kind !== 'stock') {
    // A top-up row buys one top-up: 1 says just that (and is not sent: the API refuses a
    // quantity on a top-up). More than one is never bought as one.
    if (text === '' || text === '1') return 1;
    const n = parseWholeNumber(text);
    if (n !== undefined && n > 1) return refuse(`a top-up is bought once per row: write ${n} rows to buy it ${n} times (only game keys and gift cards take a quantity)`);
    return refuse('only game keys and gift cards take a quantity; leave it blank (or 1) for top-ups');
  }
  const n = text === '' ? 1 : parseWholeNumber(text);
  if (n === undefined) {
    return refuse(`must be a whole number of at least 1 (got "${text}")`);
  }
  const stock = product.quantity;
  if (availability && (product.inStock === false || stock === 0)) {
    return refuse(`"${product.serviceName}" is out of stock`);
  }
  const min = Math.max(1, product.quantityMin ?? 1);
  // quantityMax follows the stock (the spec's catalog: min(stock, 500)): availability too.
  const max = availability ? Math.min(product.quantityMax ?? MAX_PER_ORDER, MAX_PER_ORDER) : MAX_PER_ORDER;
  if (n > MAX_PER_ORDER) {
    return refuse(`${n} is more than ${MAX_PER_ORDER}, the most one order may take`);
  }
  if (availability && stock !== undefined && n > stock) {
    return refuse(`only ${stock} in stock, ${n} requested`);
  }
  if (n < min || n > max) {
    return refuse(min === max ? `must be ${min} for this pack (got ${n})` : `must be between ${min} and ${max} for this pack (got ${n})`);
  }
  return n;
}

/** Canonical key order, so the stored body reads the same for every row. */
export function ordered(r: OrderRequest, bodyOrder: readonly RequiredField['field'][]): OrderRequest {
  const out: OrderRequest = { pid: r.pid, trxid: r.trxid };
  for (const k of bodyOrder) if (r[k] !== undefined) out[k] = r[k];
  if (r.quantity !== undefined) out.quantity = r.quantity;
  return out;
}
