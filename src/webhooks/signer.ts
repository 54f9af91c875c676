/**
 * The webhooks' signature (docs/webhooks.md): `Topup-Signature: t=<unix seconds>,v1=<hex>`, where
 * hex is HMAC-SHA256 of `<t>.<body>` keyed with TOPUP_ORDER_WEBHOOK_SECRET. The scheme Stripe and
 * many others use, so a shop's developer has seen it before:
 *  - the time is inside what is signed, so a captured request cannot be replayed days later (the
 *    receiver refuses a `t` older than its tolerance);
 *  - the body is signed byte for byte as sent: a receiver must verify the raw body, before parsing;
 *  - several `v1=` values may stand in one header, so a secret can be rotated later (sign with the
 *    old and the new one for a while) without a receiver rejecting anything.
 * Comparison is constant-time (timingSafeEqual): a receiver that compares with === leaks, byte by
 * byte, how much of a forged signature was right.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { systemClock } from '../kernel/clock.js';

export const SIGNATURE_HEADER = 'Topup-Signature';

/** The hex HMAC-SHA256 of `<t>.<body>`. */
export function signature(secret: string, body: string, t: number): string {
  return createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest('hex');
}

/** The header's value for `body` signed at `t` (unix seconds) with each secret given (one, or two while rotating). */
export function sign(secret: string | readonly string[], body: string, t: number): string {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  return [`t=${Math.floor(t)}`, ...secrets.map((s) => `v1=${signature(s, body, Math.floor(t))}`)].join(',');
}

export type VerifyResult = { ok: true; t: number } | { ok: false; reason: 'malformed' | 'too old' | 'in the future' | 'no match' };

/**
 * Whether `header` signs `body` with `secret`, at a time within `toleranceSec` of now (`nowSec`,
 * unix seconds: the system's clock unless a test fixes it). Any one of several v1= values may match.
 */
export function verify(header: string | null | undefined, body: string, secret: string, toleranceSec = 300, nowSec = Math.floor(systemClock.now() / 1000)): VerifyResult {
  if (!header) return { ok: false, reason: 'malformed' };
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/i.test(v)) v1.push(v.toLowerCase());
  }
  if (t === null || v1.length === 0) return { ok: false, reason: 'malformed' };
  if (nowSec - t > toleranceSec) return { ok: false, reason: 'too old' };
  if (t - nowSec > toleranceSec) return { ok: false, reason: 'in the future' };
  const expected = Buffer.from(signature(secret, body, t), 'hex');
  // Every candidate is compared (no early exit), each in constant time.
  let match = false;
  for (const v of v1) if (timingSafeEqual(expected, Buffer.from(v, 'hex'))) match = true;
  return match ? { ok: true, t } : { ok: false, reason: 'no match' };
}
