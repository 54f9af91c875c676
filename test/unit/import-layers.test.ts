/**
 * Issue 24, item 5: the rule for what may import what in src/ (docs/architecture.md), held over the
 * TypeScript imports by scripts/import-layers.ts: no import from a lower layer to a higher one
 * (but the listed exceptions, each with why), no import circle, every file in a layer.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXCEPTIONS, LAYERS, importCircles, layerOf, readGraph, upwardImports } from '../../scripts/import-layers.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

describe('imports run one way (docs/architecture.md)', () => {
  const g = readGraph(SRC);

  it('every file of src/ is in a layer', () => {
    expect(g.files.length).toBeGreaterThan(100);
    for (const f of g.files) expect(() => layerOf(f), f).not.toThrow();
  });

  it('no file imports from a layer above its own, but the listed exceptions', () => {
    expect(upwardImports(g)).toEqual([]);
  });

  it('every exception is still needed', () => {
    for (const e of Object.keys(EXCEPTIONS)) {
      const [from, to] = e.split(' -> ') as [string, string];
      expect(g.imports.get(from) ?? [], e).toContain(to);
      expect(layerOf(to), e).toBeGreaterThan(layerOf(from));
    }
  });

  it('no import circle', () => {
    expect(importCircles(g)).toEqual([]);
  });

  it('the check finds what it is for: an upward import and a circle', () => {
    const fake = {
      files: ['kernel/a.ts', 'engine/b.ts', 'engine/c.ts'],
      imports: new Map([
        ['kernel/a.ts', ['engine/b.ts']],
        ['engine/b.ts', ['engine/c.ts']],
        ['engine/c.ts', ['engine/b.ts']],
      ]),
    };
    expect(upwardImports(fake)).toEqual(['kernel/a.ts -> engine/b.ts (kernel imports app)']);
    expect(importCircles(fake)).toEqual([['engine/b.ts', 'engine/c.ts', 'engine/b.ts']]);
    expect(LAYERS.map((l) => l.name)).toEqual(['kernel', 'base', 'home', 'domain', 'app', 'faces', 'entry']);
  });
});
