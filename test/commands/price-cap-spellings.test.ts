/**
 * Trial s34, M1: a `;` file with an Indonesian price-cap column `Harga Maks` (value `1,50`) was
 * listed under "carried through to the result as yours" and never applied as maxPriceUsd, while
 * the same column named `Max price` refused the row against a 1.55 pack. Now the cap's spellings
 * in the languages topup already half-reads are read, and a column that looks like a cap but is
 * not a name topup reads is a warning in validate (as `QTY_ORDER` is), never silently carried.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

async function setup() {
  const home = tempHome();
  const sb = await inProcessSandbox();
  return { home, sb, env: cliEnv(home, sb) };
}

describe('price-cap column spellings (trial s34 M1)', () => {
  it.each([['Harga Maks'], ['Harga Maksimal'], ['Harga Maksimum'], ['Batas Harga'], ['Precio máximo'], ['Preço máximo'], ['Prix max']])(
    '"%s" 1,50 against a 1.55 pack refuses the row, as "Max price" does',
    async (header) => {
      const { home, env } = await setup();
      const file = join(home.dir, 'cap.csv');
      writeFileSync(file, `pid;userId;zoneId;${header}\r\nML-86;5200000001;2001;1,50\r\nML-86;5200000002;2001;1,60\r\n`);
      const v = await runCli(['validate', file, '--json'], env);
      const q = JSON.parse(v.stdout);
      expect(q.columns[3], v.stdout).toMatchObject({ column: header, read: [{ field: 'maxPriceUsd' }] });
      expect(q).toMatchObject({ rows: 2, validRows: 1 });
      expect(v.code).toBe(1);
    },
  );

  it('a column that looks like a cap but is not read is a warning in validate, not silently carried through', async () => {
    const { home, env } = await setup();
    const file = join(home.dir, 'odd.csv');
    writeFileSync(file, 'pid;userId;zoneId;Harga Maks IDR\r\nML-86;5200000001;2001;25000\r\n');
    const v = await runCli(['validate', file], env);
    expect(v.stdout).toMatch(/Warnings:\n {2}- column "Harga Maks IDR" looks like the maxPriceUsd but is not a name topup reads/);
    const json = JSON.parse((await runCli(['validate', file, '--json'], env)).stdout);
    expect(json.warnings).toEqual([expect.stringMatching(/^column "Harga Maks IDR" looks like the maxPriceUsd/)]);
  }, 300000);
});
