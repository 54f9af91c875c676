/**
 * The order API's settings (docs/order-api.md), read by config/config.ts with the others: a bad
 * value is a ConfigError naming the setting.
 *
 *   TOPUP_ORDER_API_TOKEN / _FILE     a token with every scope (more, with scopes of their own:
 *                                     `topup token create`). Without one and without tokens made by
 *                                     that command the API answers 401 to everything: it places orders.
 *   TOPUP_ORDER_WEBHOOK_URL           where every change of an API order is posted (signed)
 *   TOPUP_ORDER_WEBHOOK_SECRET / _FILE  the HMAC-SHA256 key of Topup-Signature (required with a URL)
 *   TOPUP_ORDER_WEBHOOK_CODES         1: completed orders' codes are in the webhook's body
 *   TOPUP_ORDER_WEBHOOK_ALLOW         origins a per-order callbackUrl may name (comma-separated,
 *                                     e.g. https://shop.example.com); empty: callbackUrl is refused.
 *                                     The daemon posts to what a token holder names: not to any host.
 */
import { ConfigError } from '../kernel/errors.js';
import { secretSetting } from './parse.js';

export interface OrderApiSettings {
  /** TOPUP_ORDER_API_TOKEN(_FILE): a token with every scope, or null. */
  token: string | null;
  webhook: {
    url: string | null;
    secret: string | null;
    codes: boolean;
    /** Origins (scheme://host[:port], lower case) a per-order callbackUrl may use. */
    allow: string[];
  };
}

export const ORDER_API_DEFAULTS = {
  TOPUP_ORDER_API_TOKEN: '',
  TOPUP_ORDER_API_TOKEN_FILE: '',
  TOPUP_ORDER_WEBHOOK_URL: '',
  TOPUP_ORDER_WEBHOOK_SECRET: '',
  TOPUP_ORDER_WEBHOOK_SECRET_FILE: '',
  TOPUP_ORDER_WEBHOOK_CODES: '0',
  TOPUP_ORDER_WEBHOOK_ALLOW: '',
} as const;

/** Shorter tokens and secrets can be guessed. */
export const MIN_SECRET = 16;

function secret(env: Record<string, string>, name: 'TOPUP_ORDER_API_TOKEN' | 'TOPUP_ORDER_WEBHOOK_SECRET', home: string, credDir: string | undefined, cred: string): string | null {
  return secretSetting(env, name, home, credDir, cred, MIN_SECRET, name === 'TOPUP_ORDER_API_TOKEN' ? 'the token' : 'the secret');
}

/** An http(s) URL's origin, lower case, or a ConfigError naming the setting. */
export function originOf(raw: string, setting: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(setting, `"${raw}" is not a URL (e.g. https://shop.example.com)`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new ConfigError(setting, `"${raw}" must be an http:// or https:// URL`);
  return u.origin.toLowerCase();
}

export function orderApiSettings(env: Record<string, string>, home: string, credDir: string | undefined): OrderApiSettings {
  const token = secret(env, 'TOPUP_ORDER_API_TOKEN', home, credDir, 'topup-order-api-token');
  const rawUrl = env.TOPUP_ORDER_WEBHOOK_URL!.trim();
  const url = rawUrl === '' ? null : (originOf(rawUrl, 'TOPUP_ORDER_WEBHOOK_URL'), rawUrl);
  const allow = env.TOPUP_ORDER_WEBHOOK_ALLOW!.split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => originOf(s, 'TOPUP_ORDER_WEBHOOK_ALLOW'));
  const sec = secret(env, 'TOPUP_ORDER_WEBHOOK_SECRET', home, credDir, 'topup-order-webhook-secret');
  if ((url !== null || allow.length > 0) && sec === null) {
    throw new ConfigError(url !== null ? 'TOPUP_ORDER_WEBHOOK_URL' : 'TOPUP_ORDER_WEBHOOK_ALLOW', 'webhooks are signed: set TOPUP_ORDER_WEBHOOK_SECRET (or _FILE), at least 16 characters (openssl rand -hex 32)');
  }
  const codesRaw = env.TOPUP_ORDER_WEBHOOK_CODES!.trim().toLowerCase();
  let codes: boolean;
  if (['1', 'true', 'yes', 'on'].includes(codesRaw)) codes = true;
  else if (['', '0', 'false', 'no', 'off'].includes(codesRaw)) codes = false;
  else throw new ConfigError('TOPUP_ORDER_WEBHOOK_CODES', `must be 1 or 0, not "${env.TOPUP_ORDER_WEBHOOK_CODES}"`);
  return { token, webhook: { url, secret: sec, codes, allow } };
}
