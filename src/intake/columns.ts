/**
 * Header row → order fields.
 *
 * A header cell is matched after trimming, lower-casing and dropping `_`, `-` and spaces, so
 * `userId`, `USERID`, ` user_id `, `user id` and `User-ID` all name the same field. The API's
 * own aliases (spec 4.5: `PID`, `trxId`, `idtrx`, `idTrx`, `userID`) reduce to these forms too.
 *
 * This is the part of the header decided without the catalog. The catalog's labels (`Player ID`,
 * `Zone ID`, `Server` …) and common names for the fields a game line needs are matched per line
 * by line-columns.ts. Every other column is carried through untouched, by position.
 */
import { InputFileError } from '../errors.js';

export type OrderField =
  | 'pid'
  | 'slug'
  | 'pack'
  | 'trxid'
  | 'userId'
  | 'zoneId'
  | 'serverId'
  | 'region'
  | 'moreId'
  | 'quantity'
  | 'maxPriceUsd';

export interface HeaderMap {
  /** Original header cells, in order. */
  columns: string[];
  /** Field → column index. */
  fields: Partial<Record<OrderField, number>>;
}

/** Normalised header spelling → field. Keys are what `normaliseName` produces. */
const NAMES: Readonly<Record<string, OrderField>> = Object.freeze({
  pid: 'pid',
  slug: 'slug',
  pack: 'pack',
  packname: 'pack',
  trxid: 'trxid',
  idtrx: 'trxid',
  userid: 'userId',
  zoneid: 'zoneId',
  serverid: 'serverId',
  region: 'region',
  moreid: 'moreId',
  quantity: 'quantity',
  maxpriceusd: 'maxPriceUsd',
});

export function normaliseName(name: string): string {
  return name.trim().toLowerCase().replace(/[\s_-]+/g, '');
}

/** The order field a header cell (or a service line's `required[].field`) names, if any. */
export function canonicalField(name: string): OrderField | undefined {
  return NAMES[normaliseName(name)];
}

/**
 * Duplicates are refused for order fields (which one would we send?) and for other non-blank
 * names too, because the result file repeats the header and two equal names there are ambiguous.
 * Blank header cells (Excel's trailing `;;;`) may repeat: they are carried by position.
 */
export function mapHeader(columns: string[]): HeaderMap {
  if (columns.every((c) => c.trim() === '')) {
    throw new InputFileError('the first row must be a header naming the columns, but it is empty');
  }
  const fields: Partial<Record<OrderField, number>> = {};
  const seen = new Map<string, number[]>();
  columns.forEach((cell, i) => {
    if (cell.trim() === '') return;
    const field = canonicalField(cell);
    const key = field ?? `other:${normaliseName(cell)}`;
    seen.set(key, [...(seen.get(key) ?? []), i]);
    if (field !== undefined && fields[field] === undefined) fields[field] = i;
  });

  const duplicates = [...seen.values()].filter((idx) => idx.length > 1);
  if (duplicates.length > 0) {
    const names = duplicates.map((idx) => idx.map((i) => `"${columns[i]}"`).join(' and ')).join('; ');
    throw new InputFileError(`the header names the same column more than once: ${names}; keep one of each`);
  }
  if (fields.pid === undefined && (fields.slug === undefined || fields.pack === undefined)) {
    const found = columns.slice(0, 8).map((c) => `"${c}"`).join(', ');
    throw new InputFileError(
      `the first row must be a header with a "pid" column (or "slug" and "pack" columns); found ${found}${columns.length > 8 ? ', …' : ''}`,
    );
  }
  return { columns, fields };
}

/** The user's own name for a field's column, or the field name when the file has no such column. */
export function columnName(header: HeaderMap, field: OrderField): string {
  const i = header.fields[field];
  return i === undefined ? field : (header.columns[i]?.trim() ?? field);
}
