/** §8 rolling windows at their edges, driven through the client on the sandbox's manual clock. */
import { describe, expect, it } from 'vitest';
import type { ResellerClient } from '../../src/api/client.js';
import { ApiError } from '../../src/kernel/errors.js';
import { manualClock } from '../sandbox/helpers.js';
import { countingGate, setup } from './helpers.js';

const SPEC_LIMITS = [{ limit: 40, windowMs: 1000 }, { limit: 200, windowMs: 60_000 }];

/** n concurrent GET /balance calls; each result is 'ok' or the ApiError. */
async function burst(api: ResellerClient, n: number): Promise<('ok' | ApiError)[]> {
  const settled = await Promise.allSettled(Array.from({ length: n }, () => api.balance()));
  return settled.map((s) => {
    if (s.status === 'fulfilled') return 'ok';
    expect(s.reason).toBeInstanceOf(ApiError);
    return s.reason as ApiError;
  });
}

const allOk = (r: ('ok' | ApiError)[]) => r.every((x) => x === 'ok');
const limited = (r: ('ok' | ApiError)[]) => r.filter((x): x is ApiError => x !== 'ok'
  && x.classification === 'retry-later' && x.status === 429 && x.apiCode === 'RATE_LIMIT');

describe('§8 rolling windows through the client', () => {
  it('§8 1 s rolling window: 40 at 0.9 s, 40 more at 1.1 s → the extra ones get RATE_LIMIT until 1.9 s', async () => {
    const clock = manualClock();
    const gate = countingGate();
    const { sb, api } = await setup({ now: clock.now, rateLimits: SPEC_LIMITS }, { gate });
    clock.set(900);
    expect(allOk(await burst(api, 40))).toBe(true);
    clock.set(1100);
    const second = await burst(api, 40);
    expect(limited(second)).toHaveLength(40);
    expect(second.every((x) => x !== 'ok' && x.retryAfterMs === 1000)).toBe(true); // 0.8 s, rounded up to a whole second
    expect(gate.holdOffs).toHaveLength(40);
    clock.set(1899);
    expect(limited(await burst(api, 1))).toHaveLength(1);
    clock.set(1900);
    expect(allOk(await burst(api, 40))).toBe(true);
    expect(limited(await burst(api, 1))).toHaveLength(1);
    expect(sb.admin.rateStats().worstPerWindow[0]).toMatchObject({ windowMs: 1000, limit: 40, worstAdmitted: 40 });
  });

  it('§8 the 41st call inside one second is limited; the window is rolling, not aligned to whole seconds', async () => {
    const clock = manualClock();
    const { api } = await setup({ now: clock.now, rateLimits: SPEC_LIMITS });
    clock.set(500);
    expect(allOk(await burst(api, 20))).toBe(true);
    clock.set(1200); // a fixed window would have reset at 1.0 s
    expect(allOk(await burst(api, 20))).toBe(true);
    clock.set(1499);
    expect(limited(await burst(api, 1))).toHaveLength(1);
    clock.set(1500); // the calls at 0.5 s leave the window
    expect(allOk(await burst(api, 20))).toBe(true);
    expect(limited(await burst(api, 1))).toHaveLength(1);
  });

  it('§8 1 min rolling window: 200 calls, then RATE_LIMIT with Retry-After counting down to the first call leaving', async () => {
    const clock = manualClock();
    const gate = countingGate();
    const { api } = await setup({ now: clock.now, rateLimits: SPEC_LIMITS }, { gate });
    for (let s = 0; s < 5; s++) {
      clock.set(s * 1000);
      expect(allOk(await burst(api, 40))).toBe(true);
    }
    clock.set(10_000);
    const [e] = limited(await burst(api, 1));
    expect(e?.retryAfterMs).toBe(50_000);
    expect(gate.holdOffs).toEqual([50_000]);
    clock.set(59_999);
    expect(limited(await burst(api, 1))).toHaveLength(1);
    clock.set(60_000);
    expect(allOk(await burst(api, 40))).toBe(true);
  });
});
