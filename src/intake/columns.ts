/**
 * Header row → order fields.
 *
 * A header cell is matched by its key (`headerKey`): trimmed, lower-cased, accents dropped
 * (`Quantité` = `quantite`), and without spaces, `_`, `-`, `.`, `:` and apostrophes, so `userId`,
 * `USERID`, ` user_id `, `user id`, `User-ID` and `Qty.` = `qty` all name what they look like.
 *
 * SPELLINGS below is THE list of the spellings topup reads (docs/input-files.md "Column
 * headers" prints it): per field, the API's own names (spec 4.5, with its aliases `PID`, `trxId`,
 * `idtrx`, `idTrx`, `userID`) and the other ways people write the column. How strongly each kind
 * counts:
 *  - pid, slug, pack, trxid, quantity, maxPriceUsd (decided here, once per file): the API's name
 *    wins; otherwise the one column with a spelling from the list. A spelling beside the API's
 *    name is carried through (with a warning, two columns for one field); two spellings without
 *    the API's name is ambiguous and refused (which one would we send?). Two special cases:
 *    pid spellings (`Product ID`, `SKU` …) are read only in a file with no other way to name its
 *    packs (no pid, no slug + pack), and slug/pack spellings (`Package`, …) only in a file with
 *    no pid column: a shop's own item number or package text is not taken for the supplier's.
 *  - userId, zoneId, serverId, region, moreId: the API's name here; the catalog's labels and
 *    the spellings of the list per game line (line-columns.ts), where they are the weakest kind.
 *  - `Amount` and `Count` (QUANTITY_IF_WHOLE) may be a quantity or money: read as the quantity
 *    only after the file's rows show it (settleColumns in column-report.ts): every value a whole
 *    number, on key/card rows only, none equal to its card's face value.
 * Every other column is carried through untouched, by position; one whose name looks like an
 * order field (`QTY_ORDER`, `Quantity (pcs)`, `Player-Id2`) is named in a file-level warning
 * (column-report.ts).
 */
import { TRXID_KEYS } from '../kernel/identity.js';
import { InputFileError } from '../kernel/errors.js';

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

/** How a column came to be read as its field: the API's name, a spelling of the list, or the file's rows (Amount/Count). */
export type ReadVia = 'api' | 'spelling' | 'rows';

export interface HeaderMap {
  /** Original header cells, in order. */
  columns: string[];
  /** Field → column index. */
  fields: Partial<Record<OrderField, number>>;
  /** Field → how its column was recognised (absent: by the API's name). */
  via?: Partial<Record<OrderField, ReadVia>>;
  /** Column index → why a column that names an order field is not read as it (for the column report). */
  unread?: Map<number, { field: OrderField; why: string; warn: boolean }>;
  /** `Amount` / `Count` columns that may be the quantity: decided from the rows (column-report.ts settleColumns). */
  maybeQuantity?: number[];
  /** Warnings about the columns decided from the rows (settleColumns). */
  warnings?: string[];
}

/**
 * Every spelling topup reads, per field. Written as people write them; matched by headerKey.
 * `api`: the API's names. `also`: other spellings (for the line fields, userId … moreId, these are
 * the "common names", the weakest kind: line-columns.ts).
 */
