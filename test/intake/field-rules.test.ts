import { describe, expect, it } from 'vitest';
import { idProblem, idProblemInFull, riotIdProblem, riotIdProblemInFull, zoneIdProblem } from '../../src/intake/field-rules.js';
import { prng } from '../e2e/prng.js';

/**
 * The fast paths in field-rules skip the full checks for values that pass them all at a glance.
 * These tests hold every answer equal to the full checks' over values built to sit near the
 * edges: digits with e/E/./, (spreadsheet damage), formula starts, spaces, control characters,
 * non-ASCII letters, `#` placement and lengths around the limits.
 */
const PIECES = [
  '0', '1', '7', '9', '12', '123', '1234', 'a', 'Z', 'e', 'E', '_', '-', '+', '=', '@', '.', ',', '#', ' ', '\t',
  '\u0001', '\u007f', 'é', 'ß', '名', '0.0', 'e+5', '.000', ',123', 'Player', 'EUW', 'NA1',
];

function values(seed: number, count: number): string[] {
  const r = prng(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let v = '';
    const parts = 1 + Math.floor(r() * 8);
    for (let p = 0; p < parts; p++) v += PIECES[Math.floor(r() * PIECES.length)];
    out.push(v);
  }
  for (const n of [1, 3, 16, 17, 99, 100, 101]) out.push('1'.repeat(n), 'a'.repeat(n), `${'b'.repeat(n)}#EUW`);
  return out;
}

describe('field-rules fast paths give the full checks\' answers', () => {
  const all = values(20261122, 40_000);

  it('idProblem', () => {
    const differ = all.filter((v) => idProblem(v) !== idProblemInFull(v));
    expect(differ).toEqual([]);
    // The comparison covered plenty of accepted ids, and of refused ones.
    expect(all.filter((v) => idProblem(v) === undefined).length).toBeGreaterThan(1_000);
    expect(all.filter((v) => idProblem(v) !== undefined).length).toBeGreaterThan(1_000);
  });

  it('riotIdProblem', () => {
    const differ = all.filter((v) => riotIdProblem(v) !== riotIdProblemInFull(v));
    expect(differ).toEqual([]);
    expect(all.filter((v) => riotIdProblem(v) === undefined).length).toBeGreaterThan(100);
  });

  it('zoneIdProblem still names spreadsheet damage before "digits only"', () => {
    expect(zoneIdProblem('2001')).toBeUndefined();
    expect(zoneIdProblem('1.23E+11')).toMatch(/spreadsheet turned this id into a number/);
    expect(zoneIdProblem('12a')).toMatch(/digits only/);
    expect(zoneIdProblem('1'.repeat(21))).toMatch(/digits only/);
  });
});
