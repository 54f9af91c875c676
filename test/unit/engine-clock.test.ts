/**
 * Issue 12, time that cannot stall the engine, without processes: a clock whose wall time steps
 * while its monotonic time runs on (or is moved by hand), and the real store in a temp home.
 *  - pauses live in the store: what one process learns, another obeys; their back-off runs on the
 *    monotonic clock, so a wall-clock step neither ends nor freezes them;
 *  - a wall-clock step back is noticed, stored due times and leases ahead of any possible wait
 *    are brought back to now, and the step is an event;
 *  - the waits counted from a stored "since" (a row's doubt clock, an account pause's start) move
 *    back with the step, once for the home, whether a process saw the step or started after it
 *    (store/wall-mark.ts; seed 20261127 #31, test/sim/found/forever-history-clock-step-back.json).
 */
import { describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import { Pauses } from '../../src/account/pauses.js';
import { LeaseStage } from '../../src/engine/stages/leases.js';
import type { EngineContext } from '../../src/engine/stage.js';
import { MetaStore } from '../../src/store/meta.js';
import { sweepStalled } from '../../src/dispatch/stall.js';
import { pubgRow, supplierWorld } from './fake-supplier.js';

class FakeClock implements Clock {
  wall = Date.now();
  monoMs = 1_000_000;
  now = (): number => this.wall;
  mono = (): number => this.monoMs;
  sleep = systemClock.sleep;
  yield = systemClock.yield;
  every = systemClock.every;
  /** Both clocks advance, as real time passes. */
  pass(ms: number): void {
    this.wall += ms;
    this.monoMs += ms;
  }
  /** Only the wall clock moves: NTP, a resumed VM, an operator. */
  step(ms: number): void {
    this.wall += ms;
  }
}

describe('pauses', () => {
  it('one process pauses, another obeys; the back-off is on the monotonic clock, so a wall step changes nothing', async () => {
    const rt = await supplierWorld(() => {}, []);
    const clock = new FakeClock();
    const daemon = new Pauses(rt.meta, 30_000, clock);
    const submit = new Pauses(new MetaStore(rt.db), 30_000, clock);
    expect(daemon.pause('maintenance', 'MAINTENANCE', 'window')).toBe(true);
    expect(submit.canSend()).toBe(false);
    expect(submit.canPoll()).toBe(true);
    expect(submit.untilProbe()).toBe(1_000);
    clock.step(-3 * 3_600_000);
    expect(submit.untilProbe()).toBe(1_000);
    clock.step(+6 * 3_600_000);
    expect(submit.canSend()).toBe(false);
    clock.pass(1_000);
    expect(submit.canSend()).toBe(true); // the probe may go
    // The probe failed again: the back-off grows (1 s → 2 s), seen by both.
    expect(submit.pause('maintenance', 'MAINTENANCE', 'still')).toBe(false);
    expect(daemon.untilProbe()).toBe(2_000);
    expect(daemon.clear()?.code).toBe('MAINTENANCE');
    expect(submit.current).toBeNull();
  });

  it('an account pause stops polls too, until its probe time', async () => {
    const rt = await supplierWorld(() => {}, []);
    const clock = new FakeClock();
    const p = new Pauses(rt.meta, 30_000, clock);
    p.pause('account', 'IP_NOT_ALLOWED', 'not allowed');
    expect(p.canPoll()).toBe(false);
    clock.pass(29_999);
    expect(p.canPoll()).toBe(false);
    clock.pass(1);
    expect(p.canPoll()).toBe(true);
  });

  it('a pause stored before a reboot (its monotonic time far ahead) is probed now, not waited out', async () => {
    const rt = await supplierWorld(() => {}, []);
    const clock = new FakeClock();
    new Pauses(rt.meta, 30_000, clock).pause('account', 'X', 'y');
    clock.monoMs = 10; // the machine restarted: the monotonic clock begins again
    expect(new Pauses(rt.meta, 30_000, clock).untilProbe()).toBe(0);
  });
});

describe('a wall clock stepped back', () => {
  function stage(rt: Awaited<ReturnType<typeof supplierWorld>>, clock: FakeClock, steps: number[]): LeaseStage {
    const e = {
      rt, clock, pauses: new Pauses(rt.meta, 30_000, clock), signal: new AbortController().signal, onlyBatch: undefined,
      emit: (name: string, ...args: unknown[]) => { if (name === 'clock-step') steps.push(args[0] as number); },
      stopping: () => false, wake: () => {}, accountProblem: () => {}, handBack: () => {},
    } as unknown as EngineContext;
    return new LeaseStage(e);
  }

  it('moves stored due times back by the step, brings those still ahead of any possible wait and leases back, and says so', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0), pubgRow(1)]);
    const clock = new FakeClock();
    const steps: number[] = [];
    const leases = stage(rt, clock, steps);
    // Written on the old clock: a resend due in 1 s, a poll due in 5 s, a lease of 15 s.
    const before = clock.now();
    rt.db.prepare(`UPDATE rows SET state = 'resending', next_try_at = ? WHERE idx = 0`).run(before + 1_000);
    rt.db.prepare(`UPDATE rows SET state = 'processing', order_id = 'O1', next_poll_at = ? WHERE idx = 1`).run(before + 5_000);
    rt.db.prepare(`UPDATE batches SET lease_until = ?`).run(before + 15_000);
    leases.tick(clock.now());
    expect(steps).toEqual([]);
    clock.step(-4 * 3_600_000); // four hours back
    const now = clock.now();
    leases.tick(now);
    expect(steps).toEqual([-4 * 3_600_000]);
    // Each moves back by the step: the waits they held (1 s, 5 s) are kept, not lengthened by four hours.
    expect(rt.rows.get('b1', 0)!.nextTryAt).toBe(now + 1_000);
    expect(rt.rows.get('b1', 1)!.nextPollAt).toBe(now + 5_000);
    expect(rt.rows.sendable({ newOrders: ['b1'], resendsOnly: [] }, now + 1_000, 10).map((r) => r.idx)).toEqual([0]);
    // A time still ahead of any possible wait after the shift (written 3 h ahead on the old clock, then
    // another 3 h step back: 6 h ahead of now) is brought to now.
    rt.db.prepare(`UPDATE rows SET next_try_at = ? WHERE idx = 0`).run(clock.now() + 3 * 3_600_000);
    leases.tick(clock.now());
    clock.step(-3 * 3_600_000);
    leases.tick(clock.now());
    expect(rt.rows.get('b1', 0)!.nextTryAt).toBe(clock.now());
    expect(rt.batches.get('b1')!.leaseUntil).toBeLessThanOrEqual(now + 15_000);
  });

  it('a step back of one hour moves every stored due time back by the hour: a 30 s wait stays 30 s (sim/found/clock-step-back-searching.json)', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0), pubgRow(1)]);
    const clock = new FakeClock();
    const steps: number[] = [];
    const leases = stage(rt, clock, steps);
    const before = clock.now();
    // Written on the old clock: a history check due in 30 s, a poll due in 90 s (inside the 2 h horizon).
    rt.db.prepare(`UPDATE rows SET state = 'searching', next_try_at = ?, next_poll_at = ? WHERE idx = 0`).run(before + 30_000, before + 30_000);
    rt.db.prepare(`UPDATE rows SET state = 'processing', order_id = 'O1', next_poll_at = ? WHERE idx = 1`).run(before + 90_000);
    leases.tick(before);
    clock.step(-3_600_000);
    const now = clock.now();
    leases.tick(now);
    expect(steps).toEqual([-3_600_000]);
    const due = (idx: number) => rt.db.prepare(`SELECT next_try_at AS t, next_poll_at AS p FROM rows WHERE batch_id = 'b1' AND idx = ?`).get(idx) as { t: number | null; p: number | null };
    expect(due(0).p).toBe(now + 30_000);
    expect(due(0).t).toBe(now + 30_000);
    expect(due(1).p).toBe(now + 90_000);
  });

  it('a step forward is reported and leaves stored times alone (they fall due; the rate gate paces the calls)', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const clock = new FakeClock();
    const steps: number[] = [];
    const leases = stage(rt, clock, steps);
    rt.db.prepare(`UPDATE rows SET next_try_at = ?`).run(clock.now() + 60_000);
    leases.tick(clock.now());
    clock.step(3_600_000);
    leases.tick(clock.now());
    expect(steps).toEqual([3_600_000]);
    expect(rt.rows.get('b1', 0)!.nextTryAt).toBeLessThan(clock.now());
  });
});

