/**
 * Issue 30 (5): the served OpenAPI document passes Spectral's OpenAPI rules (spectral:oas) with no
 * error. The trial's one error was the feed's `limit` example, the string "100" on an integer.
 *
 * Spectral runs as the devDependency @stoplight/spectral-cli (the CLI a shop's CI would run), on
 * the document exactly as GET /api/v1/openapi.json serves it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { apiWorld, closeWorlds } from './world.js';

afterAll(closeWorlds);

const here = dirname(fileURLToPath(import.meta.url));

function spectralBin(): string {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('@stoplight/spectral-cli/package.json');
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { bin: string | Record<string, string> };
  return join(dirname(pkgPath), typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.spectral!);
}

describe('the order API document under Spectral', () => {
  it('has no error under spectral:oas', async () => {
    const w = await apiWorld();
    const file = join(w.home.dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(w.doc, null, 2));
    const run = spawnSync(process.execPath, [spectralBin(), 'lint', file, '--ruleset', join(here, 'spectral.yaml'), '--format', 'json', '--quiet'], { encoding: 'utf8', timeout: 90_000 });
    const text = run.stdout.slice(run.stdout.indexOf('['));
    const results = JSON.parse(text) as { code: string; message: string; severity: number; path: string[] }[];
    // Severity 0 is an error (1 warning, 2 info, 3 hint).
    expect(results.filter((r) => r.severity === 0).map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`)).toEqual([]);
    // Spectral did read the document: its rules ran (an unreadable file is one error, not none).
    expect(run.status, run.stderr).toBe(0);
    // Every operation is named (operation-operationId would warn otherwise).
    expect(results.filter((r) => r.code === 'operation-operationId')).toEqual([]);
  }, 120_000);
});
