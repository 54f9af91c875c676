/**
 * No column is silently ignored: how each column of a file was read, said once per file (by
 * `topup validate`, the console's quote and the batch summary), and the warnings about columns
 * that look like order fields but are not read.
 *
 * Every column is either read as an order field (and the report says which, and for which games
 * a game line's field) or carried through to the result as the reseller's own. A carried column
 * whose name looks like an order field (`QTY_ORDER`, `Quantity (pcs)`, `Player-Id2`, `zone name`)
 * is a file-level warning naming it; when it looks like a QUANTITY and a key/card row holds a
 * value other than 1 in it, that row is refused (validate.ts), never bought as 1.
 *
 * `Amount` and `Count` may be a quantity or money, so `settleColumns` reads the file's rows once
 * before the real pass (only for files that have such a column and no quantity column) and reads
 * the column as the quantity only when every value in it is a whole number on a key/card row and
 * none equals its card's face value (`Steam $5` with Amount 5 could be five dollars). Deciding per
 * row instead would buy five cards for a `5` in a money column whose other values are `5.15`.
 */
import type { CatalogEntry, CatalogIndex } from './catalog-index.js';
import { headerKey, type HeaderMap, type OrderField } from './columns.js';
import { parseWholeNumber } from './field-rules.js';
import { openOrderFile } from './formats/index.js';
import { saleColumn, saleLookalikes } from './sale-price.js';

/** How one column of the file was read. */
export interface ColumnReading {
  /** The header cell as written (trimmed). */
  column: string;
  /** 1-based position in the header. */
  position: number;
  /** The order fields it was read as ([] when carried through); a game line's field names the games. */
  read: { field: OrderField; games?: string[] }[];
  /** One sentence for people: `read as quantity (a common spelling)`, `yours: carried through to the result`. */
  note: string;
}

export interface ColumnReport {
  columns: ColumnReading[];
  /** Columns that look like order fields but are not read, and other doubts about the columns. */
  warnings: string[];
  /** Advice that changes nothing by itself (a column of the reseller's own order numbers could be the trxid). */
  hints: string[];
}

/** What the validator knows at the end about one game line's columns (pack-facts.ts LinePlan). */
export interface PlanView {
  game: string;
  at: Partial<Record<OrderField, number>>;
}

/** Names that look like an order field, by headerKey; tested on columns carried through only. */
const LOOKS_LIKE: readonly [RegExp, OrderField][] = [
  [/qty|quant|menge|anzahl|cantidad|jumlah|jml|adet|kolvo|колво|количеств|aantal|ilosc|qtd|qte|pcs|stuck/, 'quantity'],
  [/trx|transaction|transaksi|transaktion/, 'trxid'],
  [/^pid|pid$|productid|produkid|idproduk|productcode|kodeproduk|sku|produktid|produktn|produktcode|artikeln|artikelid|artnr/, 'pid'],
  // A cap in any language: `max`/`maks`/`batas`/`limit`… beside `price`/`harga`/`precio`/`prix`… in either order.
  [
    /maxprice|pricelimit|pricecap|maxusd|hochstpreis|maxpreis|preisgrenze|preislimit|(?:max|maks|batas|limit|cap|grenze|massim|maxim|azami)\w*(?:price|preis|harga|precio|preco|prix|prezzo|prijs|fiyat)|(?:price|preis|harga|precio|preco|prix|prezzo|prijs|fiyat)\w*(?:max|maks|batas|limit|cap|grenze|massim|maxim)/,
    'maxPriceUsd',
  ],
  [/player|userid|uid|riotid|roleid|gameid|spieler|benutzer|nutzerid/, 'userId'],
  [/zone|zona/, 'zoneId'],
  [/server|servidor|serveur/, 'serverId'],
  [/region|regiao/, 'region'],
  [/moreid/, 'moreId'],
  [/slug/, 'slug'],
  [/pack|paket/, 'pack'],
];

/**
 * `jumlah` (Indonesian/Malay: amount, number) beside a money word is an amount of money, not a count:
 * `Jumlah Bayar` (amount paid), `Jumlah Harga`, `Jumlah Rp`, `Total Jumlah Tagihan` (trial s35: a
 * false quantity warning). `Jumlah` alone, or `Jumlah Barang` (number of items), is still a lookalike.
 */
