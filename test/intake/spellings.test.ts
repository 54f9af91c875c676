/**
 * Issue 21, "every column read as meant": the documented spellings of every order column
 * (columns.ts SPELLINGS), `Amount` / `Count` read as a quantity only when the rows show it is one,
 * columns that look like order fields but are not read (a file-level warning, and a key/card row
 * with a number of codes in such a column refused, never bought as 1), the column report, the
 * hint that a column of the reseller's own order numbers could be the trxid, and an .xls that is
 * really CSV text described as what it is.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/kernel/errors.js';
import { mapHeader, SPELLINGS } from '../../src/intake/columns.js';
import { settleColumns } from '../../src/intake/column-report.js';
import { openOrderFile } from '../../src/intake/formats/index.js';
import { createRowValidator, formatProblems, type RowVerdict } from '../../src/intake/validate.js';
import { loadCatalog, writeTemp } from './helpers.js';

const catalog = loadCatalog();

function run(columns: string[], rows: string[][]) {
  const v = createRowValidator(mapHeader(columns), catalog);
  const verdicts = rows.map((cells, i) => v.validate({ index: i, line: i + 2, cells }));
  return { verdicts, report: v.columns(), fileProblems: v.fileProblems() };
}
const orderOf = (v: RowVerdict | undefined) => {
  if (!v?.ok) throw new Error(`expected ok, got ${v ? formatProblems(v.problems) : 'nothing'}`);
  return v.order;
};
const problemsOf = (v: RowVerdict | undefined) => (v && !v.ok ? v.problems : []);

/** A file on disk, validated as validate and the daemon do: settleColumns, then every row. */
async function validateFile(text: string) {
  const path = writeTemp(text);
  const file = await openOrderFile(path);
  const header = await settleColumns(path, file.header.header, catalog);
  const v = createRowValidator(header, catalog);
  const verdicts: RowVerdict[] = [];
  for await (const run of file.batches) for (const row of run) verdicts.push(v.validate(row));
  return { verdicts, report: v.columns() };
}

