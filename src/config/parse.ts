/**
 * The value parsers that the settings (config.ts) and the accounts file (accounts.ts) share, so a
 * duration, a rate limit, a URL or an address family means the same in both. Each error names the
 * setting it was given for (a TOPUP_ name, or `accounts.toml: account "main": rate_limits`).
 * In a file of its own because config.ts reads accounts.ts: both import from here, never each other.
 */
import { ConfigError } from '../kernel/errors.js';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface RateWindow {
  limit: number;
  windowMs: number;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `500ms`, `10s`, `1m`, `1h`; a bare number is milliseconds. */
export function parseDuration(text: string, setting: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!m) throw new ConfigError(setting, `"${text}" is not a duration (examples: 500ms, 10s, 1m)`);
  const ms = Number(m[1]) * DURATION_UNITS[m[2] ?? 'ms']!;
  if (!(ms > 0)) throw new ConfigError(setting, `duration "${text}" must be above zero`);
  return Math.round(ms);
}

/** `40/1s,200/1m` → windows, longest last. */
export function parseRateLimits(text: string, setting = 'TOPUP_RATE_LIMITS'): RateWindow[] {
  const parts = text.split(',').map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0) throw new ConfigError(setting, 'needs at least one calls/duration part, e.g. 40/1s,200/1m');
  const windows = parts.map((part) => {
    const m = /^(\d+)\s*\/\s*(.+)$/.exec(part);
    if (!m) throw new ConfigError(setting, `"${part}" is not calls/duration (example: 40/1s)`);
    const limit = Number(m[1]);
    if (!Number.isInteger(limit) || limit < 1) throw new ConfigError(setting, `"${part}": calls must be a whole number of at least 1`);
    return { limit, windowMs: parseDuration(m[2]!, setting) };
  });
  return windows.sort((a, b) => a.windowMs - b.windowMs);
}

/** An http(s) URL without its trailing slashes (the API's base URL, a webhook). */
export function parseHttpUrl(raw: string, setting: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(setting, `"${raw}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError(setting, `must be an http(s) URL, not ${u.protocol}`);
  return raw.replace(/\/+$/, '');
}

/** `4`, `6` or `auto`: the address family API connections use. */
export function parseIpFamily(raw: string, setting: string): 4 | 6 | 'auto' {
  const v = raw.trim().toLowerCase().replace(/^ipv/, '');
  if (v === '4') return 4;
  if (v === '6') return 6;
  if (v === 'auto') return 'auto';
  throw new ConfigError(setting, `must be 4, 6 or auto, not "${raw}" (4 is right for accounts with an IP allowlist)`);
}

/** How the key is sent: `X-API-Key: KEY` or `Authorization: Bearer KEY`. */
export function parseAuthHeader(raw: string, setting: string): 'x-api-key' | 'bearer' {
  const auth = raw.trim().toLowerCase();
  if (auth !== 'x-api-key' && auth !== 'bearer') throw new ConfigError(setting, `must be "x-api-key" or "bearer", not "${auth}"`);
  return auth;
}

/**
 * A secret setting (a token, a signing secret): NAME, else the file NAME_FILE names (relative to
 * the home), else systemd's $CREDENTIALS_DIRECTORY/<cred> (LoadCredential=), trimmed; null when
 * none is set. At least `min` characters and no white space, else a ConfigError naming the setting
 * it came from. One reader for the console's token and the order API's token and webhook secret.
 */
export function secretSetting(env: Record<string, string>, name: string, home: string, credDir: string | undefined, cred: string, min: number, noun: string): string | null {
  let value = (env[name] ?? '').trim();
  let from = name;
  const file = (env[`${name}_FILE`] ?? '').trim();
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(`${name}_FILE`, `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  if (value === '' && file !== '') {
    value = read(resolve(home, file));
    from = `${name}_FILE`;
  }
  if (value === '' && credDir && existsSync(join(credDir, cred))) {
    value = read(join(credDir, cred));
    from = `${name}_FILE`;
  }
  if (value === '') return null;
  if (value.length < min) throw new ConfigError(from, `${noun} must be at least ${min} characters (make one with: openssl rand -hex 24)`);
  if (/\s/.test(value)) throw new ConfigError(from, `${noun} contains whitespace`);
  return value;
}
