/**
 * Workbooks of every writer (test/fixtures/workbooks/, scripts/make-workbook-fixtures.py) ordered
 * end to end by a real daemon, dropped in the inbox and posted to POST /api/v1/batches (the same
 * reader): each is read from its sheet `orders`, both rows are bought, and the workbook result
 * - shows money with two decimals (`0.00`: 3.10, not 3.1) in amountUsd and netUsd;
 * - gives the reseller's own number columns back as numbers (shopPrice 3.1, ref 1001), so a SUM
 *   over them works, while the text columns (note) and ids stay text.
 * Where LibreOffice is installed, the result is also shown by it: 3.10, and SUM(ref) = 2003.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { ROOT, cliEnv, inProcessSandbox, parseResult, readResult, startDaemon, tempHome, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const WRITERS = ['exceljs', 'libreoffice', 'openpyxl', 'pandas', 'xlsxwriter'] as const;
const FIXTURES = join(ROOT, 'test', 'fixtures', 'workbooks');
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const TOKEN = 'workbook-writers-order-api-token-0123456789';
const hasSoffice = spawnSync('soffice', ['--version']).status === 0;
/** CSV, UTF-8, the cells as shown (the last option): what a person sees in the sheet. */
const AS_SHOWN = 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true';

async function daemonHome(extra: NodeJS.ProcessEnv = {}) {
  const home = tempHome('workbooks-');
  const sb = await inProcessSandbox();
  // The five workbooks hold the same purchases: the repeat check would skip all but the first.
  const env = cliEnv(home, sb, { TOPUP_REPEAT_WINDOW: 'off', ...extra });
  return { home, sb, env };
}

/** The result workbook's sheet as {header → cell} rows. */
async function resultCells(home: TempHome, stem: string): Promise<Record<string, ExcelJS.Cell>[]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(join(home.outbox, `${stem}.result.xlsx`));
  const ws = wb.worksheets[0]!;
  const header = (ws.getRow(1).values as unknown[]).map((v) => (typeof v === 'object' && v !== null && 'richText' in v ? (v as ExcelJS.CellRichTextValue).richText.map((r) => r.text).join('') : String(v)));
  const out: Record<string, ExcelJS.Cell>[] = [];
  for (let r = 2; r <= ws.rowCount; r++) {
    const row = ws.getRow(r);
    out.push(Object.fromEntries(header.map((h, i) => [h, row.getCell(i)]).slice(1)));
  }
  return out;
}

async function expectResult(home: TempHome, stem: string): Promise<void> {
  const csvRows = readResult(home, stem);
  expect(csvRows.map((r) => [r.pid, r.userId, r.note, r.status])).toEqual([
    ['PUBG-60', '5123456789', 'first order', 'completed'],
    ['PUBG-660', '5123456790', 'second', 'completed'],
  ]);
  const rows = await resultCells(home, stem);
  expect(rows.map((r) => [r.shopPrice!.value, r.ref!.value])).toEqual([
    [3.1, 1001],
    [12.5, 1002],
  ]);
  for (const r of rows) {
    expect(typeof r.amountUsd!.value, stem).toBe('number');
    expect(r.amountUsd!.numFmt, `${stem} amountUsd`).toBe('0.00');
    expect(r.netUsd!.numFmt, `${stem} netUsd`).toBe('0.00');
    // Own numbers keep Excel's General format (3.1 stays 3.1, 1001 is not 1001.00).
    expect(r.shopPrice!.numFmt ?? 'General').not.toBe('0.00');
    // Text stays text: the id never becomes a number.
    expect(r.userId!.type, `${stem} userId`).not.toBe(ExcelJS.ValueType.Number);
    expect(r.note!.type).not.toBe(ExcelJS.ValueType.Number);
  }
}