const MONEY_AMOUNT = /(?:jumlah|jml)\w*(?:bayar|dibayar|pembayaran|harga|uang|rp|rupiah|idr|usd|tagihan|biaya|nominal|dana|saldo|modal|untung)|(?:bayar|dibayar|pembayaran|harga|uang|tagihan|biaya|nominal)\w*(?:jumlah|jml)/;

/** A quantity beyond doubt (not `Jumlah Bayar`, an amount paid): its key/card rows are refused rather than bought as 1. */
const SURELY_QUANTITY = /qty|quantit|quantidade|menge|anzahl|cantidad|kolvo|колво|количеств|aantal|ilosc|adet|pcs/;

/** A column of the reseller's own order numbers, by headerKey: `Order No`, `Order ID`, `Invoice`, `No. Pesanan`, `Bestellnummer`. */
const ORDER_WORDS = 'order|bestell|auftrag|pedido|commande|pesanan|invoice|rechnung|faktur|factura|fattura|siparis';
const ORDER_NUMBER = new RegExp(
  `^(?:(?:${ORDER_WORDS})(?:no|nr|num|number|nummer|numero|id|ref|reference|code|#)|(?:invoice|rechnung|faktur|factura|fattura|pesanan)|(?:no|nr|nomor|num|numero|id|ref|kode|n°|nº)(?:de|do|du|of)?(?:${ORDER_WORDS}))$`,
);

export interface Lookalike {
  index: number;
  field: OrderField;
  /** A quantity beyond doubt: key/card rows with another value than 1 in it are refused. */
  surelyQuantity: boolean;
}

/** Columns carried through whose names look like order fields. */
export function lookalikeColumns(header: HeaderMap, lineFieldNames: (key: string) => OrderField | undefined): Lookalike[] {
  const read = new Set(Object.values(header.fields));
  const out: Lookalike[] = [];
  header.columns.forEach((c, i) => {
    if (c.trim() === '' || read.has(i) || header.unread?.has(i)) return;
    const key = headerKey(c);
    // Named exactly like a line field (`Player ID`, `zone`): that is understood, not a lookalike.
    if (lineFieldNames(key) !== undefined) return;
    const hit = LOOKS_LIKE.find(([re]) => re.test(key));
    if (!hit) return;
    const field = hit[1];
    if (field === 'quantity' && MONEY_AMOUNT.test(key)) return;
    // `Package` beside a pid is the shop's description of the pack, not a misspelt order field.
    if ((field === 'pack' || field === 'slug') && header.fields.pid !== undefined) return;
    out.push({ index: i, field, surelyQuantity: field === 'quantity' && SURELY_QUANTITY.test(key) });
  });
  return out;
}

const quoted = (header: HeaderMap, i: number): string => `"${header.columns[i]?.trim()}"`;

function gamesText(games: readonly string[]): string {
  return games.length <= 4 ? games.join(', ') : `${games.slice(0, 4).join(', ')} and ${games.length - 4} more`;
}

/**
 * The report, once every row has been read. `lineFieldOf`: the line field a column's name names
 * (the API's name, a common spelling or a label of a game in the file), for the note on a
 * column that no game in the file needed.
 */
