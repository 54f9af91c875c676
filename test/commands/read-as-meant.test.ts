/**
 * Issue 21, reproductions 1 and 5, with the real CLI (dist/cli.js) against the real sandbox:
 *  - `pid;Qty` quoted one key instead of three, and a batch with Qty 3, 5 and 10 got one code per
 *    row; validate never said a column was not understood;
 *  - a header-only file validated as "All 0 rows are valid … OK: ready to submit" (exit 0);
 *  - a file with an `Order No` column but no trxid got no hint;
 *  - a CSV renamed .xls was described as an old Excel 97–2003 workbook;
 *  - an edited re-drop's validate printed one line per repeated row.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

async function setup() {
  const home = tempHome();
  const sb = await inProcessSandbox();
  return { home, sb, env: cliEnv(home, sb) };
}

describe('every column read as meant (issue 21, reproduction 1)', () => {
  it('validate quotes 3 keys for `pid;Qty` (a European export: `;`, CRLF) and says how each column was read', async () => {
    const { home, sb, env } = await setup();
    const file = join(home.dir, 'q.csv');
    writeFileSync(file, 'pid;Qty;Kunde\r\nKEY-PUBG-60;3;Ann\r\n');
    const text = await runCli(['validate', file], env);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toMatch(/total\s+2\.70 USD/); // three keys at 0.90, not one
    expect(text.stdout).toMatch(/"Qty"\s+read as quantity \(a common spelling\)/);
    expect(text.stdout).toMatch(/carried through to the result as yours: "Kunde"/);
    const json = await runCli(['validate', file, '--json'], env);
    const q = JSON.parse(json.stdout);
    expect(q).toMatchObject({ rows: 1, validRows: 1, totalUsd: 2.7, ok: true, warnings: [], hints: [] });
    expect(q.columns).toEqual([
      { column: 'pid', position: 1, read: [{ field: 'pid' }], note: 'read as pid' },
      { column: 'Qty', position: 2, read: [{ field: 'quantity' }], note: 'read as quantity (a common spelling)' },
      { column: 'Kunde', position: 3, read: [], note: 'yours: carried through to the result' },
    ]);
    expect(q.byPack).toEqual([{ account: 'default', game: 'PUBG Mobile', slug: 'gamekeypubg', pid: 'KEY-PUBG-60', pack: '60 UC code', rows: 1, quantity: 3, unitPriceUsd: 0.9, usd: 2.7 }]);
    expect(sb.admin.ledger().orders).toHaveLength(0);
  });

  it('a batch with Qty 3, 5 and 10 delivers 3, 5 and 10 codes; the summary says how the columns were read', async () => {
    const { home, sb, env } = await setup();
    home.drop('keys.csv', 'pid;Qty;Menge_alt\r\nKEY-PUBG-60;3;\r\nSTEAM-5;5;\r\nGPLAY-10;10;\r\n');
    const run = await runCli(['daemon', '--once'], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const orders = sb.admin.ledger().orders;
    expect(orders.map((o) => [o.pid, o.quantity, (o.codes as string[] | undefined)?.length]).sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
      ['KEY-PUBG-60', 3, 3],
      ['STEAM-5', 5, 5],
      ['GPLAY-10', 10, 10],
    ]);
    expect(readResult(home, 'keys').map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    const summary = readSummary(home, 'keys');
    expect(summary.columns).toEqual([
      { column: 'pid', position: 1, read: [{ field: 'pid' }], note: 'read as pid' },
      { column: 'Qty', position: 2, read: [{ field: 'quantity' }], note: 'read as quantity (a common spelling)' },
      { column: 'Menge_alt', position: 3, read: [], note: 'looks like the quantity, but is not a name topup reads: carried through, not used' },
    ]);
    expect(summary.notes).toEqual([expect.stringMatching(/^column "Menge_alt" looks like the quantity but is not a name topup reads/)]);
  });

  it('a key row with a number in a quantity column topup does not read is refused, never bought as 1; validate and the daemon agree', async () => {
    const { home, sb, env } = await setup();
    const content = csv([['pid', 'QTY_ORDER'], ['KEY-PUBG-60', 3], ['KEY-PUBG-60', 1]]);
    const file = join(home.dir, 'odd.csv');
    writeFileSync(file, content);
    const v = await runCli(['validate', file], env);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/Warnings:\n {2}- column "QTY_ORDER" looks like a quantity but is not a name topup reads/);
    expect(v.stdout).toMatch(/2\s+QTY_ORDER\s+"3" looks like the number of codes to buy/);
    home.drop('odd.csv', content);
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'odd').map((r) => r.status)).toEqual(['invalid', 'completed']);
    expect(sb.admin.ledger().orders.map((o) => o.quantity)).toEqual([1]);
  });
});

describe('validate says what a file is (issue 21, reproduction 5)', () => {
  it('a header-only file has no order rows: validate exits 1 and says so; the daemon\'s summary and submit say so too', async () => {
    const { home, env } = await setup();
    const file = join(home.dir, 'empty.csv');
    writeFileSync(file, 'pid;userId\r\n');
    const v = await runCli(['validate', file], env);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/the file has no order rows \(only its header\): nothing would be ordered/);
    expect(v.stdout).not.toMatch(/All 0 rows are valid|OK: ready to submit/);
    expect(JSON.parse((await runCli(['validate', file, '--json'], env)).stdout)).toMatchObject({ rows: 0, ok: false });
    const s = await runCli(['submit', file], env);
    expect(s.code).toBe(1);
    expect(s.stdout).toMatch(/note: the file has no order rows \(only its header\): nothing was ordered/);
    expect(readSummary(home, 'empty').notes).toEqual(['the file has no order rows (only its header): nothing was ordered']);
  });

  it('a file with an "Order No" column and no trxid gets the hint to use it as the trxid', async () => {
    const { home, env } = await setup();
    const file = join(home.dir, 'shop.csv');
    writeFileSync(file, csv([['pid', 'userId', 'Order No'], ['PUBG-60', '5123456789', 'SO-1001']]));
    const v = await runCli(['validate', file], env);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/Hint: column "Order No" looks like your own order numbers: rename it to "trxid"/);
    expect(JSON.parse((await runCli(['validate', file, '--json'], env)).stdout).hints).toHaveLength(1);
  });

  it('a CSV renamed .xls is said to be CSV text with an .xls name, with what to do', async () => {
    const { home, env } = await setup();
    const file = join(home.dir, 'export.xls');
    writeFileSync(file, 'pid;quantity\r\nSTEAM-5;1\r\n');
    const v = await runCli(['validate', file], env);
    expect(v.code).toBe(7);
    expect(v.stderr).toMatch(/this file is named \.xls but is not an Excel workbook: it holds CSV text .*rename it to "export\.csv"/);
    expect(v.stderr).not.toMatch(/97–2003/);
    const s = await runCli(['submit', file], env);
    expect(s.code).toBe(7);
    expect(s.stderr).toMatch(/holds CSV text/);
    home.drop('export.xls', 'pid;quantity\r\nSTEAM-5;1\r\n');
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readFileSync(join(home.outbox, 'export.xls.error.txt'), 'utf8')).toMatch(/holds CSV text/);
  });

  it('an edited re-drop: one line per earlier batch instead of one per repeated row; --json still lists every row', async () => {
    const { home, env } = await setup();
    const first = Array.from({ length: 40 }, (_, i) => ['PUBG-60', String(5_123_400_000 + i)]);
    home.drop('morning.csv', csv([['pid', 'userId'], ...first]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    const edited = join(home.dir, 'morning-v2.csv');
    writeFileSync(edited, csv([['pid', 'userId', 'note'], ...first.map((r) => [...r, 'again']), ['PUBG-60', '5123499999', 'new']]));
    const v = await runCli(['validate', edited], env);
    expect(v.code).toBe(1);
    expect(v.stdout.split('\n').filter((l) => /repeat/i.test(l))).toEqual([
      'Repeats of earlier purchases (40 of 41 rows; every row is in --json):',
      expect.stringMatching(/^ {2}- 40 rows \(the first on line 2\) repeat purchases of batch b\S+ \(file morning\.csv\) made within 24 h: they will be skipped, not bought again; give rows their own trxid to buy them$/),
    ]);
    const q = JSON.parse((await runCli(['validate', edited, '--json'], env)).stdout);
    expect(q).toMatchObject({ rows: 41, validRows: 1, invalidRows: 40, repeatRows: 40 });
    expect(q.problems).toHaveLength(40);
    expect(q.repeats).toEqual([expect.objectContaining({ file: 'morning.csv', rows: 40, firstLine: 2 })]);
  });
});
