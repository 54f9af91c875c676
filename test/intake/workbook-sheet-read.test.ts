/**
 * A new-user trial's workbook: a "Read me" sheet first, the orders on the second sheet ("Order
 * list"). `topup validate` said only that the first row must be a header with a "pid" column,
 * found "Instructions: …", not that it had read the sheet "Read me" nor why that one. Now the
 * header error names the sheet read and how it was chosen, and validate says which sheet it read.
 * Real CLI against a real in-process sandbox; workbooks written by exceljs.
 */
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { openOrderFile } from '../../src/intake/formats/index.js';
import { cliEnv, inProcessSandbox, releaseAll, runCli, tempHome } from '../e2e/harness.js';

afterAll(releaseAll);

async function workbook(dir: string, name: string, sheets: { name: string; rows: string[][]; hidden?: boolean }[]): Promise<string> {
  const wb = new ExcelJS.Workbook();
  for (const s of sheets) {
    const ws = wb.addWorksheet(s.name, s.hidden ? { state: 'hidden' } : {});
    for (const r of s.rows) ws.addRow(r);
  }
  const path = join(dir, name);
  await wb.xlsx.writeFile(path);
  return path;
}

const README = { name: 'Read me', rows: [['Instructions: put the orders on the next sheet'], ['one row per top-up']] };
const ORDERS = [['pid', 'userId'], ['PUBG-60', '5123456789']];

describe('a workbook whose orders are not on the sheet read', () => {
  it('the header error names the sheet read and how it was chosen', async () => {
    const home = tempHome('topup-sheet-read-');
    const path = await workbook(home.dir, 'shop.xlsx', [README, { name: 'Order list', rows: ORDERS }]);
    await expect(openOrderFile(path)).rejects.toThrow(/^read the sheet "Read me" \(the first; no sheet is named "orders"\): the first row must be a header with a "pid" column .*not recognised: "Instructions: /);
    const hidden = await workbook(home.dir, 'hidden.xlsx', [{ ...README, name: 'Lookup', hidden: true }, { ...README, name: 'Notes' }, { name: 'Order list', rows: ORDERS }]);
    await expect(openOrderFile(hidden)).rejects.toThrow(/^read the sheet "Notes" \(the first visible; no sheet is named "orders"\): /);

    const env = cliEnv(home, await inProcessSandbox());
    const v = await runCli(['validate', path], env);
    expect(v.code).not.toBe(0);
    expect(v.stdout + v.stderr).toContain('read the sheet "Read me" (the first; no sheet is named "orders"): the first row must be a header');
  }, 90_000);

  it('validate says which sheet of a workbook it read', async () => {
    const home = tempHome('topup-sheet-read-');
    const path = await workbook(home.dir, 'good.xlsx', [README, { name: 'Orders', rows: ORDERS }]);
    const v = await runCli(['validate', path], cliEnv(home, await inProcessSandbox()));
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toContain('Sheet read: "Orders" (named "orders")');
    const first = await workbook(home.dir, 'first.xlsx', [{ name: 'Sheet1', rows: ORDERS }]);
    expect((await runCli(['validate', first], cliEnv(home, await inProcessSandbox()))).stdout).toContain('Sheet read: "Sheet1" (the first; no sheet is named "orders")');
  }, 90_000);
});