describe('waits counted from a stored "since", across a wall clock stepped back', () => {
  function stage(rt: Awaited<ReturnType<typeof supplierWorld>>, clock: FakeClock, steps: number[] = []): LeaseStage {
    const e = {
      rt, clock, pauses: new Pauses(rt.meta, 30_000, clock), signal: new AbortController().signal, onlyBatch: undefined,
      emit: (name: string, ...args: unknown[]) => { if (name === 'clock-step') steps.push(args[0] as number); },
      stopping: () => false, wake: () => {}, accountProblem: () => {}, handBack: () => {},
    } as unknown as EngineContext;
    return new LeaseStage(e);
  }
  const R = 300_000;
  /** Row 0 resending since `since`, six sends unanswered. */
  function inDoubt(rt: Awaited<ReturnType<typeof supplierWorld>>, since: number): void {
    rt.db.prepare(`UPDATE rows SET state = 'resending', attempts = 6, first_sent_at = ?, last_sent_at = ?, doubt_since = ?, doubt_tries = 6, next_try_at = ? WHERE idx = 0`).run(since, since, since, since + 5_000);
  }
  const doubtSince = (rt: Awaited<ReturnType<typeof supplierWorld>>): number | null => rt.rows.get('b1', 0)!.doubtSince;

  it('a row in doubt 9 minutes when the clock steps back an hour is given up 1 minute later, not an hour and a minute (the stall bound, 2 × R)', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)], { TOPUP_REVIEW_AFTER_MS: String(R) });
    const clock = new FakeClock();
    const steps: number[] = [];
    const leases = stage(rt, clock, steps);
    inDoubt(rt, clock.now());
    leases.tick(clock.now());
    clock.pass(9 * 60_000);
    clock.step(-3_600_000);
    leases.tick(clock.now());
    expect(steps).toEqual([-3_600_000]);
    // Its doubt clock moved back by the step: still 9 minutes in doubt.
    expect(doubtSince(rt)).toBe(clock.now() - 9 * 60_000);
    clock.pass(59_000);
    expect(sweepStalled(rt, ['b1'], { has: () => false }, clock.now())).toBe(clock.now() + 1_000);
    expect(rt.rows.get('b1', 0)!.state).toBe('resending');
    clock.pass(1_000);
    rt.batches.renewAll(rt.owner, clock.now(), 15_000); // the lease, as keepLeases renews it (the step clamped it)
    sweepStalled(rt, ['b1'], { has: () => false }, clock.now());
    expect(rt.rows.get('b1', 0)!.state).toBe('searching');
  });

  it('a step made while no process ran is applied by the next process to start, and only once however many processes see it', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)], { TOPUP_REVIEW_AFTER_MS: String(R) });
    const clock = new FakeClock();
    inDoubt(rt, clock.now() - 60_000);
    // A daemon ran (its first look marks the home's latest wall time), then stopped.
    stage(rt, clock).tick(clock.now());
    // The clock is stepped back an hour while nothing runs; two processes start after it.
    clock.pass(2_000);
    clock.step(-3_600_000);
    const steps: number[] = [];
    const daemon = stage(rt, clock, steps);
    const submit = stage(rt, clock, steps);
    daemon.tick(clock.now());
    submit.tick(clock.now());
    // Neither saw the step (their clocks began after it); the home's mark told the first. The
    // mark's difference is short of the step by the 2 s between the last mark and the step.
    expect(steps).toEqual([]);
    expect(doubtSince(rt)).toBe(clock.now() - 62_000 + 2_000);
    // Both see a second step: it is applied once.
    clock.pass(1_000);
    clock.step(-600_000);
    daemon.tick(clock.now());
    submit.tick(clock.now());
    expect(steps).toEqual([-600_000, -600_000]);
    expect(doubtSince(rt)).toBe(clock.now() - 63_000 + 2_000);
    // The give-up (R after the doubt began, over five unanswered sends) is not held back by the hour either.
    clock.pass(R - 61_000);
    expect(sweepStalled(rt, ['b1'], { has: () => false }, clock.now())).toBe(clock.now() + R);
  });

  it('a send that left before the step and is answered after it (no answer) does not start its doubt an hour ahead (seed 38)', async () => {
    // The doubt clock is seeded from last_sent_at, written on the old clock; the step was applied
    // (doubt clocks moved) while the row was still `sending`, so nothing moved it. Before, the row's
    // doubt began an hour in the future and its give-up and stall bound came an hour late
    // (test/sim/found/forever-history-step-before-first-answer.json: LIVENESS, invariant 20).
    const rt = await supplierWorld(() => {}, [pubgRow(0)], { TOPUP_REVIEW_AFTER_MS: String(R) });
    const clock = new FakeClock();
    const leases = stage(rt, clock);
    leases.tick(clock.now());
    const a = (): { owner: string; now: number } => ({ owner: rt.owner, now: clock.now() });
    rt.batches.renewAll(rt.owner, clock.now(), 15_000);
    expect(rt.rows.markSending('b1', 0, a(), clock.now() + 15_000)).toBe(true);
    clock.pass(100);
    clock.step(-3_600_000);
    leases.tick(clock.now());
    clock.pass(15_000);
    rt.batches.renewAll(rt.owner, clock.now(), 15_000); // the lease, as keepLeases renews it
    const doubt = rt.rows.noAnswer('b1', 0, a(), { nextTryAt: clock.now() + 1_000, counted: true, answer: null });
    expect(doubt?.state).toBe('resending');
    expect(doubt!.doubtSince).toBeLessThanOrEqual(clock.now());
    // The stall bound counts from then, not from an hour later.
    expect(sweepStalled(rt, ['b1'], { has: () => false }, clock.now())).toBeLessThanOrEqual(clock.now() + 2 * R);
  });

  it("an account pause's start moves back with the step: its rows fail over after max_queue_delay, not an hour later", async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const clock = new FakeClock();
    const leases = stage(rt, clock);
    const pauses = new Pauses(rt.meta, 30_000, clock);
    pauses.pause('maintenance', 'MAINTENANCE', 'window');
    leases.tick(clock.now());
    clock.pass(30_000);
    clock.step(-3_600_000);
    leases.tick(clock.now());
    clock.pass(1);
    expect(pauses.current!.since).toBe(clock.now() - 30_001);
  });
});

describe('the system clock\'s sleep', () => {
  it('ends after its time, or at once when its signal aborts, rejecting with the signal\'s reason (no AbortError built per cut sleep)', async () => {
    const t = performance.now();
    await systemClock.sleep(20);
    expect(performance.now() - t).toBeGreaterThanOrEqual(15);
    const reason = { why: 'woken' };
    const cut = new AbortController();
    const slept = systemClock.sleep(60_000, cut.signal);
    cut.abort(reason);
    await expect(slept).rejects.toBe(reason);
    // Already aborted: rejects at once; and a sleep that ended leaves no listener behind.
    await expect(systemClock.sleep(60_000, cut.signal)).rejects.toBe(reason);
    const quiet = new AbortController();
    await systemClock.sleep(1, quiet.signal);
    quiet.abort('late');
    await expect(systemClock.sleep(0, quiet.signal)).rejects.toBe('late');
  });
});
