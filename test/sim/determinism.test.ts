/**
 * A failing seed must replay exactly (docs/simulator.md, Determinism): nothing a run decides may
 * read real time or keep state from one schedule to the next. Schedules of a seed run in one
 * process, as a worker of `npm run simulate` runs them, and the last ones run again with real-time
 * jitter in every wait for quiet (a loaded machine, made on purpose): the same events, in the same
 * order at the same simulated times, and the same verdict. The schedules are drawn with sibling,
 * respell and fold on (where seed 20261133's failure that "did not replay" was found), crashes and
 * lost answers, so files are claimed, results written and processes killed between the two runs.
 */
import { describe, expect, it } from 'vitest';
import { checkDeterminism } from '../../sim/determinism.js';
import { faultFilter } from '../../sim/world.js';

describe('the simulator is deterministic', () => {
  it('a schedule run again after others, under real-time jitter, gives the same events and verdict', async () => {
    const r = await checkDeterminism(20261133, 6, [4, 5], {
      jitter: 5,
      apiOrders: 'none',
      faults: faultFilter('sibling,respell,fold,lost,error,crash,forbidden,refuse-resend', undefined, false),
    });
    for (const a of r.again) expect(a.differs, a.differs ?? '').toBeNull();
    expect(r.again.every((a) => a.events > 50)).toBe(true);
  }, 300_000);

  it('a schedule with a shop and two accounts run again in the same process gives the same events', async () => {
    const r = await checkDeterminism(7, 4, [3], { jitter: 5, accounts: 'two', apiOrders: 'all' });
    for (const a of r.again) expect(a.differs, a.differs ?? '').toBeNull();
  }, 300_000);
});