export function columnReport(
  header: HeaderMap,
  plans: readonly PlanView[],
  lookalikes: readonly Lookalike[],
  lineFieldOf: (i: number) => OrderField | undefined,
): ColumnReport {
  const byCol = new Map<number, ColumnReading['read']>();
  const add = (i: number, field: OrderField, game?: string): void => {
    const read = byCol.get(i) ?? [];
    byCol.set(i, read);
    const same = read.find((r) => r.field === field);
    if (!game) {
      if (!same) read.push({ field });
      return;
    }
    if (same) {
      if (!same.games?.includes(game)) same.games = [...(same.games ?? []), game];
    } else read.push({ field, games: [game] });
  };
  for (const f of ['pid', 'slug', 'pack', 'trxid', 'quantity', 'maxPriceUsd'] as const) {
    const i = header.fields[f];
    if (i !== undefined) add(i, f);
  }
  for (const p of plans) for (const [f, i] of Object.entries(p.at) as [OrderField, number][]) add(i, f, p.game);

  const looks = new Map(lookalikes.map((l) => [l.index, l]));
  const saleAt = saleColumn(header.columns);
  const warnings: string[] = [];
  const columns: ColumnReading[] = [];
  header.columns.forEach((c, i) => {
    const column = c.trim();
    if (column === '') return;
    const read = byCol.get(i) ?? [];
    let note: string;
    if (read.length > 0) {
      const how = (f: OrderField): string => {
        const v = header.via?.[f];
        return v === 'spelling' ? ' (a common spelling)' : v === 'rows' ? ' (every value a whole number, on key/card rows)' : '';
      };
      note = `read as ${read.map((r) => (r.games ? `${r.field} for ${gamesText(r.games)}` : `${r.field}${how(r.field)}`)).join('; ')}`;
    } else if (header.unread?.has(i)) {
      const u = header.unread.get(i)!;
      note = u.why;
      if (u.warn) warnings.push(`column "${column}": ${u.why}`);
    } else if (looks.has(i)) {
      const l = looks.get(i)!;
      note = `looks like the ${l.field}, but is not a name topup reads: carried through, not used`;
      const quantityRead = header.fields.quantity !== undefined;
      warnings.push(
        l.surelyQuantity && !quantityRead
          ? `column "${column}" looks like a quantity but is not a name topup reads: a key/card row with a value other than 1 in it is refused, not bought as 1; rename it to "quantity" to buy that many codes`
          : `column "${column}" looks like the ${l.field} but is not a name topup reads: it is carried through, not used; if it holds the ${l.field}, rename it to "${l.field}"`,
      );
    } else {
      const named = lineFieldOf(i);
      const other = named === undefined ? undefined : plans.map((p) => p.at[named]).find((j) => j !== undefined && j !== i);
      note =
        named === undefined ? (i === saleAt ? 'yours: carried through to the result, and read as your sale price in USD (the console\'s revenue and margin)' : 'yours: carried through to the result')
          : other !== undefined ? `named like ${named}, but column ${quoted(header, other)} is read as the ${named}: carried through`
            : `named like ${named}, but no pack in this file takes one: carried through`;
    }
    columns.push({ column, position: i + 1, read, note });
  });
  warnings.push(...(header.warnings ?? []));

  const hints: string[] = [];
  if (header.fields.trxid === undefined) {
    const own = header.columns.findIndex((c, i) => c.trim() !== '' && !byCol.has(i) && ORDER_NUMBER.test(headerKey(c)));
    if (own >= 0) {
      hints.push(
        `column ${quoted(header, own)} looks like your own order numbers: rename it to "trxid" to use them as the trxids, so a re-drop, an edited copy or a retry of this file can never buy a row twice (without a trxid column each row's trxid comes from the file's bytes)`,
      );
    }
  }
  const sales = saleLookalikes(header.columns);
  if (sales.length > 0) {
    // Only the console's margin reads it: a hint, never a warning (nothing bought depends on it).
    hints.push(
      `${sales.map((i) => `column ${quoted(header, i)}`).join(' and ')} ${sales.length > 1 ? 'look' : 'looks'} like your sale price but ${sales.length > 1 ? 'are' : 'is'} not read as one` +
        `${saleAt === undefined && sales.length > 1 ? ' (more than one sale-price column: none is read)' : ''}: the console's margin reads one sale price per row, in USD, from a column named "salePriceUsd" (or "Sale price", "Harga Jual", "Verkaufspreis", "Precio de venta" …, with or without "USD"); carried through to the result`,
    );
  }
  return { columns, warnings, hints };
}

/** The numbers a pack's name or price shows (`Steam $5` → 5): an Amount equal to one may be money. */
function faceValues(entry: CatalogEntry): number[] {
  const out = [...entry.product.serviceName.matchAll(/\d+(?:[.,]\d+)?/g)].map((m) => Number(m[0].replace(',', '.')));
  out.push(Math.round(entry.product.price));
  return out.filter((n) => Number.isInteger(n) && n >= 2);
}

function packOf(cells: readonly string[], header: HeaderMap, catalog: CatalogIndex): CatalogEntry | undefined {
  const cell = (f: OrderField): string => {
    const i = header.fields[f];
    return i === undefined ? '' : (cells[i] ?? '').trim();
  };
  const pid = cell('pid');
  if (pid !== '') return catalog.byPid(pid);
  const slug = cell('slug');
  const pack = cell('pack');
  return slug !== '' && pack !== '' ? catalog.bySlugPack(slug, pack) : undefined;
}

interface Evidence {
  /** Whole numbers on key/card rows, and how many of them are not 1. */
  keyWhole: number;
  keyNotOne: number;
  notWhole?: { line: number; text: string };
  onTopUp?: { line: number; text: string };
  face?: { line: number; text: string; pack: string };
}

