/**
 * Exactly which CSV cells get a `'` (src/outbox/cell-safety.ts, docs/notes/outbox.md), in both
 * directions: everything a spreadsheet could run or compute is guarded; plain numbers and phone
 * numbers in pass-through columns are left exactly as the reseller wrote them.
 */
import { describe, expect, it } from 'vitest';
import { safeCell } from '../../src/outbox/cell-safety.js';

const GUARDED = [
  // OWASP's leads, always
  '=1+1', '=HYPERLINK("http://evil","x")', "=cmd|' /C calc'!A0", '@SUM(1,1)', '@handle', '\t=1+1', '\tplain', '\rplain',
  // + and - that call, refer or compute
  '+1+1', '-1+2', "-2+3+cmd|' /C calc'!A0", '+A1', '-A1', '-SUM(A1:A9)', '+HYPERLINK("x")', '+1 - 1', '-5%', '-1E5', '+ 5',
  // a phone number written without spaces is a subtraction
  '+62-812-555-0101', '+1/2',
  // a lead hidden behind spaces or line breaks (an importer that trims would meet it)
  ' =1+1', '  @x', '\n=1', '\u00a0=1', ' -1+2',
  // letters after the sign
  '-ABCD-1234', '+x', '-y',
];

const LEFT_ALONE = [
  // signed numbers
  '-5', '+5', '-12.50', '-1,5', '-1 234,56', '+0', '-0.01', '+62.812.555',
  // phone numbers with spaces or parentheses between digit groups
  '+62 812-555-0101', '+1 (555) 123-4567', '+44 20 7946 0958', '+7 (912) 345-67-89', '+7(912)345-67-89', '+33 1 23 45 67 89',
  // placeholders
  '-', '--', '+',
  // no trigger at all
  '', 'Иван Петров', '5123456789', 'a=b', 'x-1', "'already quoted", ' 5', '   ',
];

describe('which cells get a quote', () => {
  it.each(GUARDED)('guards %j', (v) => {
    expect(safeCell(v)).toBe(`'${v}`);
  });

  it.each(LEFT_ALONE)('leaves %j exactly as it is', (v) => {
    expect(safeCell(v)).toBe(v);
  });
});
