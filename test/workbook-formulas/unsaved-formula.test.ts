/**
 * Trial s34, defect 7: openpyxl (and pandas) write a formula with no saved value
 * (`<f>…</f><v></v>`: only a spreadsheet program computes it). Such a cell came out empty with no
 * word: in a column of the reseller's own it vanished from the result; in an order column it was
 * refused as "a formula (its saved result is "")". Now, in a column the engine reads (pid, player,
 * max price, the account pin) the row is refused naming the cell and what to do; in the reseller's
 * own column, validate warns and the batch's summary says so, naming the cells.
 *
 * openpyxl is not installed here, so the workbook is openpyxl's own fixture
 * (test/fixtures/workbooks/openpyxl.xlsx, written by it: absolute relationship targets, inline
 * strings) with its order sheet replaced by one in the same form holding such formulas, exactly
 * as openpyxl 3.1 writes a formula cell (`<c r="C2"><f>…</f><v></v></c>`). Read by the real CLI.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, readResult, readSummary, runCli, tempHome } from '../e2e/harness.js';
import { zip, type ZipEntry } from '../fixtures/zip-kit.js';

/** The entries of a ZIP archive (central directory; stored or deflated). */
function unzip(buf: Buffer): ZipEntry[] {
  const end = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const out: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    const method = buf.readUInt16LE(at + 10);
    const compressedSize = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLen = buf.readUInt16LE(at + 28);
    const extra = buf.readUInt16LE(at + 30);
    const comment = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.subarray(at + 46, at + 46 + nameLen).toString('utf8');
    const dataAt = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const compressed = buf.subarray(dataAt, dataAt + compressedSize);
    out.push({ name, data: method === 0 ? Buffer.from(compressed) : inflateRawSync(compressed), method: 8 });
    expect(out.at(-1)!.data.length).toBe(size);
    at += 46 + nameLen + extra + comment;
  }
  return out;
}

const s = (ref: string, text: string): string => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
const f = (ref: string, formula: string): string => `<c r="${ref}"><f>${formula}</f><v></v></c>`;
const row = (n: number, cells: string[]): string => `<row r="${n}">${cells.join('')}</row>`;

/** openpyxl's workbook with its `orders` sheet (sheet2.xml) holding `rows`. */
function workbook(rows: string[]): Buffer {
  const entries = unzip(readFileSync(join(import.meta.dirname, '../fixtures/workbooks/openpyxl.xlsx')));
  const sheet = entries.find((e) => e.name === 'xl/worksheets/sheet2.xml')!;
  const xml = sheet.data.toString('utf8');
  sheet.data = Buffer.from(xml.replace(/<sheetData>.*<\/sheetData>/s, `<sheetData>${rows.join('')}</sheetData>`).replace(/<dimension ref="[^"]*"\/>/, '<dimension ref="A1:E6"/>'));
  return zip(entries);
}

const FILE = workbook([
  row(1, [s('A1', 'pid'), s('B1', 'userId'), s('C1', 'max price'), s('D1', 'note'), s('E1', 'account')]),
  row(2, [s('A2', 'PUBG-60'), s('B2', '5123456781'), s('C2', '5'), f('D2', 'B2&amp;"-gift"')]),
  row(3, [f('A3', 'VLOOKUP(B3,Prices!A:B,2,0)'), s('B3', '5123456782'), s('C3', '5'), s('D3', 'pid is a formula')]),
  row(4, [s('A4', 'PUBG-60'), f('B4', 'Players!A4'), s('C4', '5'), s('D4', 'player is a formula')]),
  row(5, [s('A5', 'PUBG-60'), s('B5', '5123456785'), f('C5', 'Prices!B5*1.1'), s('D5', 'cap is a formula')]),
  row(6, [s('A6', 'PUBG-60'), s('B6', '5123456786'), s('C6', '5'), f('D6', 'TODAY()'), f('E6', 'Routing!A6')]),
]);

describe('a workbook formula cell with no saved value (openpyxl)', () => {
  it('in pid, player, max price or the account pin: the row is refused naming the cell; in an own column: a warning and a summary note naming the cells', async () => {
    const home = tempHome('unsaved-formula-');
    const sb = await inProcessSandbox();
    try {
      const env = cliEnv(home, sb);
      const path = join(home.dir, 'wb.xlsx');
      writeFileSync(path, FILE);
      const v = await runCli(['validate', path], env);
      const out = v.stdout + v.stderr;
      expect(out).toMatch(/column "note" \(D\): 2 formula cell\(s\) without a saved value \(D2, D6\) come out empty in the result; open and save the workbook in Excel or LibreOffice/);
      for (const cell of ['A3', 'B4', 'C5', 'E6']) expect(out).toContain(`cell ${cell} is a formula without a saved value`);
      expect(out).toMatch(/write values instead of formulas/);
      const sub = await runCli(['submit', path, '--json'], env, { timeoutMs: 120_000 });
      expect(sub.code, sub.stderr.slice(-1500)).toBe(1); // some rows not completed
      const result = readResult(home, 'wb');
      expect(result.map((r) => r.status)).toEqual(['completed', 'invalid', 'invalid', 'invalid', 'invalid']);
      expect(result.slice(1).map((r) => /cell ([A-E]\d) is a formula without a saved value/.exec(String(r.error))?.[1])).toEqual(['A3', 'B4', 'C5', 'E6']);
      // The own column's cell is empty in the result, and the summary says why.
      expect(result[0]!.note).toBe('');
      expect(readSummary(home, 'wb').notes.join("\n")).toMatch(/column "note" \(D\): 2 formula cell\(s\) without a saved value \(D2, D6\)/);
      // Only the completed row was bought, nothing at all for the refused ones.
      expect(sb.admin.ledger().orders.map((o) => o.userId)).toEqual(['5123456781']);
    } finally {
      await sb.close();
    }
  }, 180_000);
});
