/**
 * Trial s34, defect 7 (files), with the real CLI and the real sandbox:
 *  - a `;` file with Excel's `sep=;` first line got a result without it (Excel in a comma locale
 *    then shows the result in one column);
 *  - a header `Produk` was refused ("must be a header with a pid column") with no rename hint,
 *    though the docs promise one when a column's name is close.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, parseResult, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

async function setup() {
  const home = tempHome();
  const sb = await inProcessSandbox();
  return { home, sb, env: cliEnv(home, sb) };
}

describe('small file defects of trial s34 (7)', () => {
  it('a sep=; first line in the input is kept as the first line of the result', async () => {
    const { home, env } = await setup();
    home.drop('sep.csv', 'sep=;\r\npid;userId;zoneId;Kunde\r\nML-86;5200000001;2001;Ann\r\n');
    const run = await runCli(['daemon', '--once'], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const text = readFileSync(join(home.outbox, 'sep.result.csv'), 'utf8');
    expect(text.split('\r\n')[0]).toBe('sep=;');
    expect(text.split('\r\n')[1]).toMatch(/^pid;userId;zoneId;Kunde;/);
    expect(parseResult(text.slice('sep=;\r\n'.length)).map((r) => r.status)).toEqual(['completed']);
  }, 300000);

  it('a file without a pid column whose "Produk" column is close to it is told to rename it', async () => {
    const { home, env } = await setup();
    const file = join(home.dir, 'produk.csv');
    writeFileSync(file, 'Produk;userId;zoneId\r\nML-86;5200000001;2001\r\n');
    const v = await runCli(['validate', file], env);
    expect(v.code).not.toBe(0);
    expect(v.stdout + v.stderr).toMatch(/must be a header with a "pid" column.*if column "Produk" holds the supplier's product codes \(pids like ML-86\), rename it to "pid"/s);
  }, 300000);
});