describe('workbooks of every writer, ordered end to end', () => {
  it('from the inbox: read by sheet name, money shown 0.00, own number columns numbers', async () => {
    const { home, env } = await daemonHome();
    const daemon = startDaemon(env);
    for (const w of WRITERS) copyFileSync(join(FIXTURES, `${w}.xlsx`), join(home.inbox, `${w}.xlsx`));
    try {
      for (const w of WRITERS) await waitForResult(home, w, 90_000);
    } catch (err) {
      // Say what the daemon did instead: the outbox (an .error.txt?) and the end of its log.
      const said = readdirSync(home.outbox).map((f) => (f.endsWith('.error.txt') ? `${f}: ${readFileSync(join(home.outbox, f), 'utf8')}` : f));
      throw new Error(`${(err as Error).message}\noutbox: ${said.join('\n')}\ninbox: ${readdirSync(home.inbox).join(', ')}\nlog: ${daemon.output().slice(-4000)}`);
    }
    for (const w of WRITERS) await expectResult(home, w);
    await daemon.kill();
  }, 180_000);

  it('over POST /api/v1/batches: the same reader, the same result', async () => {
    const { home, env } = await daemonHome({ TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
    const daemon = startDaemon(env);
    const url = await consoleUrl(daemon);
    const ids: string[] = [];
    for (const w of WRITERS) {
      const res = await fetch(`${url}/api/v1/batches?name=${w}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': XLSX }, body: readFileSync(join(FIXTURES, `${w}.xlsx`)) });
      const body = (await res.json()) as { id: string; name: string };
      expect(res.status, JSON.stringify(body)).toBe(202);
      expect(body.name).toBe(`${w}.xlsx`);
      ids.push(body.id);
    }
    for (const [i, id] of ids.entries()) {
      const view = await waitFor(`batch ${WRITERS[i]} done`, async () => {
        const v = (await (await fetch(`${url}/api/v1/batches/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { done: boolean; fileError: string | null };
        return v.done || v.fileError ? v : undefined;
      }, 90_000, 200);
      expect(view.fileError, WRITERS[i]).toBeNull();
      const result = await (await fetch(`${url}/api/v1/batches/${id}/result`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      expect(parseResult(result).map((r) => r.status)).toEqual(['completed', 'completed']);
    }
    for (const w of WRITERS) await expectResult(home, w);
    await daemon.kill();
  }, 180_000);

  it.skipIf(!hasSoffice)('LibreOffice shows the money as 3.10 and sums the own number column', async () => {
    const { home, env } = await daemonHome();
    const daemon = startDaemon(env);
    copyFileSync(join(FIXTURES, 'openpyxl.xlsx'), join(home.inbox, 'shop.xlsx'));
    await waitForResult(home, 'shop', 90_000);
    await daemon.kill();
    const dir = mkdtempSync(join(tmpdir(), 'soffice-'));
    try {
      // A formula row under the result: LibreOffice computes it and writes what it shows.
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(join(home.outbox, 'shop.result.xlsx'));
      const ws = wb.worksheets[0]!;
      const refCol = (ws.getRow(1).values as unknown[]).findIndex((v) => String(JSON.stringify(v)).includes('"ref"'));
      ws.getCell(4, refCol).value = { formula: `SUM(${ws.getColumn(refCol).letter}2:${ws.getColumn(refCol).letter}3)` };
      await wb.xlsx.writeFile(join(dir, 'sum.xlsx'));
      copyFileSync(join(home.outbox, 'shop.result.xlsx'), join(dir, 'shown.xlsx'));
      for (const f of ['sum.xlsx', 'shown.xlsx']) {
        const r = spawnSync('soffice', [`-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless', '--convert-to', AS_SHOWN, '--outdir', dir, join(dir, f)], { encoding: 'utf8', timeout: 120_000 });
        expect(r.status, r.stderr).toBe(0);
      }
      const shown = parseResult(readFileSync(join(dir, 'shown.csv'), 'utf8'));
      // PUBG-660 costs 9.1 USD in the sandbox: shown 9.10, as money is.
      expect(shown.map((r) => [r.amountUsd, r.netUsd])).toEqual([
        ['0.92', '0.92'],
        ['9.10', '9.10'],
      ]);
      expect(shown.map((r) => r.shopPrice)).toEqual(['3.1', '12.5']);
      const sum = readFileSync(join(dir, 'sum.csv'), 'utf8').trim().split('\n').at(-1)!;
      expect(sum.split(',')[refCol - 1]).toBe('2003');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
