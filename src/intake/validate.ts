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
  freeFireIdProblem,
  idProblem,
  matchOption,
  optionList,
  parseUsd,
  parseWholeNumber,
  riotIdProblem,
  spreadsheetMangled,
  SPREADSHEET_HINT,
  zoneIdProblem,
} from './field-rules.js';
import { allBlank, type RawRow } from './parse.js';
import { roundCents } from '../money.js';

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
const ALL_FIELDS: readonly OrderField[] = [
  'pid', 'slug', 'pack', 'trxid', 'userId', 'zoneId', 'serverId', 'region', 'moreId', 'quantity', 'maxPriceUsd',
];
/** Body key order after pid and trxid, so the stored body reads the same for every row. */
const BODY_ORDER: readonly RequiredField['field'][] = ['userId', 'zoneId', 'serverId', 'region', 'moreId'];

/** What a row learns from its pack alone; worked out once per pack, not once per row. */
interface PackFacts {
  /** Problems every row ordering this pack has (not on sale, line closed, fields we cannot send). */
  problems: readonly RowProblem[];
  /** "Game (slug)", for messages. */
  game: string;
  /** True when `required` already lists fields in BODY_ORDER, so the body can be built in one go. */
  inBodyOrder: boolean;
}

/** The header, resolved once per file: where each field is and what the user calls its column. */
interface FileShape {
  /** Field → column index (the header's own map). */
  at: Partial<Record<OrderField, number>>;
  names: Readonly<Record<OrderField, string>>;
  /** Problems about which pack is meant go on pid when the file has it, else on pack. */
  packColumn: OrderField;
}

type Problems = RowProblem[];

function cellOf(cells: readonly string[], i: number | undefined): string {
  return i === undefined ? '' : (cells[i] ?? '').trim();
}

