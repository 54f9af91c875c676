/**
 * .xlsx order files: read with exceljs's streaming reader into the same rows as a CSV, typed
 * cells noted, the zip checked before anything is inflated, every other file type refused.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/kernel/errors.js';
import { openOrderFile, type RawRow } from '../../src/intake/formats/index.js';
import { openXlsx } from '../../src/intake/formats/xlsx.js';
import { guardWorkbookZip, sheetList } from '../../src/intake/formats/zip-guard.js';
import { createRowValidator, formatProblems } from '../../src/intake/validate.js';
import { encryptedWorkbook, oldXls, odsFile, overlappingBomb, zip } from '../fixtures/zip-kit.js';
import { loadCatalog, readAll, tempDir } from './helpers.js';

async function workbook(build: (wb: ExcelJS.Workbook) => void, name = 'orders.xlsx'): Promise<string> {
  const wb = new ExcelJS.Workbook();
  build(wb);
  const path = join(tempDir(), name);
  await wb.xlsx.writeFile(path);
  return path;
}

async function refusal(path: string): Promise<string> {
  const err = await openOrderFile(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InputFileError);
  return (err as Error).message;
}

/** A hand-built workbook: one sheet of raw cell XML, no shared strings, no styles. */
function rawWorkbook(sheetRows: string): Buffer {
  const ns = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  return zip([
    {
      name: '[Content_Types].xml',
      data: Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
          '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
          '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
      ),
    },
    { name: '_rels/.rels', data: Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`) },
    { name: 'xl/workbook.xml', data: Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${ns}" xmlns:r="${rel}"><sheets><sheet name="Orders" sheetId="1" r:id="rId1"/></sheets></workbook>`) },
    { name: 'xl/_rels/workbook.xml.rels', data: Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`) },
    { name: 'xl/worksheets/sheet1.xml', data: Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${ns}"><sheetData>${sheetRows}</sheetData></worksheet>`) },
  ]);
}
const writeTemp = (name: string, data: Buffer | string) => {
  const p = join(tempDir(), name);
  writeFileSync(p, data);
  return p;
};

