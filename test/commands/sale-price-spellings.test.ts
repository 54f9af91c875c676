/**
 * Trial s37 D7: a pandas workbook's `Harga Jual` (Indonesian: sale price) was carried through and
 * never read as the sale price for the console's margin, while the file's other Indonesian headers
 * were read, and validate said nothing. The sale price is now read under the same languages the
 * price cap's spellings cover (test/commands/price-cap-spellings.test.ts), with or without `USD`,
 * and a column named like a sale price in another currency (`Harga Jual (Rp)`) is a hint, not read.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { parseSale, saleColumn, saleLookalikes } from '../../src/intake/sale-price.js';

releaseAfterEach();

describe('sale-price column spellings (trial s37 D7)', () => {
  it.each([
    ['Sale price'], ['salePriceUsd'], ['sale_usd'], ['Sale price (USD)'], ['Selling price'],
    ['Harga Jual'], ['Harga Jual USD'], ['Harga Jual (USD)'], ['harga_jual'], ['Harga Penjualan'],
    ['Verkaufspreis'], ['VK-Preis'], ['Precio de venta'], ['Preço de venda'], ['Prix de vente'],
    ['Prezzo di vendita'], ['Verkoopprijs'], ['Satış fiyatı'],
  ])('"%s" is read as the sale price', (header) => {
    expect(saleColumn(['pid', 'userId', header])).toBe(2);
    expect(saleLookalikes(['pid', 'userId', header])).toEqual([]);
  });

  it.each([['Harga Jual (Rp)'], ['Harga Jual IDR'], ['Verkaufspreis EUR']])('"%s" (another currency) is not read, and is named as a lookalike', (header) => {
    expect(saleColumn(['pid', 'userId', header])).toBeUndefined();
    expect(saleLookalikes(['pid', 'userId', header])).toEqual([2]);
  });

  it('two sale-price columns: neither is read (which one?), both named; "Sale" alone is not a sale price', () => {
    expect(saleColumn(['pid', 'Harga Jual', 'Sale price'])).toBeUndefined();
    expect(saleLookalikes(['pid', 'Harga Jual', 'Sale price'])).toEqual([1, 2]);
    expect(saleColumn(['pid', 'Sale'])).toBeUndefined();
    expect(parseSale('1,75')).toBe(1.75);
  });

  it('validate: the column report says Harga Jual is read as the sale price in USD; Harga Jual (Rp) gets a hint', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const file = join(home.dir, 'penjualan.csv');
    writeFileSync(file, 'ID Transaksi;PID;ID Pemain;Harga Jual\r\nJ-1;PUBG-60;5200000001;1,75\r\n');
    const v = await runCli(['validate', file, '--json'], env);
    expect(v.code, v.stderr).toBe(0);
    const q = JSON.parse(v.stdout);
    expect(q.columns[3], v.stdout).toMatchObject({ column: 'Harga Jual', note: expect.stringMatching(/read as your sale price in USD/) });
    expect(q.hints.filter((h: string) => /sale price/.test(h))).toEqual([]);

    const rp = join(home.dir, 'rupiah.csv');
    writeFileSync(rp, 'ID Transaksi;PID;ID Pemain;Harga Jual (Rp)\r\nJ-2;PUBG-60;5200000002;25.000\r\n');
    const t = await runCli(['validate', rp], env);
    expect(t.stdout).toMatch(/Hint: column "Harga Jual \(Rp\)" looks like your sale price but is not read as one: the console's margin reads one sale price per row, in USD/);
    const j = JSON.parse((await runCli(['validate', rp, '--json'], env)).stdout);
    expect(j.columns[3].note).not.toMatch(/sale price/);
  }, 120_000);
});
