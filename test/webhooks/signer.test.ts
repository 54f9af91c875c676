/** Topup-Signature: a known-answer vector (computed with openssl, not with our code) and verify's rules. */
import { describe, expect, it } from 'vitest';
import { sign, signature, verify } from '../../src/webhooks/signer.js';

// printf '%s' '1700000000.{"id":"evt_1","type":"order.completed"}' | openssl dgst -sha256 -hmac 'test-secret-0123456789abcdef'
const VECTOR = {
  secret: 'test-secret-0123456789abcdef',
  body: '{"id":"evt_1","type":"order.completed"}',
  t: 1_700_000_000,
  hex: '4da8c2850e182feee89d2eebb7de6a5aec4452d22e6fd90d2405e722af247c6a',
};

describe('Topup-Signature', () => {
  it('matches the known answer', () => {
    expect(signature(VECTOR.secret, VECTOR.body, VECTOR.t)).toBe(VECTOR.hex);
    expect(sign(VECTOR.secret, VECTOR.body, VECTOR.t)).toBe(`t=1700000000,v1=${VECTOR.hex}`);
  });

  it('verifies its own header within the tolerance, and nothing else', () => {
    const h = sign(VECTOR.secret, VECTOR.body, VECTOR.t);
    expect(verify(h, VECTOR.body, VECTOR.secret, 300, VECTOR.t + 10)).toEqual({ ok: true, t: VECTOR.t });
    expect(verify(h, VECTOR.body, VECTOR.secret, 300, VECTOR.t + 301)).toEqual({ ok: false, reason: 'too old' });
    expect(verify(h, VECTOR.body, VECTOR.secret, 300, VECTOR.t - 301)).toEqual({ ok: false, reason: 'in the future' });
    expect(verify(h, `${VECTOR.body} `, VECTOR.secret, 300, VECTOR.t)).toEqual({ ok: false, reason: 'no match' });
    expect(verify(h, VECTOR.body, `${VECTOR.secret}x`, 300, VECTOR.t)).toEqual({ ok: false, reason: 'no match' });
    // The time is signed: moving it breaks the signature.
    expect(verify(h.replace('t=1700000000', 't=1700000001'), VECTOR.body, VECTOR.secret, 300, VECTOR.t).ok).toBe(false);
    for (const bad of ['', 'v1=abc', `t=1700000000`, `t=x,v1=${VECTOR.hex}`, `t=1700000000,v1=${VECTOR.hex.slice(1)}`, null, undefined]) {
      expect(verify(bad, VECTOR.body, VECTOR.secret, 300, VECTOR.t)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('accepts any one of several v1 values (a secret being rotated)', () => {
    const both = sign(['old-secret-0123456789abcdef', VECTOR.secret], VECTOR.body, VECTOR.t);
    expect(both.split(',')).toHaveLength(3);
    expect(verify(both, VECTOR.body, VECTOR.secret, 300, VECTOR.t).ok).toBe(true);
    expect(verify(both, VECTOR.body, 'old-secret-0123456789abcdef', 300, VECTOR.t).ok).toBe(true);
    expect(verify(both, VECTOR.body, 'third-secret-0123456789abcdef', 300, VECTOR.t).ok).toBe(false);
    // Upper-case hex and spaces after commas are read too.
    expect(verify(`t=${VECTOR.t}, v1=${'0'.repeat(64)}, v1=${VECTOR.hex.toUpperCase()}`, VECTOR.body, VECTOR.secret, 300, VECTOR.t).ok).toBe(true);
  });

  it('uses the system clock when no time is given', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(verify(sign(VECTOR.secret, VECTOR.body, now), VECTOR.body, VECTOR.secret).ok).toBe(true);
    expect(verify(sign(VECTOR.secret, VECTOR.body, now - 3600), VECTOR.body, VECTOR.secret).ok).toBe(false);
  });
});
