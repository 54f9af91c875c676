/**
 * src/store/invariants.ts lists each money invariant with the tests that hold it: every test it
 * names exists (the file, and a test whose title contains the named words).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INVARIANTS } from '../../src/store/invariants.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('the list of money invariants', () => {
  for (const inv of INVARIANTS) {
    it(`${inv.id}: every test it names exists`, () => {
      expect(inv.tests.length).toBeGreaterThan(0);
      for (const t of inv.tests) {
        const text = readFileSync(join(ROOT, t.file), 'utf8').replace(/\\'/g, "'");
        const titles = [...text.matchAll(/\bit\(\s*[`'"](.*?)[`'"]\s*,/g)].map((m) => m[1]!);
        expect(titles.some((title) => title.includes(t.title)), `${t.file}: a test titled "…${t.title}…"`).toBe(true);
      }
    });
  }
  it('ids are unique', () => {
    expect(new Set(INVARIANTS.map((i) => i.id)).size).toBe(INVARIANTS.length);
  });
});
