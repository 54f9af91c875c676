/**
 * One RawRow → the exact order body to send, or every problem with it, before anything is spent.
 *
 * Choices:
 *  - A row whose cells are all blank is invalid ("empty row"), so every input row has a result.
 *  - Keys/cards without a quantity (column absent or cell blank) order 1.
 *  - Any non-blank quantity on a top-up line is refused, even "1": the API would reject it.
 *  - Fields the line does not need are ignored, never sent.
 *  - trxids are compared case-insensitively for the duplicate check (the API might not tell
 *    `A1` from `a1`, and a replay would silently skip the second row). The first one wins.
 *  - pid plus slug/pack in one row must agree; pid decides which pack.
 */
import { resolveRegion } from '../api/regions.js';
import type { OrderRequest } from '../api/schemas.js';
import { columnName, type HeaderMap, type OrderField } from './columns.js';
import { isActive, type CatalogEntry, type CatalogIndex, type LineKind, type RequiredField } from './catalog.js';
import {
  digitsProblem,
  idProblem,
  matchOption,
  optionList,
  parseUsd,
  parseWholeNumber,
  riotIdProblem,
  roundCents,
  spreadsheetMangled,
  SPREADSHEET_HINT,
  zoneIdProblem,
} from './field-rules.js';
import { allBlank, type RawRow } from './parse.js';

export interface RowProblem {
  /** The user's column name, or the field name when the column is absent; "row" for the whole row. */
  column: string;
  reason: string;
}

export interface ValidOrder {
  /** Exactly the POST /orders body; `trxid` is '' when the file gave none. */
  request: OrderRequest;
  givenTrxid: string | undefined;
  slug: string;
  packName: string;
  unitPriceUsd: number;
  quantity: number;
  /** unitPriceUsd × quantity, rounded to cents. */
  amountUsd: number;
  maxPriceUsd: number | undefined;
  kind: LineKind;
}

export type RowVerdict = { ok: true; order: ValidOrder } | { ok: false; problems: RowProblem[] };

/** Stateful: remembers the trxids of this file for the duplicate check. */
export interface RowValidator {
  validate(row: RawRow): RowVerdict;
}

export function formatProblems(problems: RowProblem[]): string {
  return problems.map((p) => `${p.column}: ${p.reason}`).join('; ');
}

const MAX_PER_ORDER = 500;
const DISABLED_LINE = /disabled|inactive|maintenance|closed|unavailable|suspended|^off$/i;

