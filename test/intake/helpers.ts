import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { parseProduct, parseServiceLine } from '../../src/api/schemas.js';
import { buildCatalogIndex, type CatalogIndex } from '../../src/intake/catalog-index.js';
import { openOrderFile, type RawRow } from '../../src/intake/formats/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp dir, removed after the test. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'intake-'));
  dirs.push(d);
  return d;
}

export function writeTemp(content: string | Buffer, name = 'orders.csv'): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

export async function readAll(path: string): Promise<{ header: Awaited<ReturnType<typeof openOrderFile>>['header']; rows: RawRow[] }> {
  const { header, batches } = await openOrderFile(path);
  const out: RawRow[] = [];
  for await (const run of batches) out.push(...run);
  return { header, rows: out };
}

export function loadCatalog(): CatalogIndex {
  const raw = JSON.parse(readFileSync(fileURLToPath(new URL('../fixtures/intake/catalog.json', import.meta.url)), 'utf8')) as {
    services: unknown[];
    products: unknown[];
  };
  return buildCatalogIndex(raw.services.map((s) => parseServiceLine(s)), raw.products.map((p) => parseProduct(p)));
}
