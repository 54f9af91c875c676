/**
 * Trial s35 (small): `Jumlah Bayar` (Indonesian: amount paid) was flagged as a possible quantity
 * column, a false warning; `Jumlah Barang` (number of items) still is. Real sandbox, the real CLI.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';

describe('a column of money paid is not a quantity lookalike', () => {
  it('`Jumlah Bayar` gives no quantity warning; `Jumlah Barang` (a number of items) does', async () => {
    const sb = await inProcessSandbox();
    const home = tempHome('amount-paid-');
    try {
      const env = cliEnv(home, sb);
      const paid = join(home.dir, 'paid.csv');
      writeFileSync(paid, csv([['pid', 'userId', 'Jumlah Bayar'], ['PUBG-60', '5123456701', '15000']]));
      const a = JSON.parse((await runCli(['validate', paid, '--json'], env)).stdout) as { warnings: string[] };
      expect(a.warnings.filter((w) => /Jumlah Bayar/.test(w))).toEqual([]);
      const count = join(home.dir, 'count.csv');
      writeFileSync(count, csv([['pid', 'userId', 'Jumlah Barang'], ['PUBG-60', '5123456702', '2']]));
      const b = JSON.parse((await runCli(['validate', count, '--json'], env)).stdout) as { warnings: string[] };
      expect(b.warnings.filter((w) => /"Jumlah Barang"/.test(w) && /quantity/.test(w))).toHaveLength(1);
    } finally {
      await sb.close();
      home.remove();
    }
  }, 60_000);
});