export function createRowValidator(header: HeaderMap, catalog: CatalogIndex): RowValidator {
  const trxidLines = new Map<string, number>();
  const names = {} as Record<OrderField, string>;
  for (const f of ALL_FIELDS) names[f] = columnName(header, f);
  const shape: FileShape = { at: header.fields, names, packColumn: header.fields.pid !== undefined ? 'pid' : 'pack' };
  const facts = new Map<CatalogEntry, PackFacts>();
  const factsOf = (entry: CatalogEntry): PackFacts => {
    let f = facts.get(entry);
    if (f === undefined) facts.set(entry, (f = packFacts(entry, shape)));
    return f;
  };
  const at = shape.at;

  return {
    validate(row: RawRow): RowVerdict {
      if (row.parseError !== undefined) return { ok: false, problems: [{ column: 'row', reason: row.parseError }] };
      const cells = row.cells;
      if (allBlank(cells)) {
        return { ok: false, problems: [{ column: 'row', reason: 'empty row (every cell is blank)' }] };
      }
      const problems: Problems = [];

      const trxid = cellOf(cells, at.trxid);
      if (trxid !== '') {
        const bad = idProblem(trxid);
        const folded = trxid.toLowerCase();
        const firstLine = trxidLines.get(folded);
        if (bad) add(problems, shape, 'trxid', bad);
        else if (firstLine !== undefined) {
          add(problems, shape, 'trxid', `"${trxid}" is already used on line ${firstLine} of this file; each order needs its own trxid`);
        }
        if (firstLine === undefined) trxidLines.set(folded, row.line);
      }

      const maxPriceText = cellOf(cells, at.maxPriceUsd);
      const maxPriceUsd = maxPriceText === '' ? undefined : parseUsd(maxPriceText);
      if (maxPriceText !== '' && maxPriceUsd === undefined) add(problems, shape, 'maxPriceUsd', `must be a price in USD like 1.50 (got "${maxPriceText}")`);

      const entry = findPack(cells, shape, problems, catalog);
      if (!entry) {
        const q = cellOf(cells, at.quantity);
        if (q !== '' && parseWholeNumber(q) === undefined) add(problems, shape, 'quantity', `must be a whole number (got "${q}")`);
        return { ok: false, problems };
      }

      const { product } = entry;
      const pack = factsOf(entry);
      for (const p of pack.problems) problems.push(p);

      const request: OrderRequest = { pid: product.id, trxid };
      for (const req of entry.required) {
        const value = requiredValue(req, entry, pack, cellOf(cells, at[req.field]), shape, problems);
        if (value !== undefined) request[req.field] = value;
      }

      const quantity = checkQuantity(entry, cellOf(cells, at.quantity), shape, problems);
      if (entry.kind === 'stock' && quantity !== undefined) request.quantity = quantity;

      if (maxPriceUsd !== undefined && product.price > maxPriceUsd + 1e-9) {
        add(problems, shape, 'maxPriceUsd', `the pack now costs ${product.price} USD, above your maximum of ${maxPriceUsd} USD`);
      }

      if (problems.length > 0 || quantity === undefined) return { ok: false, problems };
      return {
        ok: true,
        order: {
          request: pack.inBodyOrder ? request : ordered(request),
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

function add(problems: Problems, shape: FileShape, field: OrderField, reason: string): void {
  problems.push({ column: shape.names[field], reason });
}

function packFacts(entry: CatalogEntry, shape: FileShape): PackFacts {
  const { product, line } = entry;
  const game = `${product.gameName} (${product.slug})`;
  const problems: RowProblem[] = [];
  const column = shape.names[shape.packColumn];
  if (!isActive(product.status)) problems.push({ column, reason: `"${product.serviceName}" of ${game} is not on sale (status "${product.status}")` });
  if (line && DISABLED_LINE.test(line.status.trim())) problems.push({ column, reason: `${game} is not taking orders now (status "${line.status}")` });
  if (!line && entry.kind !== 'stock') problems.push({ column, reason: `${game} is not available now: the supplier does not list this game` });
  for (const f of entry.unsupported) problems.push({ column: f, reason: `${game} requires "${f}", which this tool cannot send` });
  const positions = entry.required.map((r) => BODY_ORDER.indexOf(r.field));
  const inBodyOrder = positions.every((p, i) => i === 0 || p > (positions[i - 1] as number));
  return { problems: Object.freeze(problems.map((p) => Object.freeze(p))), game, inBodyOrder };
}

function findPack(cells: readonly string[], shape: FileShape, problems: Problems, catalog: CatalogIndex): CatalogEntry | undefined {
  const pid = cellOf(cells, shape.at.pid);
  if (pid !== '') {
    const entry = catalog.byPid(pid);
    if (!entry) {
      add(problems, shape, 'pid', spreadsheetMangled(pid) ? `"${pid}": ${SPREADSHEET_HINT}` : `no pack with pid "${pid}" in the catalog`);
      return undefined;
    }
    const slug = cellOf(cells, shape.at.slug);
    const pack = cellOf(cells, shape.at.pack);
    const fold = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');
    if (slug !== '' && fold(slug) !== fold(entry.product.slug)) add(problems, shape, 'slug', `"${slug}" does not match pid ${pid}, which is ${entry.product.slug}`);
    if (pack !== '' && fold(pack) !== fold(entry.product.serviceName)) {
      add(problems, shape, 'pack', `"${pack}" does not match pid ${pid}, which is "${entry.product.serviceName}"`);
    }
    return entry;
  }
  const slug = cellOf(cells, shape.at.slug);
  const pack = cellOf(cells, shape.at.pack);
  if (slug === '' && pack === '') {
    add(problems, shape, 'pid', 'missing: give a pid, or a slug and a pack');
    return undefined;
  }
  if (slug === '') return void add(problems, shape, 'slug', 'missing: a pack name needs its game slug (or give a pid)');
  if (pack === '') return void add(problems, shape, 'pack', `missing: give the pack name for ${slug} (or a pid)`);

  const found = catalog.bySlugPack(slug, pack);
  if (found) return found;
  const candidates = catalog.slugPackCandidates(slug, pack);
  const active = candidates.filter((e) => isActive(e.product.status));
  if (active.length > 1) {
    add(problems, shape, 'pack', `"${pack}" names ${active.length} packs of ${slug} (pids ${active.map((e) => e.product.id).join(', ')}); use the pid column`);
    return undefined;
  }
  if (candidates[0]) return candidates[0];
  const slugKnown = catalog.line(slug) !== undefined || catalog.products.some((p) => p.slug.toLowerCase() === slug.toLowerCase());
  if (!slugKnown) add(problems, shape, 'slug', `no game with slug "${slug}" in the catalog`);
  else add(problems, shape, 'pack', `no pack named "${pack}" for ${slug} in the catalog`);
  return undefined;
}

/** Checks one field the line needs; returns the value to send (an option's value where options are listed). */
function requiredValue(
  req: RequiredField,
  entry: CatalogEntry,
  pack: PackFacts,
  value: string,
  shape: FileShape,
  problems: Problems,
): string | undefined {
  const { field, label } = req;
  if (value === '') {
    const where = shape.at[field] === undefined ? `the file has no ${field} column, and ` : '';
    add(problems, shape, field, `missing: ${where}${pack.game} needs ${label || field}`);
    return undefined;
  }
  const reason = fieldProblem(field, entry, pack, value);
  if (typeof reason === 'object') return reason.send;
  if (reason === undefined) return value;
  add(problems, shape, field, reason);
  return undefined;
}

/** A reason the value is refused, undefined when it is sent as written, or the listed option's value to send instead. */
function fieldProblem(field: RequiredField['field'], entry: CatalogEntry, pack: PackFacts, value: string): string | undefined | { send: string } {
  const line = entry.line;
  switch (field) {
    case 'userId':
      if (entry.kind === 'riot-id') return riotIdProblem(value);
      if (/^ff/i.test(entry.product.slug)) return freeFireIdProblem(value);
      return idProblem(value);
    case 'zoneId':
      return zoneIdProblem(value);
    case 'serverId': {
      const options = line?.serverIdOptions;
      if (!options || options.length === 0) return idProblem(value);
      const chosen = matchOption(value, options);
      if (chosen !== undefined) return { send: chosen };
      return spreadsheetMangled(value) ? `"${value}": ${SPREADSHEET_HINT}` : `"${value}" is not a server of ${pack.game}; choose one of: ${optionList(options)}`;
    }
    case 'region': {
      const options = line?.regionOptions;
      if (!options || options.length === 0) return /[\u0000-\u001f]/.test(value) ? 'contains invisible control characters' : undefined;
      const chosen = resolveRegion(value, options);
      if (chosen !== undefined) return { send: chosen };
      return `"${value}" is not a region of ${pack.game}; choose one of: ${optionList(options)}`;
    }
    case 'moreId':
      return idProblem(value);
  }
}

/** The quantity to order, or undefined when it is unusable (a problem is then added). */
function checkQuantity(entry: CatalogEntry, text: string, shape: FileShape, problems: Problems): number | undefined {
  const { product } = entry;
  const fail = (reason: string): undefined => void add(problems, shape, 'quantity', reason);
  if (entry.kind !== 'stock') {
    if (text === '') return 1;
    return fail('only game keys and gift cards take a quantity; leave it blank for top-ups');
  }
  const n = text === '' ? 1 : parseWholeNumber(text);
  if (n === undefined) {
    return fail(`must be a whole number of at least 1 (got "${text}")`);
  }
  const stock = product.quantity;
  if (product.inStock === false || stock === 0) {
    return fail(`"${product.serviceName}" is out of stock`);
  }
  const min = Math.max(1, product.quantityMin ?? 1);
  const max = Math.min(product.quantityMax ?? MAX_PER_ORDER, MAX_PER_ORDER);
  if (n > MAX_PER_ORDER) {
    return fail(`${n} is more than ${MAX_PER_ORDER}, the most one order may take`);
  }
  if (stock !== undefined && n > stock) {
    return fail(`only ${stock} in stock, ${n} requested`);
  }
  if (n < min || n > max) {
    return fail(min === max ? `must be ${min} for this pack (got ${n})` : `must be between ${min} and ${max} for this pack (got ${n})`);
  }
  return n;
}

/** Canonical key order, so the stored body reads the same for every row. */
function ordered(r: OrderRequest): OrderRequest {
  const out: OrderRequest = { pid: r.pid, trxid: r.trxid };
  for (const k of BODY_ORDER) if (r[k] !== undefined) out[k] = r[k];
  if (r.quantity !== undefined) out.quantity = r.quantity;
  return out;
}
