/**
 * Issue 29, "every identity declared once": the player's key in the one cache of player checks
 * (store/player-checks.ts) is built by api/player-id.ts for both callers, the order API's desk
 * (orders/player-check-desk.ts playerKey) and a file's rows (claim/player-checks.ts checkOf). Were
 * they to differ, a check paid through one would not be found by the other and the supplier's
 * check tariff would be paid again for the same player.
 */
import { describe, expect, it } from 'vitest';
import { checkOf } from '../../src/claim/player-checks.js';
import { playerKey } from '../../src/orders/player-check-desk.js';
import { playerKey as declared } from '../../src/api/player-id.js';

const settings = { lines: 'all' as const, skipSeenMs: 0, priceUsd: 0.01, cacheMs: 86_400_000 };

describe('one key for a player, whoever asks for its check', () => {
  for (const [slug, kind, userId, zoneId] of [
    ['pubg', 'pubg', '5123456789', undefined],
    ['mobilelegends', 'ml', '777888999', '2005'],
    ['mobilelegends', 'ml', '０１２３', '９'],
  ] as const) {
    it(`${kind} ${userId}${zoneId ? ` (${zoneId})` : ''}: a file row's check and the order desk's are the same key`, () => {
      const row = checkOf(settings, slug, { pid: 'X', trxid: 't-1', userId, ...(zoneId ? { zoneId } : {}) }, 'default');
      expect(row).not.toBeNull();
      const desk = playerKey({ kind, userId, ...(zoneId ? { zoneId } : {}) });
      expect(row!.player).toBe(desk);
      expect(desk).toBe(declared({ kind, userId, zoneId }));
      expect(desk).toBe(kind === 'ml' ? `${userId}(${zoneId})` : userId);
    });
  }
});
