/** The figures table (stdout) and torture/results/latest.json. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ScenarioResult } from './lib.js';

export function table(results: readonly ScenarioResult[]): string {
  const lines = ['| # | scenario | figure | value | target | ok |', '|---|---|---|---:|---|---|'];
  results.forEach((r, i) => {
    if (r.error) lines.push(`| ${i + 1} | ${r.title} | scenario error | — | runs to the end | ✗ |`);
    for (const f of r.figures) {
      const value = typeof f.value === 'number' ? String(f.value) : f.value;
      lines.push(`| ${i + 1} | ${r.title} | ${f.name} | ${value} | ${f.target} | ${f.info ? '' : f.ok ? '✓' : '✗'} |`);
    }
  });
  return lines.join('\n');
}

export function writeJson(path: string, results: readonly ScenarioResult[], meta: Record<string, unknown>): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ ...meta, ok: results.every((r) => r.ok), scenarios: results }, null, 2)}\n`);
}