export const SPELLINGS: Readonly<Record<OrderField, { api: readonly string[]; also: readonly string[] }>> = Object.freeze({
  pid: { api: ['pid', 'PID'], also: ['Product ID', 'Product code', 'SKU', 'ID Produk', 'Kode Produk', 'Produkt-ID', 'Produktnummer', 'Produktcode', 'Artikel-Nr', 'Artikelnummer', 'Art.-Nr.'] },
  slug: { api: ['slug'], also: ['Game slug'] },
  pack: { api: ['pack', 'packName'], also: ['serviceName', 'Package', 'Package name', 'Paket', 'Nama Paket', 'Denomination', 'Paketname'] },
  trxid: { api: TRXID_KEYS, also: ['trx', 'Trx ID', 'Trx No', 'No Trx', 'Transaction ID', 'ID Transaksi', 'Transaktions-ID', 'Transaktionsnummer'] },
  userId: {
    api: ['userId', 'userID'],
    also: [
      'player', 'Player ID', 'Player UID', 'user', 'uid', 'Game ID', 'Riot ID', 'ID Player', 'ID Pemain', 'Role ID',
      'Character ID', 'Spieler-ID', 'Spieler', 'Benutzer-ID', 'Nutzer-ID', 'ID Jugador', 'ID de jugador', 'ID Jogador',
    ],
  },
  zoneId: { api: ['zoneId'], also: ['zone', 'Zona', 'ID Zona', 'Zone No', 'Zonen-ID', 'Zone-Nr'] },
  serverId: { api: ['serverId'], also: ['server', 'Servidor', 'Serveur', 'ID Server', 'Server name'] },
  region: { api: ['region'], also: ['Região', 'Regione'] },
  moreId: { api: ['moreId'], also: [] },
  quantity: {
    api: ['quantity'],
    also: [
      'Qty', 'Qty.', 'Qnty', 'Pcs', 'Menge', 'Anzahl', 'Stück', 'Stk', 'Cantidad', 'Cant.', 'Quantité', 'Qté',
      'Quantidade', 'Qtd', 'Qtde', 'Quantità', 'Qtà', 'Aantal', 'Ilość', 'Jumlah', 'Jml', 'Kuantitas', 'Adet', 'Miktar',
      'Kol-vo', 'Кол-во', 'Количество', 'Số lượng', 'จำนวน', '数量', '수량',
    ],
  },
  maxPriceUsd: {
    api: ['maxPriceUsd'],
    also: [
      'Max price', 'Max price USD', 'Max price (USD)', 'Max USD', 'Price limit', 'Max unit price', 'Höchstpreis', 'Höchstpreis USD', 'Höchstpreis (USD)', 'Max. Preis', 'Preisgrenze', 'Preislimit',
      'Harga Maks', 'Harga Maksimal', 'Harga Maksimum', 'Harga Max', 'Maks Harga', 'Batas Harga',
      'Precio máximo', 'Precio max', 'Preço máximo', 'Preço max', 'Prix max', 'Prix maximum', 'Prezzo massimo', 'Prezzo max',
      'Max prijs', 'Maximale prijs', 'Maks fiyat', 'Azami fiyat',
    ],
  },
});

/** Read as the quantity only when the file's rows show they are one (column-report.ts settleColumns). */
export const QUANTITY_IF_WHOLE: readonly string[] = Object.freeze(['Amount', 'Count']);

/** The old normal form (case, spaces, `_`, `-`): still what tells two carried-through columns apart. */
export function normaliseName(name: string): string {
  return name.trim().toLowerCase().replace(/[\s_-]+/g, '');
}

