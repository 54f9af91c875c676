import { describe, expect, it } from 'vitest';
import { parseProduct, parseServiceLine } from '../../src/api/schemas.js';
import { buildCatalogIndex } from '../../src/intake/catalog-index.js';
import { loadCatalog } from './helpers.js';

describe('buildCatalogIndex', () => {
  const catalog = loadCatalog();

  it.each([
    ['101', 'player-id', ['userId']],
    ['103', 'player-id', ['userId']],
    ['201', 'player-id', ['userId']],
    ['301', 'ml', ['userId', 'zoneId']],
    ['401', 'uid-server', ['userId', 'serverId']],
    ['501', 'region-server', ['userId', 'region', 'moreId']],
    ['601', 'riot-id', ['userId']],
    ['701', 'stock', []],
    ['801', 'stock', []],
    ['802', 'stock', []],
  ])('pid %s is %s needing %j', (pid, kind, fields) => {
    const e = catalog.byPid(pid);
    expect(e?.kind).toBe(kind);
    expect(e?.required.map((r) => r.field)).toEqual(fields);
  });

  it('keeps the labels the supplier gives', () => {
    expect(catalog.byPid('601')?.required).toEqual([{ field: 'userId', label: 'Riot ID (name#tag)' }]);
  });

  it('looks up lines and slug+pack without regard to case or spacing', () => {
    expect(catalog.line('WutheringWaves')?.serverIdOptions?.[0]).toEqual({ value: 'america', label: 'America' });
    expect(catalog.bySlugPack('pubg', 'prime  1 month')?.product.id).toBe('103');
    expect(catalog.bySlugPack('pubg', '8100 UC')).toBeUndefined(); // inactive
    expect(catalog.slugPackCandidates('pubg', '8100 UC')).toHaveLength(1);
  });

  it('recognises key/card shapes by category spelling or by stock fields, and riot lines by slug', () => {
    const line = (slug: string, required: { field: string; label: string }[] = []) =>
      parseServiceLine({ productName: slug, slug, gameName: slug, status: 'active', required });
    const product = (id: string, slug: string, extra: Record<string, unknown>) =>
      parseProduct({ id, slug, gameName: slug, serviceName: id, category: 'topup', price: 1, status: 'active', ...extra });
    const idx = buildCatalogIndex(
      [line('lol', [{ field: 'userId', label: 'Summoner' }]), line('codes'), line('pubg', [{ field: 'userID', label: 'Player ID' }])],
      [
        product('a', 'codes', { category: 'Game Key' }),
        product('b', 'codes', { category: 'GIFT_CARD' }),
        product('c', 'codes', { inStock: true }),
        product('d', 'lol', {}),
        product('e', 'pubg', { inStock: true }), // a top-up that reports stock keeps its player-id shape
        product('f', 'nowhere', {}),
      ],
    );
    expect(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => idx.byPid(id)?.kind)).toEqual(['stock', 'stock', 'stock', 'riot-id', 'player-id', 'player-id']);
    expect(idx.byPid('f')?.line).toBeUndefined();
  });

  it('reports required fields it cannot send', () => {
    const idx = buildCatalogIndex(
      [parseServiceLine({ productName: 'x', slug: 'x', gameName: 'X', status: 'active', required: [{ field: 'email', label: 'E-mail' }] })],
      [parseProduct({ id: 1, slug: 'x', gameName: 'X', serviceName: 'p', category: 'topup', price: 1, status: 'active' })],
    );
    expect(idx.byPid('1')?.unsupported).toEqual(['email']);
  });
});
