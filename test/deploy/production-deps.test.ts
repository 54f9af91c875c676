/**
 * A production install keeps only the runtime dependencies: README "Running as a service" builds
 * with the dev tooling (`npm ci && npm run build`, ~337 MB of node_modules), then
 * `npm prune --omit=dev` leaves 139 MB (measured on this tree, 2026-11-28: 334 packages removed,
 * and the pruned daemon placed an order on a sandbox, served its console and took a backup).
 * That holds only while dist/ imports nothing from devDependencies: this reads every import the
 * build makes (dist/, built by the global setup) and holds each bare one to `dependencies` or
 * Node's own modules. A dev package imported by src/ (fast-check in a helper, vitest's types at
 * run time) fails here, not on a reseller's server after the prune.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/harness.js';

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []));
}

/** `hono/utils` → `hono`; `@hono/node-server/x` → `@hono/node-server`. */
const packageOf = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

describe('the build imports only runtime dependencies', () => {
  it('every bare import in dist/ is a dependency (not a devDependency) or a Node module', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; optionalDependencies?: Record<string, string>; devDependencies: Record<string, string> };
    const runtime = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {})]);
    const node = new Set(builtinModules);
    const files = jsFiles(join(ROOT, 'dist'));
    expect(files.length).toBeGreaterThan(50);
    const imported = new Map<string, string>();
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      // Statements only (tsc writes each at the start of a line), and dynamic imports; not words in messages.
      const specs = [
        ...text.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
        ...text.matchAll(/\brequire\(\s*['"]([^'"]+)['"]\s*\)/g),
      ].map((m) => m[1]!);
      for (const spec of specs) {
        if (spec.startsWith('.') || spec.startsWith('/')) continue;
        if (spec.startsWith('node:') || node.has(spec) || node.has(packageOf(spec))) continue;
        if (!imported.has(packageOf(spec))) imported.set(packageOf(spec), f.slice(ROOT.length + 1));
      }
    }
    // What it found is what the daemon uses (a scan that finds nothing proves nothing).
    expect([...imported.keys()]).toEqual(expect.arrayContaining(['better-sqlite3', 'hono', 'exceljs', 'pino']));
    const notRuntime = [...imported].filter(([p]) => !runtime.has(p)).map(([p, f]) => `${p} (${f}${p in pkg.devDependencies ? ', a devDependency' : ''})`);
    expect(notRuntime).toEqual([]);
  });
});
