/** TOPUP_PLAYER_CHECKS and its companions: validated once, a bad value named; off by default. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { checkedLine } from '../../src/config/player-check-settings.js';
import { ConfigError } from '../../src/kernel/errors.js';

const home = mkdtempSync(join(tmpdir(), 'topup-player-settings-'));
const load = (env: Record<string, string>) => loadConfig({ TOPUP_HOME: home, ...env });

describe('player check settings', () => {
  it('are off by default', () => {
    const c = load({}).playerChecks;
    expect(c).toEqual({ lines: 'off', skipSeenMs: 0, priceUsd: 0, cacheMs: 30 * 86_400_000 });
    expect(checkedLine(c, 'pubg')).toBeNull();
  });

  it('all, or the lines named; only lines the supplier can check', () => {
    const all = load({ TOPUP_PLAYER_CHECKS: 'all' }).playerChecks;
    expect(checkedLine(all, 'pubg')).toBe('pubg');
    expect(checkedLine(all, 'mobilelegends')).toBe('ml');
    expect(checkedLine(all, 'ffmena')).toBeNull();
    expect(checkedLine(all, 'gamekeypubg')).toBeNull();
    const some = load({ TOPUP_PLAYER_CHECKS: 'mobilelegends' }).playerChecks;
    expect(checkedLine(some, 'mobilelegends')).toBe('ml');
    expect(checkedLine(some, 'pubg')).toBeNull();
  });

  it('a bad value stops start-up with a message naming the setting', () => {
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ TOPUP_PLAYER_CHECKS: 'pubg,ffmena' }, 'TOPUP_PLAYER_CHECKS', /"ffmena": the supplier has player checks only for/],
      [{ TOPUP_PLAYER_CHECK_SKIP_DAYS: 'week' }, 'TOPUP_PLAYER_CHECK_SKIP_DAYS', /whole number of days/],
      [{ TOPUP_PLAYER_CHECK_PRICE_USD: '-1' }, 'TOPUP_PLAYER_CHECK_PRICE_USD', /not a price/],
      [{ TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_CACHE_DAYS: '0' }, 'TOPUP_PLAYER_CHECK_CACHE_DAYS', /at least 1/],
    ];
    for (const [env, setting, said] of cases) {
      let err: unknown;
      try { load(env); } catch (e) { err = e; }
      expect(err, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).setting).toBe(setting);
      expect((err as ConfigError).message).toMatch(said);
    }
  });
});
