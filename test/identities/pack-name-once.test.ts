/**
 * Issue 29, "every identity declared once": a pack's slug and name are found by one fold
 * (api/pack-id.ts foldPackName) both in a file's row (intake/catalog-index.ts) and at another
 * account when a row is routed or moved (account/routing.ts samePackAt). Two accounts list the same
 * pack spelled apart in case and spacing (a no-break space, runs of spaces): the row's pack is
 * found at each, and samePackAt finds the one at the other account.
 */
import { describe, expect, it } from 'vitest';
import { parseProduct, parseServiceLine } from '../../src/api/schemas.js';
import { foldPackName } from '../../src/api/pack-id.js';
import { buildCatalogIndex } from '../../src/intake/catalog-index.js';
import { samePackAt } from '../../src/account/routing.js';

const index = (pid: string, slug: string, pack: string) =>
  buildCatalogIndex(
    [parseServiceLine({ productName: slug, slug, gameName: 'PUBG Mobile', status: 'active', required: [{ field: 'userId', label: 'Player ID' }] })],
    [parseProduct({ id: pid, slug, gameName: 'PUBG Mobile', serviceName: pack, category: 'topup', price: 1, status: 'active' })],
  );

describe('one fold for a pack, in a file and at another account', () => {
  const a = { name: 'first', index: index('A-60', 'pubg', '60 UC') };
  const b = { name: 'second', index: index('B-60', ' PUBG\u00a0', '60\u00a0\u00a0uc ') };

  it('the file row\'s slug and pack find the pack at each account', () => {
    expect(a.index.bySlugPack('Pubg', '60  UC')?.product.id).toBe('A-60');
    expect(b.index.bySlugPack('pubg', '60 UC')?.product.id).toBe('B-60');
  });

  it('routing finds the same pack at the other account, both ways', () => {
    expect(samePackAt(a.index.byPid('A-60')!, b, [], [a, b])?.product.id).toBe('B-60');
    expect(samePackAt(b.index.byPid('B-60')!, a, [], [a, b])?.product.id).toBe('A-60');
  });

  it('the fold: case (Unicode\'s), white space around, runs of any space', () => {
    expect(foldPackName('  Ärger\u3000\u3000PACK ')).toBe('ärger pack');
    expect(foldPackName('60\u00a0UC')).toBe(foldPackName('60 uc'));
  });
});