describe('reading a workbook', () => {
  it('header, text, numbers, rich text; line numbers are the sheet\'s row numbers; blank rows between orders kept, trailing ones dropped', async () => {
    const path = await workbook((wb) => {
      const ws = wb.addWorksheet('Sheet1');
      ws.getRow(2).values = ['pid', 'Player ID', 'note'];
      ws.getRow(3).values = ['PUBG-60', 5123456789, 'plain'];
      ws.getRow(4).values = ['PUBG-60', { richText: [{ text: '5123' }, { text: '456780', font: { bold: true } }] }, 'rich'];
      ws.getRow(7).values = ['PUBG-60', '0005123456789', 'text keeps zeros'];
      ws.getRow(9).getCell(1).style = { font: { bold: true } }; // formatted but empty
      ws.getRow(12).height = 30;
    });
    const { header, rows } = await readAll(path);
    expect(header.format).toBe('xlsx');
    expect(header.sheet).toBe('Sheet1');
    expect(header.header.columns).toEqual(['pid', 'Player ID', 'note']);
    expect(rows.map((r) => [r.index, r.line, r.cells])).toEqual([
      [0, 3, ['PUBG-60', '5123456789', 'plain']],
      [1, 4, ['PUBG-60', '5123456780', 'rich']],
      [2, 5, []],
      [3, 6, []],
      [4, 7, ['PUBG-60', '0005123456789', 'text keeps zeros']],
    ]);
    expect(rows.every((r) => r.notes === undefined)).toBe(true);
  });

  it('reads the sheet named "orders" (any case), else the first visible one', async () => {
    const two = await workbook((wb) => {
      wb.addWorksheet('Prices').addRow(['price list']);
      wb.addWorksheet(' ORDERS ').addRows([['pid', 'userId'], ['PUBG-60', '1']]);
    });
    expect((await readAll(two)).header.sheet).toBe(' ORDERS ');
    const hidden = await workbook((wb) => {
      wb.addWorksheet('Lookup', { state: 'hidden' }).addRow(['x']);
      wb.addWorksheet('Mine').addRows([['pid', 'userId'], ['PUBG-60', '1']]);
    });
    const { header, rows } = await readAll(hidden);
    expect(header.sheet).toBe('Mine');
    expect(rows[0]?.cells).toEqual(['PUBG-60', '1']);
  });

  it('notes typed cells: formulas, dates, long or fractional numbers, errors, booleans', async () => {
    const path = await workbook((wb) => {
      const ws = wb.addWorksheet('orders');
      ws.addRow(['pid', 'userId', 'note']);
      ws.addRow(['PUBG-60', { formula: 'B3', result: 5123456789 }, 'formula']);
      ws.addRow(['PUBG-60', new Date(Date.UTC(2024, 0, 5)), 'date']);
      ws.addRow(['PUBG-60', 1234567890123456, '16 digits']);
      ws.addRow(['PUBG-60', 512345.5, 'fraction']);
      ws.addRow(['PUBG-60', { error: '#N/A' }, 'error']);
      ws.addRow(['PUBG-60', true, 'boolean']);
      ws.addRow(['PUBG-60', 999999999999999, '15 digits: fine']);
    });
    const { rows } = await readAll(path);
    expect(rows.map((r) => [r.cells[1], r.notes?.get(1)])).toEqual([
      ['5123456789', 'formula'],
      ['2024-01-05', 'date'],
      ['1234567890123456', 'inexact-number'],
      ['512345.5', 'inexact-number'],
      ['#N/A', 'error'],
      ['TRUE', 'boolean'],
      ['999999999999999', undefined],
    ]);
  });

  it('a number stored with an exponent or a decimal point is noted even when it is whole; inline strings are text', async () => {
    const path = writeTemp(
      'raw.xlsx',
      rawWorkbook(
        '<row r="1"><c r="A1" t="inlineStr"><is><t>pid</t></is></c><c r="B1" t="inlineStr"><is><t>userId</t></is></c></row>' +
          '<row r="2"><c r="A2" t="inlineStr"><is><t>PUBG-60</t></is></c><c r="B2"><v>1.23457E+11</v></c></row>' +
          '<row r="3"><c r="A3" t="inlineStr"><is><t>PUBG-60</t></is></c><c r="B3" t="n"><v>5123456789.0</v></c></row>' +
          '<row r="4"><c r="A4" t="inlineStr"><is><t>PUBG-60</t></is></c><c r="B4"><v>5123456789</v></c></row>',
      ),
    );
    const { header, rows } = await readAll(path);
    expect(header.sheet).toBe('Orders');
    expect(rows.map((r) => [r.cells[1], r.notes?.get(1)])).toEqual([
      ['123457000000', 'inexact-number'],
      ['5123456789', 'inexact-number'],
      ['5123456789', undefined],
    ]);
  });

  it('an id shown otherwise than the number it holds is noted: zero-padded formats, and 12+ digits that are only 6 significant ones', async () => {
    const path = await workbook((wb) => {
      const ws = wb.addWorksheet('orders');
      ws.addRow(['pid', 'userId']);
      ws.addRow(['PUBG-60', 81234567]); // shown 000081234567
      ws.getCell('B2').numFmt = '000000000000';
      ws.addRow(['PUBG-60', 123457000000]); // a 1,23457E+11 CSV saved again as a workbook
      ws.addRow(['PUBG-60', 5123456789]);
      ws.getCell('B4').numFmt = '0';
      ws.addRow(['PUBG-60', 51234567]);
      ws.getCell('B5').numFmt = '00000000'; // padding no wider than the number: shown as held
    });
    const { rows } = await readAll(path);
    expect(rows.map((r) => [r.cells[1], r.notes?.get(1)])).toEqual([
      ['81234567', 'inexact-number'],
      ['123457000000', 'inexact-number'],
      ['5123456789', undefined],
      ['51234567', undefined],
    ]);
  });

  it('a cell right of the last header is a row problem, as an extra CSV cell is', async () => {
    const path = await workbook((wb) => {
      const ws = wb.addWorksheet('orders');
      ws.addRow(['pid', 'userId']);
      ws.addRow(['PUBG-60', '1', 'stray']);
      ws.addRow(['PUBG-60', '2']);
    });
    const { rows } = await readAll(path);
    expect(rows[0]?.parseError).toBe('cell C2 holds "stray", but its column has no header; give the column a header or clear the cell');
    expect(rows[1]?.parseError).toBeUndefined();
  });

  it('an empty sheet is a file error; too many rows is a file error', async () => {
    expect(await refusal(await workbook((wb) => void wb.addWorksheet('orders')))).toMatch(/sheet "orders" is empty/);
    const path = await workbook((wb) => {
      const ws = wb.addWorksheet('orders');
      ws.addRow(['pid', 'userId']);
      for (let i = 0; i < 10; i++) ws.addRow(['PUBG-60', `${i}`]);
    });
    const table = await openXlsx(path, { maxRows: 5 });
    const read = async () => {
      for await (const run of table.batches) void run;
    };
    await expect(read()).rejects.toThrow(/more than 5 order rows; split/);
  });

  it('rows validate like CSV rows: a number userId orders, a formula userId is refused', async () => {
    const path = await workbook((wb) => {
      const ws = wb.addWorksheet('orders');
      ws.addRow(['pid', 'Player ID']);
      ws.addRow(['101', 5123456789]);
      ws.addRow(['101', { formula: '5123456789+0', result: 5123456789 }]);
    });
    const { header, rows } = await readAll(path);
    const v = createRowValidator(header.header, loadCatalog());
    const [a, b] = rows.map((r: RawRow) => v.validate(r));
    expect(a?.ok && a.order.request).toEqual({ pid: '101', trxid: '', userId: '5123456789' });
    expect(b?.ok === false && formatProblems(b.problems)).toMatch(/^Player ID: the cell is a formula/);
  });
});

