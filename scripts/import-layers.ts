/**
 * The rule for what may import what in src/ (docs/architecture.md), checked over the TypeScript
 * imports: every file belongs to one layer (by its folder), and a file imports only from its own
 * layer or the layers below it, type-only imports included (a type couples as much as a value).
 * Within a layer, files of different folders may import each other, but no chain of imports may
 * come back to where it started (an import circle, file by file).
 *
 * Run by test/unit/import-layers.test.ts (so `npm test` and CI hold it), or by hand:
 *   npx tsx scripts/import-layers.ts          the violations and circles, if any (exit 1)
 *   npx tsx scripts/import-layers.ts --graph  every file with its layer and what it imports
 *
 * A small script rather than dependency-cruiser: the whole rule is a folder-to-layer table and a
 * cycle search, about a hundred lines with TypeScript's own import scanner (preProcessFile), and it
 * needs no configuration language, no new dependency tree, nothing to keep in step with tsconfig.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';

/** Lowest first. A file's layer is that of the first entry whose prefix its path (under src/) starts with. */
export const LAYERS: readonly { name: string; paths: readonly string[]; what: string }[] = [
  { name: 'kernel', paths: ['kernel/', 'config/'], what: 'time, randomness, errors, logging, money rounding, crash points, settings' },
  { name: 'base', paths: ['store/', 'api/', 'intake/', 'sandbox/', 'standby/'], what: 'the SQLite store and its state tables, the API client and its schemas, reading order files, the sandbox supplier, the warm standby (replication, takeover, the fence)' },
  { name: 'home', paths: ['account/', 'runtime.ts'], what: 'one supplier account (client, rate gate, pauses, live catalog, funds) and the runtime that opens the home' },
  { name: 'domain', paths: ['claim/', 'dispatch/', 'poll/', 'outbox/', 'orders/'], what: 'what happens to a batch: claimed and loaded, sent, followed, written out; API orders accepted into the day\'s batch' },
  { name: 'app', paths: ['engine/', 'ops/', 'notify/', 'reports/', 'webhooks/'], what: 'the engine and its stages, operator actions, notifications, scheduled reports, order webhooks' },
  { name: 'faces', paths: ['commands/', 'console/', 'metrics/', 'orderapi/'], what: 'the CLI commands, the web console, /metrics, the order API' },
  { name: 'entry', paths: ['cli.ts', 'program.ts', 'daemon.ts', 'service-cli.ts'], what: 'the programs: topup (cli.ts sets the start-up heap flag, then loads program.ts), its daemon, and topup as the systemd service sees it (deploy/topup-cli.sh)' },
];

/** Imports allowed against the rule, each with why. An entry is `from -> to` (paths under src/). */
export const EXCEPTIONS: Readonly<Record<string, string>> = {
  'commands/daemon.ts -> daemon.ts':
    "the CLI's thin wrapper: `topup daemon` reads its options and hands over to the daemon's wiring (daemon.ts is reached only through the CLI: npm start runs `dist/cli.js daemon`)",
  'standby/takeover.ts -> orders/journal.ts':
    "takeover carries over the order journal's lines kept beside a folder replica with the one fold that restore and every first start use (foldJournalMirrors), so a journal line is never read two ways; the journal's format lives with the order desk that writes it",
};

export interface ImportGraph {
  /** Every .ts file under src/, as a path under src/ (posix). */
  files: string[];
  /** What each file imports (files under src/ only). */
  imports: Map<string, string[]>;
}

export function layerOf(file: string): number {
  const i = LAYERS.findIndex((l) => l.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
  if (i < 0) throw new Error(`src/${file} is in no layer: add its folder to LAYERS in scripts/import-layers.ts (and to docs/architecture.md)`);
  return i;
}

export function readGraph(src: string): ImportGraph {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      return statSync(p).isDirectory() ? walk(p) : n.endsWith('.ts') ? [relative(src, p).split('\\').join('/')] : [];
    });
  const files = walk(src).sort();
  const known = new Set(files);
  const imports = new Map<string, string[]>();
  for (const f of files) {
    const info = ts.preProcessFile(readFileSync(join(src, f), 'utf8'), true, true);
    const to = new Set<string>();
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = posix.normalize(posix.join(posix.dirname(f), fileName)).replace(/\.js$/, '.ts');
      if (known.has(target)) to.add(target);
    }
    imports.set(f, [...to].sort());
  }
  return { files, imports };
}

/** Imports from a lower layer to a higher one, as `from -> to (layer → layer)`. */
export function upwardImports(g: ImportGraph): string[] {
  const out: string[] = [];
  for (const [from, tos] of g.imports) {
    for (const to of tos) {
      if (layerOf(to) <= layerOf(from) || `${from} -> ${to}` in EXCEPTIONS) continue;
      out.push(`${from} -> ${to} (${LAYERS[layerOf(from)]!.name} imports ${LAYERS[layerOf(to)]!.name})`);
    }
  }
  return out;
}

/** Import circles, each as the files around it (the first repeated at the end). One per strongly connected set. */
export function importCircles(g: ImportGraph): string[][] {
  // Tarjan's strongly connected components; a component of two or more files holds a circle.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.imports.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) !== idx.get(v)) return;
    const comp: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      on.delete(w);
      comp.push(w);
      if (w === v) break;
    }
    if (comp.length > 1) out.push(circleIn(g, new Set(comp)));
  };
  for (const f of g.files) if (!idx.has(f)) visit(f);
  return out;
}

/** One circle through a strongly connected set: a path from its first file back to it. */
function circleIn(g: ImportGraph, comp: Set<string>): string[] {
  const start = [...comp].sort()[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of g.imports.get(v) ?? []) {
      if (!comp.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = prev.get(x)!) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...comp];
}

const SRC = join(dirname(new URL(import.meta.url).pathname), '..', 'src');

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const g = readGraph(SRC);
  if (process.argv.includes('--graph')) {
    for (const f of g.files) process.stdout.write(`${LAYERS[layerOf(f)]!.name.padEnd(7)} ${f}: ${g.imports.get(f)!.join(', ')}\n`);
  }
  const up = upwardImports(g);
  const circles = importCircles(g);
  for (const u of up) process.stdout.write(`upward import: ${u}\n`);
  for (const c of circles) process.stdout.write(`import circle: ${c.join(' -> ')}\n`);
  process.stdout.write(`${g.files.length} files, ${up.length} upward imports, ${circles.length} circles\n`);
  process.exitCode = up.length + circles.length > 0 ? 1 : 0;
}
