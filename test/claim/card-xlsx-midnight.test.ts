/**
 * Adversarial review (adv4): a CSV's `2026-11-26 00:00` (a POS writes the time even at
 * midnight, or the column holds the order's day as a date-time) and the same file saved as an
 * .xlsx workbook: the workbook reader writes a date cell at midnight as `2026-11-26` with no time
 * (intake/formats/xlsx-cells.ts dateText). readDate then reads the one with a time `0:0:0` and the
 * other with none: they disagree, and every card of the workbook is bought a second time.
 *
 * Expected (money-safe): the workbook copy of a file already bought buys nothing again.
 */
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, semi, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('adv4: a date-time at midnight, the file saved again as a workbook', () => {
  it('the cards are not bought again', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('cards.csv', semi([['pid', 'quantity', 'Customer', 'Ordered'], ['STEAM-5', '1', 'alice', '2026-11-26 00:00'], ['STEAM-5', '1', 'bob', '2026-11-26 00:00']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);

    // Opened in Excel and saved as a workbook: the date-times are date cells now.
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('cards');
    ws.addRows([
      ['pid', 'quantity', 'Customer', 'Ordered'],
      ['STEAM-5', 1, 'alice', new Date(Date.UTC(2026, 10, 26, 0, 0))],
      ['STEAM-5', 1, 'bob', new Date(Date.UTC(2026, 10, 26, 0, 0))],
    ]);
    ws.getColumn(4).numFmt = 'yyyy-mm-dd hh:mm';
    const tmp = join(home.dir, '.cards.xlsx.writing');
    writeFileSync(tmp, Buffer.from(await wb.xlsx.writeBuffer()));
    renameSync(tmp, join(home.inbox, 'cards.xlsx'));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