export function createRowValidator(header: HeaderMap, catalog: CatalogIndex): RowValidator {
  const trxidLines = new Map<string, number>();

  return {
    validate(row: RawRow): RowVerdict {
      if (row.parseError !== undefined) return { ok: false, problems: [{ column: 'row', reason: row.parseError }] };
      if (allBlank(row.cells)) {
        return { ok: false, problems: [{ column: 'row', reason: 'empty row (every cell is blank)' }] };
      }

      const problems: RowProblem[] = [];
      const cell = (field: OrderField): string => {
        const i = header.fields[field];
        return i === undefined ? '' : (row.cells[i] ?? '').trim();
      };
      const add = (field: OrderField, reason: string): void => {
        problems.push({ column: columnName(header, field), reason });
      };

      const trxid = cell('trxid');
      if (trxid !== '') {
        const bad = idProblem(trxid);
        const firstLine = trxidLines.get(trxid.toLowerCase());
        if (bad) add('trxid', bad);
        else if (firstLine !== undefined) add('trxid', `"${trxid}" is already used on line ${firstLine} of this file; each order needs its own trxid`);
        if (firstLine === undefined) trxidLines.set(trxid.toLowerCase(), row.line);
      }

      const maxPriceText = cell('maxPriceUsd');
      const maxPriceUsd = maxPriceText === '' ? undefined : parseUsd(maxPriceText);
      if (maxPriceText !== '' && maxPriceUsd === undefined) add('maxPriceUsd', `must be a price in USD like 1.50 (got "${maxPriceText}")`);

      const entry = findPack(cell, add, catalog);
      if (!entry) {
        const q = cell('quantity');
        if (q !== '' && parseWholeNumber(q) === undefined) add('quantity', `must be a whole number (got "${q}")`);
        return { ok: false, problems };
      }

      const { product, line } = entry;
      const game = (): string => `${product.gameName} (${product.slug})`;
      if (!isActive(product.status)) add(columnOfPack(header), `"${product.serviceName}" of ${game()} is not on sale (status "${product.status}")`);
      if (line && DISABLED_LINE.test(line.status.trim())) add(columnOfPack(header), `${game()} is not taking orders now (status "${line.status}")`);
      if (!line && entry.kind !== 'stock') add(columnOfPack(header), `${game()} is not available now: the supplier does not list this game`);
      for (const f of entry.unsupported) problems.push({ column: f, reason: `${game()} requires "${f}", which this tool cannot send` });

      const request: OrderRequest = { pid: product.id, trxid };
      for (const req of entry.required) {
        const value = requiredValue(req, entry, cell(req.field), header, add);
        if (value !== undefined) request[req.field] = value;
      }

      const quantity = checkQuantity(entry, cell('quantity'), add);
      if (entry.kind === 'stock' && quantity !== undefined) request.quantity = quantity;

      if (maxPriceUsd !== undefined && product.price > maxPriceUsd + 1e-9) {
        add('maxPriceUsd', `the pack now costs ${product.price} USD, above your maximum of ${maxPriceUsd} USD`);
      }

      if (problems.length > 0 || quantity === undefined) return { ok: false, problems };
      return {
        ok: true,
        order: {
          request: ordered(request),
          givenTrxid: trxid === '' ? undefined : trxid,
          slug: product.slug,
          packName: product.serviceName,
          unitPriceUsd: product.price,
          quantity,
          amountUsd: roundCents(product.price * quantity),
          maxPriceUsd,
          kind: entry.kind,
        },
      };
    },
  };
}

type Add = (field: OrderField, reason: string) => void;

/** Problems about which pack is meant go on pid when the file has it, else on pack. */
function columnOfPack(header: HeaderMap): OrderField {
  return header.fields.pid !== undefined ? 'pid' : 'pack';
}

function findPack(cell: (f: OrderField) => string, add: Add, catalog: CatalogIndex): CatalogEntry | undefined {
  const pid = cell('pid');
  const slug = cell('slug');
  const pack = cell('pack');
  if (pid !== '') {
    const entry = catalog.byPid(pid);
    if (!entry) {
      add('pid', spreadsheetMangled(pid) ? `"${pid}": ${SPREADSHEET_HINT}` : `no pack with pid "${pid}" in the catalog`);
      return undefined;
    }
    const fold = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');
    if (slug !== '' && fold(slug) !== fold(entry.product.slug)) add('slug', `"${slug}" does not match pid ${pid}, which is ${entry.product.slug}`);
    if (pack !== '' && fold(pack) !== fold(entry.product.serviceName)) {
      add('pack', `"${pack}" does not match pid ${pid}, which is "${entry.product.serviceName}"`);
    }
    return entry;
  }
  if (slug === '' && pack === '') {
    add('pid', 'missing: give a pid, or a slug and a pack');
    return undefined;
  }
  if (slug === '') return void add('slug', 'missing: a pack name needs its game slug (or give a pid)');
  if (pack === '') return void add('pack', `missing: give the pack name for ${slug} (or a pid)`);

  const found = catalog.bySlugPack(slug, pack);
  if (found) return found;
  const candidates = catalog.slugPackCandidates(slug, pack);
  const active = candidates.filter((e) => isActive(e.product.status));
  if (active.length > 1) {
    add('pack', `"${pack}" names ${active.length} packs of ${slug} (pids ${active.map((e) => e.product.id).join(', ')}); use the pid column`);
    return undefined;
  }
  if (candidates[0]) return candidates[0];
  const slugKnown = catalog.line(slug) !== undefined || catalog.products.some((p) => p.slug.toLowerCase() === slug.toLowerCase());
  if (!slugKnown) add('slug', `no game with slug "${slug}" in the catalog`);
  else add('pack', `no pack named "${pack}" for ${slug} in the catalog`);
  return undefined;
}

