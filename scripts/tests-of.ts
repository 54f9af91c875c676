/**
 * Which tests hold a module: `npx tsx scripts/tests-of.ts src/account/funds.ts` (or any path under
 * src/). The rule (docs/architecture.md, "Where a module's tests are"): a module's tests are the test
 * files that import it, directly or through a helper of test/ (listed first), then those that reach
 * it through the modules they import (listed after, nearest first). Tests that drive the built CLI,
 * the daemon or the console as a process (test/daemon, test/commands, test/console, test/e2e …)
 * import nothing of src/ and reach every module; they are named by the behaviour they hold.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';
import { readGraph } from './import-layers.js';

const ROOT = join(dirname(new URL(import.meta.url).pathname), '..');

/** Every file under test/, and what each imports under src/ (as paths under src/) and under test/. */
function testImports(): Map<string, { src: string[]; test: string[] }> {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      if (n === 'fixtures') return [];
      return statSync(p).isDirectory() ? walk(p) : n.endsWith('.ts') ? [relative(ROOT, p).split('\\').join('/')] : [];
    });
  const out = new Map<string, { src: string[]; test: string[] }>();
  for (const f of walk(join(ROOT, 'test'))) {
    const src: string[] = [];
    const test: string[] = [];
    for (const { fileName } of ts.preProcessFile(readFileSync(join(ROOT, f), 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(f), fileName)).replace(/\.js$/, '.ts');
      if (target.startsWith('src/')) src.push(target.slice(4));
      else if (target.startsWith('test/')) test.push(target);
    }
    out.set(f, { src, test });
  }
  return out;
}

/** The test files (*.test.ts) holding `module` (a path under src/): directly, then through other modules (with the distance). */
export function testsOf(module: string): { direct: string[]; through: { file: string; via: number }[] } {
  const g = readGraph(join(ROOT, 'src'));
  const tests = testImports();
  // Modules that reach `module`, with how many imports away.
  const dist = new Map<string, number>([[module, 0]]);
  for (let d = 0, frontier = [module]; frontier.length > 0; d++) {
    const next: string[] = [];
    for (const [from, tos] of g.imports) {
      if (dist.has(from) || !tos.some((t) => frontier.includes(t))) continue;
      dist.set(from, d + 1);
      next.push(from);
    }
    frontier = next;
  }
  // What a test file imports of src/, through test helpers too.
  const reach = (f: string, seen = new Set<string>()): string[] => {
    if (seen.has(f)) return [];
    seen.add(f);
    const t = tests.get(f);
    return t ? [...t.src, ...t.test.flatMap((h) => reach(h, seen))] : [];
  };
  const direct: string[] = [];
  const through: { file: string; via: number }[] = [];
  for (const f of [...tests.keys()].filter((x) => x.endsWith('.test.ts')).sort()) {
    const mods = reach(f);
    const best = Math.min(...mods.map((m) => dist.get(m) ?? Infinity));
    if (best === 0) direct.push(f);
    else if (Number.isFinite(best)) through.push({ file: f, via: best });
  }
  through.sort((a, b) => a.via - b.via || a.file.localeCompare(b.file));
  return { direct, through };
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const arg = process.argv[2];
  if (!arg) {
    process.stderr.write('usage: npx tsx scripts/tests-of.ts src/path/to/module.ts\n');
    process.exit(2);
  }
  const module = arg.replace(/^(\.\/)?src\//, '');
  const { direct, through } = testsOf(module);
  process.stdout.write(`tests of src/${module}\n  importing it:\n${direct.map((f) => `    ${f}\n`).join('') || '    (none)\n'}`);
  process.stdout.write(`  reaching it through other modules (imports away):\n${through.map((t) => `    ${t.file} (${t.via})\n`).join('') || '    (none)\n'}`);
}
