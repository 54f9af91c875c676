/**
 * Adversarial review 8 (issue 23), robustness/docs: POST /api/v1/orders with a `meta` nested
 * 5,000 arrays deep (10 KB: under the 16 KB body cap). JSON.parse takes it, but the meta schema's
 * size check (JSON.stringify) and the desk's bodyHash (recursive canon) overflow the stack: a
 * RangeError answered `500 INTERNAL`, whose docs tell the shop "whether the order was stored is
 * not known … resend the same body", which fails the same way for ever. A correct system answers
 * `422 INVALID_ORDER` naming `meta` (e.g. a depth limit, checked without recursion), stores
 * nothing, and never answers 500 to a body it can classify.
 */
import { describe, expect, it } from 'vitest';
import { releaseAfterEach } from '../e2e/release.js';
import { shop, start } from '../e2e/daemon.js';

releaseAfterEach();

describe('an order with a deeply nested meta', () => {
  it('is refused 422 INVALID_ORDER (field meta), not answered 500', async () => {
    const { env } = await shop();
    const { daemon, call } = await start(env);
    try {
      const depth = 5_000;
      const body = `{"trxid":"ADV8-DEEP-1","pid":"PUBG-60","userId":"5123456701","meta":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      expect(body.length).toBeLessThan(16 * 1024);
      const r = await call('POST', '/api/v1/orders', { body });
      expect(r.status, r.text).not.toBe(500);
      expect(r.status, r.text).toBe(422);
      expect(r.json.code).toBe('INVALID_ORDER');
      expect(r.json.errors.map((e: { field: string }) => e.field)).toContain('meta');
    } finally {
      await daemon.stop();
    }
  }, 60_000);
});