/** Checks one field the line needs; returns the value to send (an option's value where options are listed). */
function requiredValue(req: RequiredField, entry: CatalogEntry, value: string, header: HeaderMap, add: Add): string | undefined {
  const { field, label } = req;
  const game = (): string => `${entry.product.gameName} (${entry.product.slug})`;
  if (value === '') {
    const where = header.fields[field] === undefined ? `the file has no ${field} column, and ` : '';
    add(field, `missing: ${where}${game()} needs ${label || field}`);
    return undefined;
  }
  const fail = (reason: string | undefined): string | undefined => {
    if (reason === undefined) return value;
    add(field, reason);
    return undefined;
  };
  const line = entry.line;
  switch (field) {
    case 'userId':
      if (entry.kind === 'riot-id') return fail(riotIdProblem(value));
      if (/^ff/i.test(entry.product.slug)) return fail(digitsProblem(value, 5, 20));
      return fail(idProblem(value));
    case 'zoneId':
      return fail(zoneIdProblem(value));
    case 'serverId': {
      const options = line?.serverIdOptions;
      if (!options || options.length === 0) return fail(idProblem(value));
      const chosen = matchOption(value, options);
      if (chosen !== undefined) return chosen;
      return fail(spreadsheetMangled(value) ? `"${value}": ${SPREADSHEET_HINT}` : `"${value}" is not a server of ${game()}; choose one of: ${optionList(options)}`);
    }
    case 'region': {
      const options = line?.regionOptions;
      if (!options || options.length === 0) return fail(/[\u0000-\u001f]/.test(value) ? 'contains invisible control characters' : undefined);
      const chosen = resolveRegion(value, options);
      if (chosen !== undefined) return chosen;
      return fail(`"${value}" is not a region of ${game()}; choose one of: ${optionList(options)}`);
    }
    case 'moreId':
      return fail(idProblem(value));
  }
}

/** The quantity to order, or undefined when it is unusable (a problem is then added). */
function checkQuantity(entry: CatalogEntry, text: string, add: Add): number | undefined {
  const { product } = entry;
  if (entry.kind !== 'stock') {
    if (text === '') return 1;
    add('quantity', 'only game keys and gift cards take a quantity; leave it blank for top-ups');
    return undefined;
  }
  const n = text === '' ? 1 : parseWholeNumber(text);
  if (n === undefined) {
    add('quantity', `must be a whole number of at least 1 (got "${text}")`);
    return undefined;
  }
  const stock = product.quantity;
  if (product.inStock === false || stock === 0) {
    add('quantity', `"${product.serviceName}" is out of stock`);
    return undefined;
  }
  const min = Math.max(1, product.quantityMin ?? 1);
  const max = Math.min(product.quantityMax ?? MAX_PER_ORDER, MAX_PER_ORDER);
  if (n > MAX_PER_ORDER) {
    add('quantity', `${n} is more than ${MAX_PER_ORDER}, the most one order may take`);
    return undefined;
  }
  if (stock !== undefined && n > stock) {
    add('quantity', `only ${stock} in stock, ${n} requested`);
    return undefined;
  }
  if (n < min || n > max) {
    add('quantity', min === max ? `must be ${min} for this pack (got ${n})` : `must be between ${min} and ${max} for this pack (got ${n})`);
    return undefined;
  }
  return n;
}

/** Canonical key order, so the stored body reads the same for every row. */
function ordered(r: OrderRequest): OrderRequest {
  const out: OrderRequest = { pid: r.pid, trxid: r.trxid };
  for (const k of ['userId', 'zoneId', 'serverId', 'region', 'moreId'] as const) if (r[k] !== undefined) out[k] = r[k];
  if (r.quantity !== undefined) out.quantity = r.quantity;
  return out;
}