/** What a header cell is matched by: normaliseName, without accents, `.`, `:` or apostrophes. */
export function headerKey(name: string): string {
  return normaliseName(name.normalize('NFKD').replace(/\p{M}/gu, '')).replace(/[.:'’`]+/g, '');
}

const FIXED: readonly OrderField[] = ['pid', 'slug', 'pack', 'trxid', 'quantity', 'maxPriceUsd'];

function keyMap(pick: (f: OrderField) => readonly string[], fields: readonly OrderField[]): Map<string, OrderField> {
  const m = new Map<string, OrderField>();
  for (const f of fields) for (const s of pick(f)) m.set(headerKey(s), f);
  return m;
}

/** The API's names, for every field. */
const API = keyMap((f) => SPELLINGS[f].api, Object.keys(SPELLINGS) as OrderField[]);
/** The other spellings of the fields decided here (pid … maxPriceUsd). */
const ALSO = keyMap((f) => SPELLINGS[f].also, FIXED);
const MAYBE_QUANTITY = new Set(QUANTITY_IF_WHOLE.map(headerKey));

/** The order field a header cell (or a service line's `required[].field`) names by the API's own name, if any. */
export function canonicalField(name: string): OrderField | undefined {
  return API.get(headerKey(name));
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
  const via: Partial<Record<OrderField, ReadVia>> = {};
  const unread = new Map<number, { field: OrderField; why: string; warn: boolean }>();
  const seen = new Map<string, number[]>();
  const spelled = new Map<OrderField, number[]>();
  const maybeQuantity: number[] = [];
  columns.forEach((cell, i) => {
    if (cell.trim() === '') return;
    const key = headerKey(cell);
    const field = API.get(key);
    seen.set(field ?? `other:${normaliseName(cell)}`, [...(seen.get(field ?? `other:${normaliseName(cell)}`) ?? []), i]);
    if (field !== undefined) {
      if (fields[field] === undefined) fields[field] = i;
      return;
    }
    const also = ALSO.get(key);
    if (also !== undefined) spelled.set(also, [...(spelled.get(also) ?? []), i]);
    else if (MAYBE_QUANTITY.has(key)) maybeQuantity.push(i);
  });

  const duplicates = [...seen.values()].filter((idx) => idx.length > 1);
  if (duplicates.length > 0) {
    const names = duplicates.map((idx) => idx.map((i) => `"${columns[i]}"`).join(' and ')).join('; ');
    throw new InputFileError(`the header names the same column more than once: ${names}; keep one of each`);
  }

  const q = (i: number | undefined) => `"${columns[i as number]?.trim()}"`;
  const hasPackNames = () => fields.slug !== undefined && fields.pack !== undefined;
  for (const field of FIXED) {
    const idx = spelled.get(field);
    if (!idx) continue;
    const api = fields[field];
    if (api !== undefined) {
      for (const i of idx) unread.set(i, { field, warn: true, why: `also a spelling of ${field}, but column ${q(api)} is the ${field}: carried through, not read` });
      continue;
    }
    if (field === 'pid' && hasPackNames()) {
      for (const i of idx) unread.set(i, { field, warn: false, why: `could be the pid, but the file names its packs by slug and pack: carried through, not read` });
      continue;
    }
    if ((field === 'slug' || field === 'pack') && fields.pid !== undefined) {
      for (const i of idx) unread.set(i, { field, warn: false, why: `could be the ${field}, but the ${columnName({ columns, fields }, 'pid')} column decides each row's pack: carried through, not read` });
      continue;
    }
    if (idx.length > 1) {
      throw new InputFileError(`columns ${idx.map(q).join(' and ')} could each be the ${field}; rename the one that holds it to "${field}" (and give the others other names)`);
    }
    fields[field] = idx[0] as number;
    via[field] = 'spelling';
  }

  if (fields.pid === undefined && (fields.slug === undefined || fields.pack === undefined)) {
    throw new InputFileError(missingPidText(columns, fields));
  }
  const header: HeaderMap = { columns, fields, via, unread };
  if (maybeQuantity.length > 0) {
    if (fields.quantity !== undefined) {
      for (const i of maybeQuantity) unread.set(i, { field: 'quantity', warn: false, why: `column ${q(fields.quantity)} is the quantity: carried through, not read` });
    } else header.maybeQuantity = maybeQuantity;
  }
  return header;
}

/**
 * The refusal of a header without a pid (or slug and pack): which of its columns topup understood,
 * and as what, which it did not, and what it needs. It used to list only the first eight cells,
 * so a reseller could not tell that "Spieler-ID" had been read and "Produkt" had not (issue 30).
 */
function missingPidText(columns: readonly string[], fields: Partial<Record<OrderField, number>>): string {
  const line = lineSpellings();
  const known: string[] = [];
  const unknown: string[] = [];
  for (const cell of columns) {
    if (cell.trim() === '') continue;
    const key = headerKey(cell);
    const field = API.get(key) ?? ALSO.get(key) ?? line.get(key) ?? (MAYBE_QUANTITY.has(key) ? 'quantity' : undefined);
    if (field !== undefined) known.push(`"${cell.trim()}" (${field})`);
    else unknown.push(`"${cell.trim()}"`);
  }
  const list = (xs: string[]): string => (xs.length === 0 ? 'none' : `${xs.slice(0, 8).join(', ')}${xs.length > 8 ? `, … (${xs.length - 8} more)` : ''}`);
  const pids = SPELLINGS.pid.also.filter((n) => ['Product ID', 'SKU', 'Produkt-ID', 'Artikel-Nr', 'ID Produk'].includes(n)).map((n) => `"${n}"`).join(', ');
  return (
    `the first row must be a header with a "pid" column (or "slug" and "pack" columns), and this one has ${known.length === 0 ? 'none of the columns topup reads' : 'neither'}. ` +
    `Its columns recognised: ${list(known)}; not recognised: ${list(unknown)}. ` +
    `Rename the column that holds the pack ids to "pid" (also read: ${pids} …), or name the game and pack columns "slug" and "pack"; docs/input-files.md lists every spelling topup reads${pidHint(columns, fields)}`
  );
}

/** The rename hint for the one column whose name is close to a pid spelling (closePidColumn), or nothing. */
function pidHint(columns: readonly string[], fields: Partial<Record<OrderField, number>>): string {
  const close = closePidColumn(columns, fields);
  // Only a hint: a `Produk` column may hold names, so the reseller decides (docs/input-files.md).
  return close === undefined ? '' : `; if column "${columns[close]?.trim()}" holds the supplier's product codes (pids like ML-86), rename it to "pid"`;
}

/**
 * The one column, not read as anything, whose name is close to a pid spelling (`Produk`,
 * `Produkt`, `Kode`, `Product`): one contains the other. None when no column or several are.
 */
function closePidColumn(columns: readonly string[], fields: Partial<Record<OrderField, number>>): number | undefined {
  const read = new Set(Object.values(fields));
  const targets = [...SPELLINGS.pid.api, ...SPELLINGS.pid.also].map(headerKey);
  const hits = columns.flatMap((c, i) => {
    const n = headerKey(c);
    if (n.length < 3 || read.has(i) || canonicalField(c) !== undefined) return [];
    return targets.some((t) => t.includes(n) || (t.length >= 3 && n.includes(t))) ? [i] : [];
  });
  return hits.length === 1 ? hits[0] : undefined;
}

/**
 * The column the intake reads each row's trxid from, by the same rule (mapHeader): the API's name,
 * else the one column with a trxid spelling (`ID Transaksi`, `Transaction ID` …). The result fills
 * that column in place (outbox/results.ts). Found by the API's name alone, a file headed
 * `ID Transaksi` got a second `trxid` column, filled only for the rows stored for sending: its
 * invalid rows showed an empty trxid beside the one the file gave them (trial D6). A header the
 * intake refuses has no rows to report; the API's name is still honoured there.
 */
export function trxidColumn(columns: readonly string[]): number | null {
  try {
    const at = mapHeader([...columns]).fields.trxid;
    if (at !== undefined) return at;
  } catch (err) {
    if (!(err instanceof InputFileError)) throw err;
  }
  const api = columns.findIndex((c) => canonicalField(c) === 'trxid');
  return api < 0 ? null : api;
}

/** The user's own name for a field's column, or the field name when the file has no such column. */
export function columnName(header: HeaderMap, field: OrderField): string {
  const i = header.fields[field];
  return i === undefined ? field : (header.columns[i]?.trim() ?? field);
}

/** Common spellings of a line field (userId … moreId), by headerKey: line-columns.ts's weakest kind. */
export function lineSpellings(): Map<string, OrderField> {
  return keyMap((f) => SPELLINGS[f].also, ['userId', 'zoneId', 'serverId', 'region', 'moreId']);
}
