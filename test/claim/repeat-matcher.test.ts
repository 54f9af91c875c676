/**
 * claim/repeats.ts RepeatMatcher directly: which earlier purchase each row of a file repeats.
 * The daemon-level tests (test/claim/card-*, test/claim/redrop-*, test/daemon/re-drops) reach it through whole runs.
 */
import { describe, expect, it } from 'vitest';
import { RepeatMatcher, type EarlierPurchase, type RowInFile } from '../../src/claim/repeats.js';

const header = ['pid', 'quantity', 'Customer'];
const purchase = (line: number, customer: string, state: EarlierPurchase['state'] = 'completed', refunded: boolean | null = null): EarlierPurchase => ({ idx: line - 2,
  batchId: 'b0', file: 'morning.csv', line, orderId: `O${line}`, state, refunded, error: null, at: 0, header, cells: ['KEY-PUBG-60', '2', customer],
});
const row = (line: number, customer: string, extra: string[] = []): RowInFile => ({
  header: [...header, ...extra.map((_, i) => `extra${i}`)], cells: ['KEY-PUBG-60', '2', customer, ...extra], line, topUp: false,
});

describe('RepeatMatcher', () => {
  it('a row with nothing in its own columns repeats a purchase with nothing in them, before a named row takes it (found by the simulator)', () => {
    // gift-1's card was refunded (not a purchase); the blank row's card was bought.
    const m = new RepeatMatcher([purchase(2, 'gift-1', 'cancelled', true), purchase(3, '')]);
    const found = m.matchAll([row(2, 'gift-1', ['yes']), row(3, '', ['yes'])]);
    expect(found.map((f) => f?.e.line)).toEqual([undefined, 3]);
  });

  it('a new customer above an old one does not take the old one\'s purchase', () => {
    const m = new RepeatMatcher([purchase(2, 'alice')]);
    expect(m.matchAll([row(2, 'bob'), row(3, 'alice')]).map((f) => f?.e.line)).toEqual([undefined, 2]);
  });

  it('each purchase is repeated once: one more equal row than purchases is bought', () => {
    const m = new RepeatMatcher([purchase(2, 'alice'), purchase(3, 'alice')]);
    expect(m.matchAll([row(2, 'alice'), row(3, 'alice'), row(4, 'alice')]).map((f) => f?.e.line)).toEqual([2, 3, undefined]);
  });
});
