import { describe, expect, it } from 'vitest';
import { csvText } from '../../src/kernel/csv-text.js';

describe('csvText', () => {
  it('quotes a cell holding a bare carriage return, which spreadsheets read as a row break', () => {
    const out = csvText([["'\r=1+1", 'b']], { record_delimiter: '\n' });
    expect(out).toBe('"\'\r=1+1",b\n');
  });
  it('quotes line feeds and CRLF as before, and leaves plain cells bare', () => {
    expect(csvText([['a\nb', 'c\r\nd', 'e']])).toBe('"a\nb","c\r\nd",e\n');
    expect(csvText([['x', 'y']], { delimiter: ';' })).toBe('x;y\n');
  });
});