describe('every spelling of the list is read as its field', () => {
  it('docs/input-files.md prints the list exactly: every spelling in its field\'s row, and no other', () => {
    const doc = readFileSync(new URL('../../docs/input-files.md', import.meta.url), 'utf8');
    for (const [field, { api, also }] of Object.entries(SPELLINGS)) {
      const row = new RegExp(`^\\| \`${field}\` \\|(.*)$`, 'm').exec(doc)?.[1];
      expect(row, `a row for ${field}`).toBeDefined();
      const [apiCell, alsoCell] = row!.split(' | ');
      expect([...apiCell!.matchAll(/`([^`]+)`/g)].map((m) => m[1])).toEqual([...api]);
      const written = [...alsoCell!.matchAll(/`([^`]+)`/g)].map((m) => m[1]).filter((w) => !['Amount', 'Count', 'pid', 'slug', 'pack'].includes(w!));
      expect(written).toEqual([...also]);
    }
  });

  it.each(SPELLINGS.quantity.also.map((s) => [s]))('"%s" is the quantity of a key', (spelling) => {
    const { verdicts, report } = run(['pid', spelling], [['701', '3']]);
    expect(orderOf(verdicts[0])).toMatchObject({ quantity: 3, amountUsd: 2.7, request: { pid: '701', trxid: '', quantity: 3 } });
    expect(report.columns[1]).toMatchObject({ column: spelling, read: [{ field: 'quantity' }], note: 'read as quantity (a common spelling)' });
  });

  it('a key/card quantity that cannot be read makes the row invalid, naming the column (never bought as 1)', () => {
    expect(problemsOf(run(['pid', 'Qty.'], [['701', '3 pcs']]).verdicts[0])).toEqual([{ column: 'Qty.', reason: 'must be a whole number of at least 1 (got "3 pcs")' }]);
  });

  it('pid, pack, trxid, maxPriceUsd and the line fields have spellings too', () => {
    expect(orderOf(run(['Product ID', 'Transaction ID', 'Max price (USD)', 'ID Pemain'], [['101', 'SO-1', '1.00', '5123456789']]).verdicts[0])).toMatchObject({
      request: { pid: '101', trxid: 'SO-1', userId: '5123456789' },
      maxPriceUsd: 1,
    });
    expect(orderOf(run(['slug', 'Package', 'Role ID'], [['pubg', '60 UC', '5123456789']]).verdicts[0]).request).toEqual({ pid: '101', trxid: '', userId: '5123456789' });
    expect(orderOf(run(['pid', 'Role ID', 'Zona'], [['301', '12345678', '2001']]).verdicts[0]).request).toEqual({ pid: '301', trxid: '', userId: '12345678', zoneId: '2001' });
    expect(orderOf(run(['pid', 'uid', 'Servidor'], [['401', '800123456', 'Asia']]).verdicts[0]).request.serverId).toBe('asia');
    expect(orderOf(run(['pid', 'Player ID', 'Região', 'Server ID'], [['501', 'abc123', 'Europe', '9001']]).verdicts[0]).request).toMatchObject({ region: 'Europe', moreId: '9001' });
  });

  it('the API name wins over a spelling; the spelling is carried through with a warning', () => {
    const { verdicts, report } = run(['pid', 'quantity', 'Qty'], [['701', '2', '5']]);
    expect(orderOf(verdicts[0]).quantity).toBe(2);
    expect(report.columns[2]).toMatchObject({ column: 'Qty', read: [] });
    expect(report.warnings).toEqual(['column "Qty": also a spelling of quantity, but column "quantity" is the quantity: carried through, not read']);
  });

  it('two spellings of one field without its API name are refused as ambiguous', () => {
    expect(() => mapHeader(['pid', 'Qty', 'Menge'])).toThrow(new InputFileError('columns "Qty" and "Menge" could each be the quantity; rename the one that holds it to "quantity" (and give the others other names)'));
  });

  it('a shop\'s own item number or package text beside the supplier\'s names is not taken for them', () => {
    // A pid column decides the pack: "Package" is the shop's description, carried through, not compared.
    const a = run(['pid', 'userId', 'Package'], [['101', '5123456789', 'UC for Ann']]);
    expect(orderOf(a.verdicts[0]).request.pid).toBe('101');
    expect(a.report.columns[2]?.note).toMatch(/^could be the pack, but the pid column decides each row's pack: carried through/);
    expect(a.report.warnings).toEqual([]);
    // slug + pack name the packs: "SKU" is the shop's own number.
    const b = run(['slug', 'pack', 'SKU', 'userId'], [['pubg', '60 UC', 'SHOP-77', '5123456789']]);
    expect(orderOf(b.verdicts[0]).request.pid).toBe('101');
  });
});

describe('a column that looks like an order field but is not read is named', () => {
  it('QTY_ORDER: a warning; a key row with 3 in it is refused, a row with 1 (or blank) is bought as 1', () => {
    const { verdicts, report } = run(['pid', 'QTY_ORDER', 'userId'], [['701', '3', ''], ['701', '1', ''], ['701', '', ''], ['101', '3', '5123456789']]);
    expect(problemsOf(verdicts[0])).toEqual([
      { column: 'QTY_ORDER', reason: '"3" looks like the number of codes to buy, but "QTY_ORDER" is not a column name topup reads as the quantity, so the row is not bought (not even as 1); rename the column to "quantity"' },
    ]);
    expect(orderOf(verdicts[1]).quantity).toBe(1);
    expect(orderOf(verdicts[2]).quantity).toBe(1);
    expect(orderOf(verdicts[3]).request).toEqual({ pid: '101', trxid: '', userId: '5123456789' });
    expect(report.warnings).toEqual([
      'column "QTY_ORDER" looks like a quantity but is not a name topup reads: a key/card row with a value other than 1 in it is refused, not bought as 1; rename it to "quantity" to buy that many codes',
    ]);
  });

  it('Quantity (pcs), Player-Id2, zone name, server_name2: each one warning naming it', () => {
    const { verdicts, report } = run(['pid', 'userId', 'Quantity (pcs)', 'Player-Id2', 'zone name', 'server_name2', 'Customer'], [['701', '', '2', '', '', '', 'Ann']]);
    expect(problemsOf(verdicts[0])[0]?.column).toBe('Quantity (pcs)');
    expect(report.warnings.map((w) => /^column "([^"]+)"/.exec(w)?.[1])).toEqual(['Quantity (pcs)', 'Player-Id2', 'zone name', 'server_name2']);
    expect(report.columns.find((c) => c.column === 'Customer')).toEqual({ column: 'Customer', position: 7, read: [], note: 'yours: carried through to the result' });
  });

  it('a lookalike beside a quantity column that is read is a warning only', () => {
    const { verdicts, report } = run(['pid', 'quantity', 'qty_delivered'], [['701', '2', '0']]);
    expect(orderOf(verdicts[0]).quantity).toBe(2);
    expect(report.warnings[0]).toMatch(/^column "qty_delivered" looks like the quantity but is not a name topup reads: it is carried through, not used/);
  });
});

describe('German headers (issue 30)', () => {
  it('Produkt-ID, Artikel-Nr, Spieler-ID, Zonen-ID, Menge, Transaktions-ID and Höchstpreis are read', () => {
    const a = run(['Produkt-ID', 'Spieler-ID', 'Transaktions-ID', 'Höchstpreis'], [['101', '5123456789', 'DE-1', '5']]);
    expect(orderOf(a.verdicts[0]).request).toEqual({ pid: '101', trxid: 'DE-1', userId: '5123456789' });
    expect(orderOf(a.verdicts[0]).maxPriceUsd).toBe(5);
    const b = run(['Artikel-Nr.', 'Menge'], [['701', '2']]);
    expect(orderOf(b.verdicts[0]).quantity).toBe(2);
    expect(b.report.columns[0]).toMatchObject({ column: 'Artikel-Nr.', read: [{ field: 'pid' }] });
    for (const h of ['Artikelnummer', 'Produktnummer', 'Art.-Nr.']) expect(mapHeader([h]).fields.pid).toBe(0);
    expect(mapHeader(['pid', 'Zonen-ID']).fields).toEqual({ pid: 0 }); // a line field: decided by the game (line-columns.ts)
  });

  it('a German name topup does not read is hinted as the field it looks like', () => {
    const { report } = run(['pid', 'Spielernummer', 'Höchstpreis EUR'], [['701', '', '']]);
    expect(report.warnings.map((w) => /^column "([^"]+)" looks like the (\w+)/.exec(w)?.slice(1, 3))).toEqual([['Spielernummer', 'userId'], ['Höchstpreis EUR', 'maxPriceUsd']]);
  });
});

describe('Amount and Count are read as the quantity only when the rows show it', () => {
  it('whole numbers on key/card rows only: read as the quantity', async () => {
    const { verdicts, report } = await validateFile('pid,Amount\n701,3\n801,2\n');
    expect(verdicts.map((v) => orderOf(v).quantity)).toEqual([3, 2]);
    expect(report.columns[1]).toMatchObject({ read: [{ field: 'quantity' }], note: 'read as quantity (every value a whole number, on key/card rows)' });
    expect((await validateFile('pid,Count\n701,4\n')).verdicts.map((v) => orderOf(v).quantity)).toEqual([4]);
  });

  it('decimals are money: carried through, each card bought once, and a warning says so', async () => {
    const { verdicts, report } = await validateFile('pid,Amount\n701,3\n801,10.50\n');
    expect(verdicts.map((v) => orderOf(v).quantity)).toEqual([1, 1]);
    expect(report.columns[1]?.read).toEqual([]);
    expect(report.warnings).toEqual([
      'column "Amount" holds values that are not whole numbers (line 3: "10.50"), so it is read as money, not as a quantity; each key/card row buys 1 code: if "Amount" is the number of codes to buy, rename it to "quantity"',
    ]);
  });

  it('the value shown in the pack\'s name (Steam 10 USD, Amount 10) may be money: not read', async () => {
    const { verdicts, report } = await validateFile('pid,Amount\n801,10\n');
    expect(orderOf(verdicts[0]).quantity).toBe(1);
    expect(report.warnings[0]).toMatch(/^column "Amount" holds 10 on line 2, the value shown in "Steam 10 USD", so it may be money/);
  });

  it('values on top-up rows: not a quantity (top-ups take none), top-ups unaffected', async () => {
    const { verdicts, report } = await validateFile('pid,userId,Amount\n101,5123456789,1.50\n701,,2\n');
    expect(orderOf(verdicts[0]).request).toEqual({ pid: '101', trxid: '', userId: '5123456789' });
    expect(orderOf(verdicts[1]).quantity).toBe(1);
    expect(report.columns[2]?.note).toMatch(/not whole numbers|top-up rows/);
  });
});

describe('the column report', () => {
  it('says which games read a label: "Server ID" is serverId for Wuthering Waves and moreId for Once Human', () => {
    const { report } = run(['pid', 'Player ID', 'Region', 'Server ID'], [['401', '800123456', '', 'asia'], ['501', 'abc123', 'Europe', '9001']]);
    expect(report.columns.map((c) => [c.column, c.note])).toEqual([
      ['pid', 'read as pid'],
      ['Player ID', 'read as userId for Wuthering Waves, Once Human'],
      ['Region', 'read as region for Once Human'],
      ['Server ID', 'read as serverId for Wuthering Waves; moreId for Once Human'],
    ]);
  });

  it('a column named like a line field that is not read says why', () => {
    expect(run(['pid', 'userId', 'Player ID'], [['101', '5123456789', 'x']]).report.columns[2]?.note).toBe('named like userId, but column "userId" is read as the userId: carried through');
    const keys = run(['pid', 'quantity', 'Player ID'], [['701', '2', 'Ann']]);
    expect(keys.report.columns[2]?.note).toBe('named like userId, but no pack in this file takes one: carried through');
    expect(keys.report.warnings).toEqual([]);
  });

  it.each(['Order No', 'Order ID', 'order_number', 'Invoice', 'Invoice No.', 'No. Pesanan', 'Nomor Pesanan', 'Bestellnummer', 'Número de pedido', 'Order #'])(
    'a file without trxid but with "%s" gets the hint to use it as the trxid',
    (name) => {
      const { report } = run(['pid', 'userId', name], [['101', '5123456789', 'SO-1']]);
      expect(report.hints).toEqual([expect.stringMatching(new RegExp(`^column "${name.replace(/[.#]/g, '\\$&')}" looks like your own order numbers: rename it to "trxid"`))]);
    },
  );

  it('no hint when the file has a trxid, or for a column that is not an order number', () => {
    expect(run(['pid', 'userId', 'trxid', 'Order No'], [['101', '5123456789', 'T1', 'SO-1']]).report.hints).toEqual([]);
    expect(run(['pid', 'userId', 'Order date', 'Order'], [['101', '5123456789', '2024-01-01', 'x']]).report.hints).toEqual([]);
  });
});

describe('an .xls is described as what it holds', () => {
  it('CSV text named .xls: told it is CSV text and to rename it .csv, not "an old Excel 97–2003 workbook"', async () => {
    const path = writeTemp('pid;quantity\r\nSTEAM-5;1\r\n', 'orders.xls');
    const err = await openOrderFile(path).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputFileError);
    expect((err as Error).message).toMatch(/^this file is named \.xls but is not an Excel workbook: it holds CSV text .*rename it to "orders\.csv"/);
    expect((err as Error).message).not.toMatch(/97–2003/);
  });

  it('an .xlsx named .xls is told to get its .xlsx name; a real old workbook is still an old workbook', async () => {
    const zip = writeTemp(Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4]), 'book.xls');
    await expect(openOrderFile(zip)).rejects.toThrow(/is an Excel workbook of the current kind \(\.xlsx\); rename it to "book\.xlsx"/);
    const ole = writeTemp(Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]), 'old.xls');
    await expect(openOrderFile(ole)).rejects.toThrow(/old Excel 97–2003 workbook/);
  });
});
