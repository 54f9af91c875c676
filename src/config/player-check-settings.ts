/**
 * The player-name checks' settings (docs/player-checks.md), read by config/config.ts with the
 * others: a bad value is a ConfigError naming the setting. Off unless the reseller turns them on:
 * a check is a call of the account's rate budget and may be charged by the supplier's tariff.
 *
 *   TOPUP_PLAYER_CHECKS            off (default) | all | the game lines to check, comma-separated
 *                                  (`pubg,mobilelegends`): a line must be one the supplier has a
 *                                  check for (PUBG Mobile top-ups: /pubgvvfy; Mobile Legends: /mlvfy)
 *   TOPUP_PLAYER_CHECK_SKIP_DAYS   0 (default): every row of a checked line; N: only rows (and the
 *                                  order API's orders) whose player was not seen completed (same
 *                                  check, same player fields) in the last N days
 *   TOPUP_PLAYER_CHECK_PRICE_USD   what one check costs at the supplier (default 0): what validate
 *                                  and the console say checks may cost, and what summaries count
 *   TOPUP_PLAYER_CHECK_CACHE_DAYS  how long an answer is kept (default 30): a regular customer is
 *                                  checked once in that time, whatever the file
 */
import { ConfigError } from '../kernel/errors.js';

/** Which check a line has, by its slug: the supplier's two checks (api/player-check.ts). */
export function checkKindOfSlug(slug: string): 'pubg' | 'ml' | null {
  const s = slug.trim().toLowerCase();
  // The UC top-up lines (pubg, pubgcncn, pubgucspecial …), not the redeem-code lines (gamekeypubg).
  if (/^pubg/.test(s)) return 'pubg';
  if (/^(mobilelegends|mlbb)/.test(s)) return 'ml';
  return null;
}

export interface PlayerCheckSettings {
  /** 'off', 'all' (every line that has a check), or the lines named. */
  lines: 'off' | 'all' | readonly string[];
  /** 0: every row; N > 0: only players not seen completed in the last N days (ms). */
  skipSeenMs: number;
  priceUsd: number;
  cacheMs: number;
}

export const PLAYER_CHECK_DEFAULTS = {
  TOPUP_PLAYER_CHECKS: 'off',
  TOPUP_PLAYER_CHECK_SKIP_DAYS: '0',
  TOPUP_PLAYER_CHECK_PRICE_USD: '0',
  TOPUP_PLAYER_CHECK_CACHE_DAYS: '30',
} as const;

function days(env: Record<string, string>, name: keyof typeof PLAYER_CHECK_DEFAULTS, max: number): number {
  const raw = env[name]!.trim();
  if (!/^\d+$/.test(raw) || Number(raw) > max) throw new ConfigError(name, `"${raw}" must be a whole number of days, 0..${max}`);
  return Number(raw) * 86_400_000;
}

export function playerCheckSettings(env: Record<string, string>): PlayerCheckSettings {
  const raw = env.TOPUP_PLAYER_CHECKS!.trim().toLowerCase();
  let lines: PlayerCheckSettings['lines'];
  if (['', 'off', '0', 'no', 'false'].includes(raw)) lines = 'off';
  else if (['all', 'on', '1', 'yes', 'true'].includes(raw)) lines = 'all';
  else {
    const named = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
    const none = named.filter((s) => checkKindOfSlug(s) === null);
    if (none.length > 0) {
      throw new ConfigError('TOPUP_PLAYER_CHECKS', `${none.map((s) => `"${s}"`).join(', ')}: the supplier has player checks only for PUBG Mobile top-ups (lines pubg…) and Mobile Legends (mobilelegends…); use off, all, or such lines`);
    }
    lines = Object.freeze(named);
  }
  const priceRaw = env.TOPUP_PLAYER_CHECK_PRICE_USD!.trim();
  const price = Number(priceRaw);
  if (priceRaw === '' || !Number.isFinite(price) || price < 0 || price > 100) throw new ConfigError('TOPUP_PLAYER_CHECK_PRICE_USD', `"${priceRaw}" is not a price in USD (0..100)`);
  const cacheMs = days(env, 'TOPUP_PLAYER_CHECK_CACHE_DAYS', 3650);
  if (lines !== 'off' && cacheMs === 0) throw new ConfigError('TOPUP_PLAYER_CHECK_CACHE_DAYS', 'must be at least 1 with checks on: the answer a row is sent or held by is the one kept');
  return { lines, skipSeenMs: days(env, 'TOPUP_PLAYER_CHECK_SKIP_DAYS', 3650), priceUsd: price, cacheMs };
}

/** Whether rows of this line are checked under these settings (and which check). */
export function checkedLine(s: PlayerCheckSettings, slug: string): 'pubg' | 'ml' | null {
  if (s.lines === 'off') return null;
  const kind = checkKindOfSlug(slug);
  if (kind === null) return null;
  return s.lines === 'all' || s.lines.includes(slug.trim().toLowerCase()) ? kind : null;
}
