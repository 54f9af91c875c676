import { describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/kernel/errors.js';
import { canonicalField, columnName, mapHeader } from '../../src/intake/columns.js';

describe('mapHeader', () => {
  it('maps aliases, case and _/space/- variants; keeps other columns by position', () => {
    const h = mapHeader(['Note', 'PID', 'idTrx', 'user id', 'Zone_ID', 'server-id', 'REGION', 'moreId', 'Quantity', 'max_price_usd', 'Slug', 'Pack']);
    expect(h.fields).toEqual({ pid: 1, trxid: 2, userId: 3, zoneId: 4, serverId: 5, region: 6, moreId: 7, quantity: 8, maxPriceUsd: 9, slug: 10, pack: 11 });
    expect(columnName(h, 'userId')).toBe('user id');
    expect(columnName({ columns: ['pid'], fields: { pid: 0 } }, 'zoneId')).toBe('zoneId');
  });

  it.each(['trxId', 'idtrx', 'idTrx', 'TRXID'])('%s is trxid', (name) => expect(canonicalField(name)).toBe('trxid'));

  it('accepts slug + pack without pid, and repeated blank header cells', () => {
    expect(mapHeader(['slug', 'pack', 'userId', '', '']).fields).toEqual({ slug: 0, pack: 1, userId: 2 });
  });

  it('refuses duplicates (after aliasing, and among other columns), naming them', () => {
    expect(() => mapHeader(['pid', 'userID', 'user_id'])).toThrow(/"userID" and "user_id"/);
    expect(() => mapHeader(['pid', 'note', 'NOTE'])).toThrow(/"note" and "NOTE"/);
  });

  it('refuses a header with no way to name the pack, or an empty one', () => {
    expect(() => mapHeader(['slug', 'userId'])).toThrow(InputFileError);
    expect(() => mapHeader(['', ' '])).toThrow(/empty/);
  });
});
