/**
 * How a placed order ends. Every decision is a pure function of (seed, trxid), so a test run, a
 * restart on the same state file and a resubmit all see the same fate for the same trxid.
 */
import { createHash } from 'node:crypto';
import type { FulfilmentSettings, OrderRecord } from './types.js';

/** A uniform number in [0, 1) derived from the parts; stable across runs and platforms. */
export function uniform(...parts: (string | number)[]): number {
  const h = createHash('sha256').update(parts.join('\u0000')).digest();
  return h.readUIntBE(0, 6) / 2 ** 48;
}

/** Test magic (choices.ts): these player ids always fail with INVALID PLAYER. */
export function isMagicFailure(userId: string | null): boolean {
  return userId !== null && (/fail/i.test(userId) || userId === '99999');
}

export type Fate = Pick<OrderRecord, 'status' | 'settleAt' | 'settleTo' | 'doneAt' | 'refundOnCancel' | 'error'>;

/** The real-world fates (choices.ts): null in the spec style, where every cancel is refunded after processing. */
export interface RealWorldFates { instantFailShare: number; unrefundedShare: number }

export function decideTopUp(s: FulfilmentSettings, trxid: string, userId: string | null, now: number, rw: RealWorldFates | null = null): Fate {
  const fails = isMagicFailure(userId) || uniform(s.seed, trxid, 'fail') < s.failShare;
  const refundOnCancel = !(fails && rw !== null && uniform(s.seed, trxid, 'unrefunded') < rw.unrefundedShare);
  if (fails && rw !== null && uniform(s.seed, trxid, 'instant-fail') < rw.instantFailShare) {
    return { status: 'cancelled', settleAt: null, settleTo: null, doneAt: now, refundOnCancel, error: 'INVALID PLAYER' };
  }
  const waits = fails || uniform(s.seed, trxid, 'processing') < s.processingShare;
  if (!waits) return { status: 'completed', settleAt: null, settleTo: null, doneAt: now, refundOnCancel, error: null };
  const [min, max] = s.processingMs;
  const ms = Math.round(min + uniform(s.seed, trxid, 'duration') * Math.max(0, max - min));
  return { status: 'processing', settleAt: now + ms, settleTo: fails ? 'cancelled' : 'completed', doneAt: null, refundOnCancel, error: null };
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Codes look like `PUBG-7QK2-M9XA-4HTR`; the prefix comes from the line's slug. */
export function makeCodes(slug: string, seed: number, trxid: string, quantity: number): string[] {
  const prefix = (slug.replace(/gamekey|giftcard/gi, '').replace(/googleplay/i, 'gplay').toUpperCase().slice(0, 5)) || 'CODE';
  const codes: string[] = [];
  for (let i = 0; i < quantity; i++) {
    const h = createHash('sha256').update(`${seed}\u0000${trxid}\u0000code\u0000${i}`).digest();
    let body = '';
    for (let k = 0; k < 12; k++) body += ALPHABET[(h[k] as number) % ALPHABET.length];
    codes.push(`${prefix}-${body.slice(0, 4)}-${body.slice(4, 8)}-${body.slice(8, 12)}`);
  }
  return codes;
}

export function validateFulfilment(f: FulfilmentSettings): FulfilmentSettings {
  const share = (n: number, name: string) => {
    if (!(typeof n === 'number' && n >= 0 && n <= 1)) throw new TypeError(`${name} must be a number in 0..1`);
  };
  share(f.processingShare, 'processingShare');
  share(f.failShare, 'failShare');
  const [a, b] = Array.isArray(f.processingMs) ? f.processingMs : [NaN, NaN];
  if (!(Number.isFinite(a) && Number.isFinite(b) && a >= 0 && b >= a)) throw new TypeError('processingMs must be [min, max] with 0 <= min <= max');
  if (!Number.isFinite(f.seed)) throw new TypeError('seed must be a number');
  return { ...f, processingMs: [a, b] };
}
