/**
 * Issue 30 (left from the trial): a file whose header cannot be read said only that it needs a
 * "pid" column (or "slug" and "pack") and listed the first eight cells, so a reseller could not tell
 * which of their columns topup had understood. Now it names the columns it recognised (and as what),
 * those it did not, and what it needs, with spellings of the pid it would read. Real files, the
 * reader the daemon and `topup validate` use, and the real CLI.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/kernel/errors.js';
import { openOrderFile } from '../../src/intake/formats/index.js';
import { cliEnv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { writeTemp } from '../intake/helpers.js';

releaseAfterEach();

async function refused(content: string): Promise<string> {
  const err = await openOrderFile(writeTemp(content)).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(InputFileError);
  return (err as Error).message;
}

describe('a header without a pid column', () => {
  it('names the columns it recognised, as what, and those it did not', async () => {
    const m = await refused('Produkt;Spieler-ID;Menge;Preis;Kunde\nGWP60;5123456789;1;0,92;Anna\n');
    expect(m).toMatch(/header with a "pid" column \(or "slug" and "pack" columns\), and this one has neither/);
    expect(m).toMatch(/recognised: "Spieler-ID" \(userId\), "Menge" \(quantity\)/);
    expect(m).toMatch(/not recognised: "Produkt", "Preis", "Kunde"/);
    // What it needs: a name it reads for the pid.
    expect(m).toMatch(/Rename the column that holds the pack ids to "pid" \(also read: "Product ID", "SKU", "ID Produk", "Produkt-ID", "Artikel-Nr"/);
  });

  it('says "none" when nothing was recognised, and names a lone slug without its pack', async () => {
    expect(await refused('12345,67890\n101,555\n')).toMatch(/recognised: none; not recognised: "12345", "67890"/);
    expect(await refused('slug,userId\nmobilelegends,1\n')).toMatch(/recognised: "slug" \(slug\), "userId" \(userId\); not recognised: none/);
  });

  it('topup validate prints it', async () => {
    const home = tempHome('header-error-');
    const sb = await inProcessSandbox();
    const file = join(home.dir, 'shop.csv');
    writeFileSync(file, 'Artikel,Spieler-ID\nGWP60,5123456789\n');
    const r = await runCli(['validate', file], cliEnv(home, sb));
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/recognised: "Spieler-ID" \(userId\); not recognised: "Artikel"/);
  }, 60_000);
});
