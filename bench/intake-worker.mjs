// Intake alone, in its own process so its peak RSS is its own: parse and validate one order
// file against a catalog with the built code (dist/intake), exactly as the daemon's loader
// does, without the store. Plain JS so no TypeScript loader sits in the measured memory.
//
// Usage: node bench/intake-worker.mjs <file.csv> <catalog.json>; prints one JSON line.
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const [csvPath, catalogPath] = process.argv.slice(2);
const dist = process.env.BENCH_DIST ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (p) => import(join(dist, p));
const { openOrderFile } = await load('intake/formats/index.js');
const { createRowValidator } = await load('intake/validate.js');
const { buildCatalogIndex } = await load('intake/catalog-index.js');
const { readServiceLine, readProduct } = await load('api/schemas.js');

const mb = (n) => Math.round((n / 1048576) * 10) / 10;
const vmHwm = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;

const raw = JSON.parse(readFileSync(catalogPath, 'utf8'));
const skip = () => {};
const index = buildCatalogIndex(raw.services.map((s) => readServiceLine(s, skip)).filter(Boolean), raw.products.map((p) => readProduct(p, skip)).filter(Boolean));
globalThis.gc?.();
const before = { rssMb: mb(process.memoryUsage().rss), heapMb: mb(process.memoryUsage().heapUsed) };

const started = performance.now();
const { header, batches } = await openOrderFile(csvPath);
const validator = createRowValidator(header.header, index);
let n = 0;
let valid = 0;
const checkpoints = [];
for await (const run of batches) {
  for (const row of run) {
    if (validator.validate(row).ok) valid++;
    if (++n % 20_000 === 0) {
      const m = process.memoryUsage();
      checkpoints.push({ rows: n, rssMb: mb(m.rss), heapMb: mb(m.heapUsed) });
    }
  }
}
const seconds = (performance.now() - started) / 1000;
process.stdout.write(`${JSON.stringify({
  rows: n, valid, invalid: n - valid, seconds, rowsPerSec: n / seconds, before, checkpoints, peakRssMb: Math.round(vmHwm() * 10) / 10,
})}\n`);