describe('workbooks that cannot be read get a clear file error', () => {
  it('a truncated workbook', async () => {
    const good = readFileSync(await workbook((wb) => void wb.addWorksheet('orders').addRows([['pid'], ['PUBG-60']])));
    expect(await refusal(writeTemp('cut.xlsx', good.subarray(0, Math.floor(good.length / 2))))).toMatch(/damaged or not a real \.xlsx.*save it again as \.xlsx/);
  });

  it('a workbook whose sheet is not XML', async () => {
    const bad = rawWorkbook('</oops>').toString('latin1').replace('<sheetData></oops></sheetData>', '<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>pid</t></is></c></row><<<</sheetData>');
    expect(await refusal(writeTemp('bad.xlsx', Buffer.from(bad, 'latin1')))).toMatch(/cannot be read/);
  });

  it('a password-protected workbook (an encrypted compound file)', async () => {
    expect(await refusal(writeTemp('locked.xlsx', encryptedWorkbook()))).toMatch(/protected with a password.*remove the password/);
  });

  it('an old .xls renamed .xlsx, and CSV text named .xlsx', async () => {
    expect(await refusal(writeTemp('old.xlsx', oldXls()))).toMatch(/old Excel 97–2003 workbook \(\.xls\)/);
    expect(await refusal(writeTemp('text.xlsx', 'pid,userId\nPUBG-60,1\n'))).toMatch(/not an Excel workbook.*If it is CSV text, name it \.csv/);
  });

  it('a zip bomb of a few KB is refused from its directory, before anything is inflated', async () => {
    const bomb = overlappingBomb(5 * 1024 * 1024, 120);
    expect(bomb.length).toBeLessThan(16 * 1024);
    const started = performance.now();
    expect(await refusal(writeTemp('bomb.xlsx', bomb))).toMatch(/would unpack to more than 512 MB/);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('an entry that inflates to more than the directory declares is refused while counting', async () => {
    const lying = zip([{ name: 'xl/worksheets/sheet1.xml', data: Buffer.alloc(300_000, 0x20), declaredSize: 1000 }]);
    await expect(guardWorkbookZip(writeTemp('lie.xlsx', lying))).rejects.toThrow(/unpacks to more than its own ZIP directory declares/);
    const honest = zip([{ name: 'a.xml', data: Buffer.alloc(300_000, 0x20) }]);
    await expect(guardWorkbookZip(writeTemp('big.xlsx', honest), { bytes: 1e9, uncompressed: 100_000 })).rejects.toThrow(/would unpack to more than/);
    await expect(guardWorkbookZip(writeTemp('big2.xlsx', honest), { bytes: 100, uncompressed: 1e9 })).rejects.toThrow(/more than the .* topup reads; split/);
  });
});

describe('every other file type is refused with what to do', () => {
  it.each([
    ['orders.ods', odsFile(), /OpenDocument spreadsheet.*LibreOffice.*Save As/],
    ['orders.xls', oldXls(), /old Excel 97–2003 workbook \(\.xls\).*save it as \.xlsx/],
    ['orders.numbers', Buffer.from('x'), /Apple Numbers.*Export To/],
    ['orders.pdf', Buffer.from('%PDF-1.4'), /PDF/],
    ['orders', Buffer.from('pid\n'), /no extension/],
    ['orders.docx', Buffer.from('x'), /does not read \.docx files/],
    ['orders.xlsm', Buffer.from('x'), /macro-enabled/],
  ])('%s', async (name, data, message) => {
    expect(await refusal(writeTemp(name, data))).toMatch(message);
  });

  it('.tsv and .txt are read as delimited text', async () => {
    expect((await readAll(writeTemp('orders.tsv', 'pid\tuserId\nPUBG-60\t1\n'))).rows[0]?.cells).toEqual(['PUBG-60', '1']);
    expect((await readAll(writeTemp('orders.txt', 'pid;userId\nPUBG-60;1\n'))).header.format).toBe('csv');
  });
});

describe('the sheet list, read from the workbook itself', () => {
  it('names in tab order with their parts: any namespace prefix, absolute or relative targets, escaped names, hidden sheets', () => {
    const workbook = `<?xml version="1.0"?><x:workbook xmlns:x="main" xmlns:rel="r"><x:sheets>
      <x:sheet name="Lookup &amp; prices" sheetId="1" state="hidden" rel:id="rId1"/>
      <x:sheet name='orders' sheetId="2" rel:id="rId2"/>
      <x:sheet name="Chart" sheetId="3" rel:id="rId9"/>
      <x:sheet name="no rel" sheetId="4"/></x:sheets></x:workbook>`;
    const rels = `<Relationships><Relationship Id="rId1" Type="t/worksheet" Target="/xl/worksheets/sheet1.xml"/>
      <Relationship Id="rId2" Type="t/worksheet" Target="./worksheets/sheet2.xml"/>
      <Relationship Id="rId9" Type="t/chartsheet" Target="chartsheets/sheet1.xml"/></Relationships>`;
    expect(sheetList(workbook, rels)).toEqual([
      { name: 'Lookup & prices', state: 'hidden', part: 'xl/worksheets/sheet1.xml' },
      { name: 'orders', state: 'visible', part: 'xl/worksheets/sheet2.xml' },
      { name: 'Chart', state: 'visible', part: 'xl/chartsheets/sheet1.xml' },
      { name: 'no rel', state: 'visible', part: undefined },
    ]);
    expect(sheetList(undefined, rels)).toEqual([]);
  });

  it('the guard gives the list of a real workbook, whatever the order of its parts', async () => {
    for (const w of ['exceljs', 'openpyxl', 'list-last']) {
      const facts = await guardWorkbookZip(join(import.meta.dirname, '..', 'fixtures', 'workbooks', `${w}.xlsx`));
      expect(facts.sheets.map((s) => [s.name, s.part]), w).toEqual([
        ['Read me', 'xl/worksheets/sheet1.xml'],
        ['orders', 'xl/worksheets/sheet2.xml'],
      ]);
    }
  });
});
