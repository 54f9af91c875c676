/**
 * The workbook result for a workbook input: outbox/<name>.result.xlsx beside the CSV result,
 * text cells (ids keep their zeros and digits, `=1+1` is text, no `'` anywhere), money as
 * numbers, mode 0600, written through a temporary file. The batch is put in the store directly:
 * reading .xlsx input is another module's work; only the file name decides the dialect here.
 * Where LibreOffice is installed, Calc reads the workbook back and must show every text exactly.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { afterEach, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { inputDialect } from '../../src/outbox/dialect.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { outboxPaths } from '../../src/outbox/paths.js';
import { PartialResults } from '../../src/outbox/partial.js';
import { writeResultCsv } from '../../src/outbox/result-csv.js';
import { writeResultXlsx } from '../../src/outbox/result-xlsx.js';
import { resultLayout, type ResultCell } from '../../src/outbox/results.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { NewRow } from '../../src/store/rows.js';
import { inProcessSandbox, parseResult, releaseAll, ROOT, tempHome, TEST_KEY } from '../e2e/harness.js';

let rt: Runtime | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await releaseAll();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const HEADER = ['pid', 'userId', 'name', 'note', 'phone'];
const TEXTS = [
  ['PUBG-60', '0051234567', 'Иван Петров', '=1+1', '+62 812-555-0101'],
  ['PUBG-60', '5123456789012345678', 'محمد', '@SUM(1,1)', '-5'],
  ['PUBG-60', '0000000001', 'Ann "AJ" Lee', '_x0041_ stays', '1.23457E+11'],
];

function row(idx: number, cells: string[]): NewRow {
  return {
    idx, line: idx + 2, cells, request: { pid: 'PUBG-60', trxid: `tu-x-${idx}`, userId: cells[1]! }, error: null,
    productId: 'PUBG-60', slug: 'pubg', packName: '60 UC', quantity: 1, unitPriceUsd: 0.92, expectedUsd: 0.92,
  };
}

it('an .xlsx batch gets a workbook result of text cells (no quote), money as numbers, mode 0600, and a comma + BOM CSV', async () => {
  const home = tempHome('topup-xlsx-');
  const sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  const now = Date.now();
  rt.batches.create({ id: 'bx1', name: 'orders', sourceName: 'Orders.XLSX', jobFile: 'jobs/bx1/Orders.XLSX', contentHash: 'h', origin: 'inbox', sandbox: false, owner: rt.owner, leaseUntil: now + 600_000, now });
  rt.rows.insertAll('bx1', TEXTS.map((c, i) => row(i, c)), now);
  rt.batches.open('bx1', HEADER);
  rt.batches.setDialect('bx1', inputDialect(rt, rt.batches.get('bx1')!, {}));
  expect(rt.batches.get('bx1')!.dialect).toEqual({ delimiter: ',', bom: true, xlsx: true });
  const answer = (i: number) => {
    rt!.rows.markSending('bx1', i, { owner: rt!.owner, now }, now);
    rt!.rows.placed('bx1', i, i === 1 ? { orderId: `O${i}`, status: 'cancelled', amountUsd: 0.92, refunded: true, error: '=HYPERLINK("x")' } : { orderId: `O${i}`, status: 'completed', amountUsd: 0.92, codes: ['-CODE-1'] }, now, now);
  };
  // While it runs: a partial workbook beside the partial CSV, same columns, unfinished rows pending.
  const paths = outboxPaths(rt, rt.batches.get('bx1')!);
  answer(0);
  await new PartialResults().update(rt, rt.batches.get('bx1')!, rt.rows.counts('bx1'), now + rt.config.partialResultMs);
  expect(statSync(paths.partialXlsx).mode & 0o777).toBe(0o600);
  const partial = new ExcelJS.Workbook();
  await partial.xlsx.readFile(paths.partialXlsx);
  expect([2, 3, 4].map((r) => partial.worksheets[0]!.getRow(r).getCell(HEADER.length + 3).text)).toEqual(['completed', 'pending', 'pending']);
  expect(existsSync(paths.partialFile)).toBe(true);
  answer(1);
  answer(2);
  const summary = (await finishBatch(rt, rt.batches.get('bx1')!))!;
  expect(existsSync(paths.partialXlsx)).toBe(false);
  expect(existsSync(paths.partialFile)).toBe(false);
  expect(summary.resultXlsxFile).toBe(paths.resultXlsx);
  expect(statSync(paths.resultXlsx).mode & 0o777).toBe(0o600);
  expect(readdirSync(home.outbox).filter((f) => f.endsWith('.tmp'))).toEqual([]);

  // The CSV result: comma, BOM, and the quote where a CSV needs one.
  const csvText = readFileSync(paths.resultFile, 'utf8');
  expect(csvText.charCodeAt(0)).toBe(0xfeff);
  expect(parseResult(csvText).map((r) => r.note)).toEqual(["'=1+1", "'@SUM(1,1)", '_x0041_ stays']);

  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(paths.resultXlsx);
  const sheet = book.worksheets[0]!;
  const values = (r: number) => {
    const out: (string | number | null)[] = [];
    sheet.getRow(r).eachCell({ includeEmpty: true }, (cell) => {
      out.push(cell.type === ExcelJS.ValueType.Number ? (cell.value as number) : cell.type === ExcelJS.ValueType.Null ? null : cell.text);
    });
    return out;
  };
  expect(values(1)).toEqual([...HEADER, 'trxid', 'orderId', 'status', 'packName', 'amountUsd', 'refunded', 'netUsd', 'codes', 'finishedAt', 'error']);
  for (let i = 0; i < TEXTS.length; i++) expect(values(i + 2).slice(0, HEADER.length)).toEqual(TEXTS[i]);
  // Text cells are typed text, formulas none; money is a number.
  for (let r = 1; r <= 4; r++) {
    sheet.getRow(r).eachCell((cell, col) => {
      const money = r > 1 && (col === 10 || col === 12);
      expect(cell.type, `${r}:${col}`).toBe(money ? ExcelJS.ValueType.Number : ExcelJS.ValueType.RichText);
    });
  }
  expect(values(3).slice(HEADER.length)).toEqual(['tu-x-1', 'O1', 'cancelled', '60 UC', 0.92, 'true', 0, null, expect.stringMatching(/Z$/), '=HYPERLINK("x")']);
  expect(values(2)[12]).toBe('-CODE-1');

  // A real spreadsheet reads it the same way: Calc's CSV export of the workbook shows every text as written.
  const soffice = ['soffice', 'libreoffice'].find((b) => spawnSync('which', [b]).status === 0);
  if (!soffice) {
    console.log('LibreOffice is not installed here; the Calc read-back of the workbook is skipped');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'topup-xlsx-lo-'));
  dirs.push(dir);
  execFileSync(soffice, ['--headless', '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false', '--outdir', dir, paths.resultXlsx], { timeout: 120_000, env: { ...process.env, HOME: dir } });
  const back = parse(readFileSync(join(dir, 'orders.result.csv'), 'utf8'), { relax_column_count: true }) as string[][];
  expect(back.slice(1).map((r) => r.slice(0, HEADER.length))).toEqual(TEXTS);
  expect(back[2]![HEADER.length + 9]).toBe('=HYPERLINK("x")');
}, 120_000);

it('a workbook or CSV write that fails half-way leaves the previous file whole and no temporary file', async () => {
  const home = tempHome('topup-xlsx-fail-');
  const layout = resultLayout(['pid', 'userId'], false);
  function* pages(): Generator<ResultCell[][]> {
    yield Array.from({ length: 1000 }, (_, i) => ['PUBG-60', String(i), 't', 'o', 'completed', '60 UC', 0.92, '', 0.92, '', '', '']);
    throw new Error('the store went away');
  }
  for (const [path, write] of [
    [join(home.outbox, 'x.result.xlsx'), writeResultXlsx],
    [join(home.outbox, 'x.result.csv'), (p: string, l: typeof layout, pg: Iterable<ResultCell[][]>) => writeResultCsv(p, l, { delimiter: ',', bom: false, xlsx: false }, pg)],
  ] as const) {
    writeFileSync(path, 'the previous result');
    await expect(write(path, layout, pages())).rejects.toThrow('the store went away');
    expect(readFileSync(path, 'utf8')).toBe('the previous result');
  }
  expect(readdirSync(home.outbox).sort()).toEqual(['x.result.csv', 'x.result.xlsx']);
});

it('a disk that fills up mid-write fails the write, not the process, and leaves no temporary file', (t) => {
  if (spawnSync('which', ['prlimit']).status !== 0) {
    t.skip('prlimit (util-linux) is not installed here');
    return;
  }
  const home = tempHome('topup-efbig-');
  // The real writers, in a child whose files may not grow past 30 kB (a full disk, as far as a write can tell).
  const script = `
    const { writeResultXlsx } = await import(${JSON.stringify(join(ROOT, 'dist/outbox/result-xlsx.js'))});
    const { writeResultCsv } = await import(${JSON.stringify(join(ROOT, 'dist/outbox/result-csv.js'))});
    const { resultLayout } = await import(${JSON.stringify(join(ROOT, 'dist/outbox/results.js'))});
    const layout = resultLayout(['pid', 'userId'], false);
    function* pages() { for (let p = 0; p < 20; p++) yield Array.from({ length: 1000 }, (_, i) => ['PUBG-60', String(p * 7919 + i * 104729), 't', 'o', 'completed', '60 UC', 0.92, '', 0.92, '', '', '']); }
    for (const [name, write] of [['x.result.xlsx', writeResultXlsx], ['x.result.csv', (p, l, pg) => writeResultCsv(p, l, { delimiter: ',', bom: false, xlsx: false }, pg)]]) {
      try { await write(${JSON.stringify(home.outbox)} + '/' + name, layout, pages()); console.log(name, 'written'); }
      catch (e) { console.log(name, 'failed', e.code); }
    }`;
  const r = spawnSync('prlimit', ['--fsize=30000', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout.trim().split('\n')).toEqual(['x.result.xlsx failed EFBIG', 'x.result.csv failed EFBIG']);
  expect(readdirSync(home.outbox)).toEqual([]);
}, 60_000);
