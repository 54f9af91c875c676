/**
 * Adversarial review 8 (issue 23), docs: GET /api/v1/orders?since=evt_<16 to 18 digits>.
 * The route's schema (FeedQuery) takes a cursor of up to 18 digits, the desk's cursorId() only up
 * to 15 and throws a RangeError past that, which the API's error handler answers as
 * `500 INTERNAL` ("the daemon failed"). docs/order-api.md and the OpenAPI document promise
 * `400 INVALID_CURSOR` for a cursor that is not one. A correct system answers 400 INVALID_CURSOR
 * (or reads on from that number: an empty page with the same `next`) and never a 500.
 */
import { describe, expect, it } from 'vitest';
import { releaseAfterEach } from '../e2e/release.js';
import { shop, start } from '../e2e/daemon.js';

releaseAfterEach();

describe('the feed with a long cursor', () => {
  it('since=evt_1234567890123456 (16 digits, accepted by the route schema) is a 400 INVALID_CURSOR, not a 500', async () => {
    const { env } = await shop();
    const { daemon, call } = await start(env);
    try {
      const r = await call('GET', '/api/v1/orders?since=evt_1234567890123456');
      expect(r.status, r.text).not.toBe(500);
      expect(r.status, r.text).toBe(400);
      expect(r.json.code).toBe('INVALID_CURSOR');
    } finally {
      await daemon.stop();
    }
  }, 60_000);
});
