/**
 * Spreadsheet formula injection: no cell of a result file may start with a formula a spreadsheet
 * would run — = @ tab CR always, + and - unless the cell is a plain signed number or a phone
 * number (outbox/cell-safety.ts) — in the reseller's own columns, in the header, in codes and in
 * API error texts; and those inert cells come back exactly as they were, without a quote. Where
 * LibreOffice is installed, a headless round trip (CSV → xlsx → CSV) proves no cell turned into a
 * computed value.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { cliEnv, inProcessSandbox, runCli, tempHome, type TempHome } from '../e2e/harness.js';
import { writeResultFile } from '../../src/outbox/result-csv.js';
import type { Row } from '../../src/store/rows.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

const TRIGGERS = ['=', '+', '-', '@', '\t', '\r'];
const PAYLOAD: Record<string, string> = { '=': '=HYPERLINK("http://evil","x")', '+': '+1+1', '-': '-1+2', '@': '@SUM(1,1)', '\t': '\t=1+1', '\r': '\r=1+1' };
/** More formulas a spreadsheet would run or compute: DDE, references, sums with spaces, a trimmed lead. */
const MORE_FORMULAS = ["=cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", '+A1', '-SUM(A1:A9)', '+1 - 1', '+62-812-555-0101', ' =1+1', '\n-1+2', '-5%'];
/** Values no spreadsheet can read a formula into: they must come back exactly, without a quote. */
const INERT = ['+62 812-555-0101', '+1 (555) 123-4567', '+44 20 7946 0958', '-5', '+5', '-12.50', '-', '--'];
let home: TempHome | undefined;
let sb: RunningSandbox | undefined;
const dirs: string[] = [];
afterAll(async () => {
  await sb?.close();
  home?.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The test's own oracle, independent of cell-safety.ts: a trigger lead, unless the value is one of INERT. */
const dangerous = (cells: string[][]) =>
  cells
    .flatMap((r, i) => r.map((c, j) => ({ i, j, c })))
    .filter((x) => x.c.length > 0 && !INERT.includes(x.c) && (TRIGGERS.includes(x.c[0]!) || /^[ \n]+[=+\-@]/.test(x.c)));

function row(over: Partial<Row>): Row {
  return {
    batchId: 'b', idx: 0, line: 2, cells: [], state: 'completed', account: 'default', moves: [], pinned: false, trxid: 't', request: null, productId: null, slug: null, packName: null,
    quantity: null, unitPriceUsd: null, expectedUsd: 1, maxPriceUsd: null, orderId: 'ORD1', amountUsd: 1, codes: [], refunded: null,
    error: null, rejectCode: null, attempts: 1, firstSentAt: null, lastSentAt: null, doubtSince: null, doubtTries: 0, nextTryAt: 0, nextPollAt: 0, polls: 0,
    lastAnswer: null, note: null, codeReads: 0, reviewSince: null, resolution: null, resolvedBy: null, resolvedAt: null, updatedAt: 0, ...over,
  };
}

describe('result cells a spreadsheet would run', () => {
  it('none from the daemon: every trigger in every input column and in the header', async () => {
    home = tempHome('topup-formula-');
    sb = await inProcessSandbox();
    const header = ['pid', 'userId', 'note', '=cmd', '+x', '-y', '@z', 'tab'];
    const lines: string[][] = [];
    for (const p of [...TRIGGERS.map((t) => PAYLOAD[t]!), ...MORE_FORMULAS]) {
      for (let col = 0; col < header.length; col++) {
        const r = ['PUBG-60', '5123456789', 'n', 'a', 'b', 'c', 'd', 'e'];
        r[col] = p;
        lines.push(r);
      }
    }
    // Inert values in the pass-through columns: a valid order each, so they ride along a completed row.
    const inertFrom = lines.length;
    for (const v of INERT) lines.push(['PUBG-60', '5123456789', v, v, 'b', 'c', 'd', 'e']);
    home.drop('inject.csv', stringify([header, ...lines]));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb));
    expect(r.code, r.stdout.slice(-2000)).toBe(0);
    const text = readFileSync(join(home.outbox, 'inject.result.csv'), 'utf8');
    const cells = parse(text, { relax_column_count: true }) as string[][];
    expect(cells.length).toBe(lines.length + 1);
    const bad = dangerous(cells);
    console.log(`formula cells in the daemon's result: ${bad.length} of ${cells.flat().length}`);
    expect(bad).toEqual([]);
    // Every formula payload is still there, behind exactly one quote.
    for (const p of [...TRIGGERS.map((t) => PAYLOAD[t]!), ...MORE_FORMULAS]) expect(cells.flat().filter((c) => c === `'${p}`).length, p).toBeGreaterThan(0);
    // Inert values: untouched, as the README promises for pass-through columns.
    const inert = cells.slice(1 + inertFrom).map((c) => [c[2], c[3]]);
    expect(inert).toEqual(INERT.map((v) => [v, v]));
  });

  it('none from codes and API error texts (writer level)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'topup-formula-w-'));
    dirs.push(dir);
    const rows = TRIGGERS.flatMap((t, i) => [
      row({ idx: i * 3, cells: [PAYLOAD[t]!], state: 'completed', codes: [PAYLOAD[t]!, `${t}CODE`] }),
      row({ idx: i * 3 + 1, cells: ['x'], state: 'rejected', error: PAYLOAD[t]!, orderId: null }),
      row({ idx: i * 3 + 2, cells: ['y'], state: 'cancelled', error: `${t}INVALID PLAYER`, refunded: true, trxid: `${t}trx`, orderId: `${t}ORD` }),
    ]);
    const path = join(dir, 'w.result.csv');
    writeResultFile({ path, header: ['=note'], rows, sandbox: false });
    const cells = parse(readFileSync(path, 'utf8'), { relax_column_count: true }) as string[][];
    expect(dangerous(cells)).toEqual([]);
  });

  it('LibreOffice round trip keeps every guarded cell as text', (t) => {
    const soffice = ['soffice', 'libreoffice'].find((b) => spawnSync('which', [b]).status === 0);
    if (!soffice || !home) {
      t.skip('LibreOffice (libreoffice-calc-nogui) is not installed here; the round trip is skipped');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'topup-lo-'));
    dirs.push(dir);
    const src = join(home.outbox, 'inject.result.csv');
    execFileSync(soffice, ['--headless', '--convert-to', 'xlsx', '--outdir', dir, src], { timeout: 120_000, env: { ...process.env, HOME: dir } });
    const xlsx = readdirSync(dir).find((f) => f.endsWith('.xlsx'))!;
    execFileSync(soffice, ['--headless', '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false', '--outdir', join(dir, 'back'), join(dir, xlsx)], { timeout: 120_000, env: { ...process.env, HOME: dir } });
    const back = parse(readFileSync(join(dir, 'back', xlsx.replace(/\.xlsx$/, '.csv')), 'utf8'), { relax_column_count: true }) as string[][];
    const orig = parse(readFileSync(src, 'utf8'), { relax_column_count: true }) as string[][];
    // A formula would come back as its computed value (2, 0, "x", …), not as the text we wrote.
    const changed: string[] = [];
    orig.forEach((r, i) => r.forEach((cell, j) => {
      let c = cell;
      // Calc stores a carriage return inside a cell as a line feed: that is not evaluation.
      const nl = (x: string) => x.replace(/\r\n?/g, '\n');
      const b = nl(back[i]?.[j] ?? '');
      c = nl(c);
      const shown = c.startsWith("'") ? c.slice(1) : c;
      // A plain number is read as that number (+5 → 5, -12.50 → -12.5): typing, not evaluation.
      const sameNumber = /^[+-]?[0-9.]+$/.test(c) && b !== '' && Number(b) === Number(c);
      if (b !== c && b !== shown && !sameNumber) changed.push(`${i}:${j} ${JSON.stringify(c)} → ${JSON.stringify(b)}`);
    }));
    expect(changed).toEqual([]);
  }, 300_000);
});
