/**
 * Trial D9 (issue 30's leftovers): a new user ran the README's first two commands and watched
 * `npm install` sit for about two minutes (better-sqlite3's native build) with nothing saying that
 * was expected. The README says how long it takes where those commands are: in the text right
 * after the quick start's first command block, with the measured figure.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/harness.js';

describe('D9: the README says how long the first npm install takes', () => {
  it('the text right after the first commands (clone, npm install) names the install time, measured', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const blocks = readme.split(/^```.*$/m);
    // blocks[1]: the first fenced block; blocks[2]: the text after it, up to the next block.
    expect(blocks[1]).toMatch(/git clone/);
    expect(blocks[1]).toMatch(/npm install/);
    const after = blocks[2]!;
    expect(after).toMatch(/npm install`? takes about \*{0,2}\d+ minutes?/);
    // The figure it rests on: a measurement, with the machine it was taken on.
    expect(after).toMatch(/npm ci`? in a fresh\s+clone took \d+ min \d+ s on a (quiet )?2-core machine/);
    expect(after).toMatch(/better-sqlite3/);
  });
});
