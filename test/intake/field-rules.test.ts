import { describe, expect, it } from 'vitest';
import {
  freeFireIdProblem,
  idProblem,
  idProblemInFull,
  riotIdProblem,
  riotIdProblemInFull,
  splitMlId,
  zoneIdProblem,
} from '../../src/intake/field-rules.js';
import { prng } from '../e2e/prng.js';

/**
 * The fast paths in field-rules skip the full checks for values that pass them all at a glance.
 * These tests hold every answer equal to the full checks' over values built to sit near the
 * edges: digits with e/E/./, (spreadsheet damage in any locale), grouping separators (space,
 * no-break and thin spaces, apostrophes), formula starts, spaces, control characters, non-ASCII
 * letters, `#` placement and lengths around the limits.
 */
const PIECES = [
  '0', '1', '7', '9', '12', '123', '1234', 'a', 'Z', 'e', 'E', '_', '-', '+', '=', '@', '.', ',', '#', ' ', '\t',
  '\u0001', '\u007f', 'é', 'ß', '名', '0.0', 'e+5', '.000', ',123', 'Player', 'EUW', 'NA1',
];
/** Decimal-comma and grouping forms of other locales, mixed with digits. */
const LOCALE_PIECES = [
  '0', '1', '12', '123', '1234', ',0', ',00', '.0', 'E+11', 'e-3', ',23457E+11', ',123', '.123', "'", "'123", '\u2019',
  '\u2019456', '\u00a0', '\u00a0456', '\u202f789', '\u2009', ' ', ' 123', ',12', '(', ')', ' (2005)', 'a', '_',
];

function values(seed: number, count: number, pieces = PIECES): string[] {
  const r = prng(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let v = '';
    const parts = 1 + Math.floor(r() * 8);
    for (let p = 0; p < parts; p++) v += pieces[Math.floor(r() * pieces.length)];
    out.push(v);
  }
  for (const n of [1, 3, 16, 17, 99, 100, 101]) out.push('1'.repeat(n), 'a'.repeat(n), `${'b'.repeat(n)}#EUW`);
  return out;
}

describe('field-rules fast paths give the full checks\' answers', () => {
  const all = [...values(20261122, 40_000), ...values(20261123, 40_000, LOCALE_PIECES)];

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

describe('ids a spreadsheet changed, in any locale, are refused with the Text hint', () => {
  const hint = /format the column as Text/;
  it.each([
    '1,23457E+11', '1.23457E+11', '1,2E+5', '5E+9', '1,23457e+11', '123456789,0', '123456789,00', '123456.0',
    '5,123,456,789', '5.123.456.789', '5 123 456 789', '5\u00a0123\u00a0456\u00a0789', '5\u202f123\u202f456\u202f789',
    "5'123'456'789", '5\u2019123\u2019456\u2019789', '5,12,34,56,789', '1.234.567,00', '123,456', '123\u00a0456',
  ])('userId %j', (v) => {
    expect(idProblem(v)).toMatch(hint);
    expect(idProblemInFull(v)).toMatch(hint);
  });

  it.each(['2001,0', '2001.0', '2,001E+3', '2 001', '2\u00a0001', "2'001"])('zoneId %j', (v) => expect(zoneIdProblem(v)).toMatch(hint));

  it.each(['1,23457E+11', '123456789,0', '5 123 456 789'])('Free Fire id %j', (v) => expect(freeFireIdProblem(v)).toMatch(hint));

  it('a leading apostrophe (the spreadsheet\'s mark for text) is refused, not stripped', () => {
    expect(idProblem("'5123456789")).toMatch(/apostrophe/);
  });

  it.each(['5123\u200b456789', '\u200e5123456789', '5123456789\u2060'])('an id carrying an invisible format character copied from a chat is refused: %j', (v) => {
    expect(idProblem(v)).toMatch(/invisible/);
  });

  it.each(['5123456789', '0005123456789', 'abc_123', 'A-1', 'x1.2', '1.234', '123.5', 'Ab12CD', '٣٤٥'])('real ids stay valid: %j', (v) => {
    expect(idProblem(v)).toBeUndefined();
  });
});

describe('the ML "id (zone)" form', () => {
  it.each([
    ['777888999 (2005)', '777888999', '2005'],
    ['777888999(2005)', '777888999', '2005'],
    ['777888999 ( 2005 )', '777888999', '2005'],
    ['777888999 [2005]', '777888999', '2005'],
    ['777888999（2005）', '777888999', '2005'],
  ])('%j splits', (v, userId, zoneId) => expect(splitMlId(v)).toEqual({ userId, zoneId }));

  it.each(['777888999 2005', '777888999', '(2005)', '777888999 (20a5)', 'abc (2005)', '777888999 (2005) x'])('%j does not', (v) => {
    expect(splitMlId(v)).toBeUndefined();
  });
});