/**
 * Decides the `Amount` / `Count` columns (HeaderMap.maybeQuantity) from the file's rows: returns
 * the header with the one that is surely a quantity read as one, and the warnings to give
 * (HeaderMap.warnings).
 */
export async function settleColumns(path: string, header: HeaderMap, catalog: CatalogIndex): Promise<HeaderMap> {
  const candidates = header.maybeQuantity ?? [];
  if (candidates.length === 0) return header;
  const evidence: Evidence[] = candidates.map(() => ({ keyWhole: 0, keyNotOne: 0 }));
  const file = await openOrderFile(path);
  try {
    for await (const run of file.batches) {
      for (const row of run) {
        if (row.parseError !== undefined) continue;
        const entry = packOf(row.cells, header, catalog);
        if (!entry) continue;
        candidates.forEach((col, k) => {
          const text = (row.cells[col] ?? '').trim();
          const e = evidence[k] as Evidence;
          if (text === '') return;
          const at = { line: row.line, text };
          if (entry.kind !== 'stock') {
            e.onTopUp ??= at;
            return;
          }
          const n = parseWholeNumber(text);
          if (n === undefined) {
            e.notWhole ??= at;
            return;
          }
          if (n !== 1) e.keyNotOne++;
          e.keyWhole++;
          if (faceValues(entry).includes(n)) e.face ??= { ...at, pack: entry.product.serviceName };
        });
      }
    }
  } finally {
    file.close();
  }

  const unread = new Map(header.unread);
  const warnings: string[] = [...(header.warnings ?? [])];
  const passing = candidates.filter((_, k) => {
    const e = evidence[k] as Evidence;
    return e.keyWhole > 0 && !e.notWhole && !e.onTopUp && !e.face;
  });
  const out: HeaderMap = { ...header, fields: { ...header.fields }, via: { ...header.via }, unread, warnings };
  delete out.maybeQuantity;
  candidates.forEach((col, k) => {
    const e = evidence[k] as Evidence;
    const name = quoted(header, col);
    if (passing.length === 1 && passing[0] === col) {
      out.fields.quantity = col;
      out.via!.quantity = 'rows';
      return;
    }
    const why =
      passing.length > 1 && passing.includes(col) ? `could be the quantity, and so could ${passing.filter((p) => p !== col).map((p) => quoted(header, p)).join(' and ')}`
        : e.notWhole ? `holds values that are not whole numbers (line ${e.notWhole.line}: "${e.notWhole.text}"), so it is read as money, not as a quantity`
          : e.onTopUp ? `holds values on top-up rows (line ${e.onTopUp.line}: "${e.onTopUp.text}"), which take no quantity, so it is not read as one`
            : e.face ? `holds ${e.face.text} on line ${e.face.line}, the value shown in "${e.face.pack}", so it may be money and is not read as a quantity`
              : 'is blank on every key/card row';
    unread.set(col, { field: 'quantity', warn: false, why: `${why}: carried through, not read` });
    if (e.keyNotOne > 0) {
      warnings.push(`column ${name} ${why}; each key/card row buys 1 code: if ${name} is the number of codes to buy, rename it to "quantity"`);
    }
  });
  return out;
}

/**
 * A retry batch reads the cells of the batch it retries (ops/retry.ts), a few of its rows only:
 * its Amount / Count column is read as that batch read it, never decided again from the rows
 * left, which could buy 3 codes where the batch it retries bought (or tried) 1.
 */
export function keepEarlierReading(header: HeaderMap, earlier: ColumnReport): HeaderMap {
  const candidates = header.maybeQuantity ?? [];
  if (candidates.length === 0) return header;
  const out: HeaderMap = { ...header, fields: { ...header.fields }, via: { ...header.via }, unread: new Map(header.unread) };
  delete out.maybeQuantity;
  for (const col of candidates) {
    const before = earlier.columns.find((c) => c.position === col + 1);
    if (before?.read.some((r) => r.field === 'quantity') && out.fields.quantity === undefined) {
      out.fields.quantity = col;
      out.via!.quantity = 'rows';
    } else {
      out.unread!.set(col, { field: 'quantity', warn: false, why: 'not read as a quantity by the batch this retries: carried through, not read' });
    }
  }
  return out;
}
