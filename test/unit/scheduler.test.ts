import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { RateScheduler } from '../../src/account/rate-gate.js';
import { systemClock } from '../../src/kernel/clock.js';

const dbPath = () => join(mkdtempSync(join(tmpdir(), 'sched-')), 'topup.db');

/** Admission times as the gate recorded them (its own call log), not as a test callback saw them later. */
const logged = (db: ReturnType<typeof openDb>): number[] => (db.prepare('SELECT t FROM api_calls ORDER BY t').all() as { t: number }[]).map((r) => r.t);

/** The worst number of admissions in any window of `windowMs`. */
function worst(times: number[], windowMs: number): number {
  const t = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < t.length; hi++) {
    while (t[hi]! - t[lo]! >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

describe('RateScheduler (sliding windows over a call log in SQLite)', () => {
  it('never admits more than the limit in any rolling window, for both windows at once', async () => {
    const db = openDb(dbPath());
    const s = new RateScheduler(db, [{ limit: 5, windowMs: 200 }, { limit: 12, windowMs: 1000 }], 10);
    await Promise.all(Array.from({ length: 30 }, () => s.acquire({ route: 'submit', method: 'POST', priority: 30 }).then((done) => done())));
    const admitted = logged(db);
    expect(admitted).toHaveLength(30);
    expect(worst(admitted, 200)).toBeLessThanOrEqual(5);
    expect(worst(admitted, 1000)).toBeLessThanOrEqual(12);
    // 30 calls at 12 per second take at least 2 full windows.
    expect(Math.max(...admitted) - Math.min(...admitted)).toBeGreaterThanOrEqual(2000);
    db.close();
  });

  it('shares the record between two schedulers on the same database (two processes on one home)', async () => {
    const path = dbPath();
    const a = openDb(path);
    const b = openDb(path);
    const sa = new RateScheduler(a, [{ limit: 6, windowMs: 500 }], 10);
    const sb = new RateScheduler(b, [{ limit: 6, windowMs: 500 }], 10);
    const go = (s: RateScheduler) => s.acquire({ route: 'order', method: 'GET', priority: 20 }).then((done) => done());
    await Promise.all([...Array.from({ length: 9 }, () => go(sa)), ...Array.from({ length: 9 }, () => go(sb))]);
    const admitted = logged(a);
    expect(admitted).toHaveLength(18);
    expect(worst(admitted, 500)).toBeLessThanOrEqual(6);
    a.close();
    b.close();
  });

  it('survives a restart: a new scheduler on the same file sees the calls already made', async () => {
    const path = dbPath();
    const first = openDb(path);
    const s1 = new RateScheduler(first, [{ limit: 4, windowMs: 600 }], 10);
    const firstStart = Date.now();
    for (let i = 0; i < 4; i++) (await s1.acquire({ route: 'balance', method: 'GET', priority: 10 }))();
    first.close();
    const second = openDb(path);
    const s2 = new RateScheduler(second, [{ limit: 4, windowMs: 600 }], 10);
    await s2.acquire({ route: 'balance', method: 'GET', priority: 10 });
    // The fifth call waited for the first of the four to leave the window.
    expect(Date.now() - firstStart).toBeGreaterThanOrEqual(600);
    second.close();
  });

  it('counts a call until its answer arrives: a slow call keeps its slot (a stall before sending cannot cause a burst)', async () => {
    const db = openDb(dbPath());
    const s = new RateScheduler(db, [{ limit: 1, windowMs: 100 }], 0, 5_000);
    const slow = await s.acquire({ route: 'submit', method: 'POST', priority: 30 });
    const t0 = Date.now();
    setTimeout(slow, 300); // answered only now: its slot frees one window later
    (await s.acquire({ route: 'submit', method: 'POST', priority: 30 }))();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(390);
    db.close();
  });

  it('a call whose process died unanswered counts until its start + the request timeout', async () => {
    const path = dbPath();
    const a = openDb(path);
    const sa = new RateScheduler(a, [{ limit: 1, windowMs: 100 }], 0, 600);
    // Timed from before the first call's admission: on a loaded machine the reopen below can take
    // longer than the 50 ms a bound taken after it left (a CI flake at load 6-9, stop 38).
    const t0 = Date.now();
    await sa.acquire({ route: 'submit', method: 'POST', priority: 30 }); // never answered
    a.close();
    const b = openDb(path);
    const sb = new RateScheduler(b, [{ limit: 1, windowMs: 100 }], 0, 600);
    (await sb.acquire({ route: 'submit', method: 'POST', priority: 30 }))();
    // Held until the first call's start + the request timeout (600 ms), not the window (100 ms).
    expect(Date.now() - t0).toBeGreaterThanOrEqual(590);
    b.close();
  });

  it('spaces calls by the shortest window (limit 4 per 200 ms: one every 50 ms), never a crowd', async () => {
    const db = openDb(dbPath());
    const s = new RateScheduler(db, [{ limit: 4, windowMs: 200 }, { limit: 100, windowMs: 10_000 }], 0);
    await Promise.all(Array.from({ length: 6 }, () => s.acquire({ route: 'submit', method: 'POST', priority: 30 }).then((d) => d())));
    // The admission times the gate recorded (what it decides on), not when our callbacks ran.
    const admitted = (db.prepare('SELECT t FROM api_calls ORDER BY t').all() as { t: number }[]).map((r) => r.t);
    expect(admitted).toHaveLength(6);
    for (let i = 1; i < admitted.length; i++) expect(admitted[i]! - admitted[i - 1]!).toBeGreaterThanOrEqual(49);
    db.close();
  });

  it('does not space calls at a rate whose spacing no timer keeps (400 per second: 2 ms): the window alone bounds them', async () => {
    const db = openDb(dbPath());
    const s = new RateScheduler(db, [{ limit: 400, windowMs: 1000 }], 0);
    await Promise.all(Array.from({ length: 40 }, () => s.acquire({ route: 'submit', method: 'POST', priority: 30 }).then((d) => d())));
    const admitted = (db.prepare('SELECT t FROM api_calls ORDER BY t').all() as { t: number }[]).map((r) => r.t);
    expect(admitted).toHaveLength(40);
    // Spaced by 2 ms, no two admissions could be closer than that (the scale bench's trace: every
    // late timer stretched a gap for good, and dispatch ran below the ceiling).
    const gaps = admitted.slice(1).map((t, i) => t - admitted[i]!);
    expect(gaps.some((g) => g < 2)).toBe(true);
    db.close();
  });

  it('holds every call until a Retry-After has passed', async () => {
    const db = openDb(dbPath());
    const s = new RateScheduler(db, [{ limit: 100, windowMs: 1000 }], 0);
    s.holdOff(300);
    const t0 = Date.now();
    await s.acquire({ route: 'submit', method: 'POST', priority: 30 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    db.close();
  });

  it('admits waiting calls by priority: orders before polls before reports', async () => {
    const db = openDb(dbPath());
    const s = new RateScheduler(db, [{ limit: 1, windowMs: 100 }], 0);
    (await s.acquire({ route: 'balance', method: 'GET', priority: 10 }))(); // fills the window
    const order: string[] = [];
    const p = [
      s.acquire({ route: 'history', method: 'GET', priority: 0 }).then((d) => { d(); order.push('report'); }),
      s.acquire({ route: 'order', method: 'GET', priority: 20 }).then((d) => { d(); order.push('poll'); }),
      s.acquire({ route: 'submit', method: 'POST', priority: 30 }).then((d) => { d(); order.push('submit'); }),
    ];
    await Promise.all(p);
    // The report was first in and already waits at the head; the rest go strictly by priority.
    expect(order).toEqual(['report', 'submit', 'poll']);
    db.close();
  });
});

describe('RateScheduler and a clock that steps', () => {
  /** Wall time steps when told to; monotonic time runs on with the real one. */
  const steppingClock = () => {
    let wallOffset = 0;
    return { ...systemClock, now: () => Date.now() + wallOffset, step: (ms: number) => void (wallOffset += ms) };
  };

  it('a wall clock stepped back by hours neither freezes calls nor lets a burst through: windows run on the monotonic clock', async () => {
    const db = openDb(dbPath());
    const clock = steppingClock();
    const s = new RateScheduler(db, [{ limit: 3, windowMs: 300 }], 0, 1_000, { clock });
    for (let i = 0; i < 3; i++) (await s.acquire({ route: 'balance', method: 'GET', priority: 10 }))();
    clock.step(-3 * 3_600_000);
    const t0 = Date.now();
    (await s.acquire({ route: 'balance', method: 'GET', priority: 10 }))();
    // The fourth call waited for the window (not 3 h, not 0).
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(worst(logged(db), 300)).toBeLessThanOrEqual(3);
    clock.step(+6 * 3_600_000);
    for (let i = 0; i < 3; i++) (await s.acquire({ route: 'balance', method: 'GET', priority: 10 }))();
    expect(worst(logged(db), 300)).toBeLessThanOrEqual(3);
    db.close();
  });

  it('call times and a hold left from before a reboot (or stored as wall time by an older version) are dropped, not waited for', async () => {
    const path = dbPath();
    const db = openDb(path);
    db.prepare('INSERT INTO api_calls (t) VALUES (?)').run(Date.now()); // a wall-clock time: far ahead of any monotonic one
    db.prepare(`INSERT INTO meta (key, value) VALUES ('rate.hold_until_mono', ?)`).run(String(Number(process.hrtime.bigint() / 1_000_000n) + 86_400_000));
    const s = new RateScheduler(db, [{ limit: 1, windowMs: 1_000 }], 0, 1_000, { maxHoldMs: 5_000 });
    const t0 = Date.now();
    (await s.acquire({ route: 'balance', method: 'GET', priority: 10 }))();
    expect(Date.now() - t0).toBeLessThan(500);
    expect(s.holdRemainingMs()).toBe(0);
    db.close();
  });
});

describe('RateScheduler: a long window is counted only when it could be full', () => {
  /** A monotonic clock the test moves; the wall clock is the real one. */
  const handClock = () => {
    let t = 1_000_000;
    return { ...systemClock, mono: () => t, set: (ms: number) => void (t = 1_000_000 + ms) };
  };
  const call = { route: 'order', method: 'GET', priority: 20 } as const;
  /** Admitted at once, or refused (the gate would wait: the test's clock does not move while it does). */
  const admitted = async (s: RateScheduler): Promise<(() => void) | false> => {
    try {
      return await s.acquire(call, AbortSignal.timeout(150));
    } catch {
      return false;
    }
  };
  /** Counts the runs of the window count (the statement whose cost grows with the window). */
  const counting = (db: ReturnType<typeof openDb>): { n: number } => {
    const c = { n: 0 };
    const prepare = db.prepare.bind(db);
    (db as { prepare: unknown }).prepare = (sql: string) => {
      const stmt = prepare(sql);
      if (!/SELECT count\(\*\) AS n FROM api_calls/.test(sql)) return stmt;
      const get = stmt.get.bind(stmt);
      (stmt as { get: unknown }).get = (...a: unknown[]) => (c.n++, get(...(a as [])));
      return stmt;
    };
    return c;
  };

  it('400 calls under a limit of 24,000 a minute: the minute is counted once, not at each call', async () => {
    const db = openDb(dbPath());
    const runs = counting(db);
    const clock = handClock();
    const s = new RateScheduler(db, [{ limit: 24_000, windowMs: 60_000 }], 0, 15_000, { clock });
    for (let i = 0; i < 400; i++) {
      clock.set(i * 3);
      (await s.acquire(call))();
    }
    expect(logged(db)).toHaveLength(400);
    expect(runs.n).toBe(1);
    db.close();
  });

  it('calls another process made meanwhile are counted again (no call over the limit)', async () => {
    const path = dbPath();
    const a = openDb(path);
    const b = openDb(path);
    const clock = handClock();
    // The second window sets the spacing (1 ms), so only the minute can refuse.
    const w = [{ limit: 5, windowMs: 60_000 }, { limit: 1_000, windowMs: 1_000 }];
    const sa = new RateScheduler(a, w, 0, 100_000, { clock });
    const sb = new RateScheduler(b, w, 0, 100_000, { clock });
    for (const [at, s] of [[0, sa], [12_000, sa], [24_000, sb], [36_000, sb], [48_000, sb]] as const) {
      clock.set(at);
      const done = await admitted(s);
      expect(done).not.toBe(false);
      (done as () => void)();
    }
    // Five calls in the last minute, three of them by the other process: the sixth waits.
    clock.set(59_000);
    expect(await admitted(sa)).toBe(false);
    clock.set(60_001);
    expect(await admitted(sa)).not.toBe(false);
    a.close();
    b.close();
  });

  it('once the count says full, it counts again at each try, and admits as soon as a call has left the window', async () => {
    const db = openDb(dbPath());
    const clock = handClock();
    const s = new RateScheduler(db, [{ limit: 3, windowMs: 1_000 }], 0, 100_000, { clock });
    const open: (() => void)[] = [];
    for (const at of [0, 400, 800]) {
      clock.set(at);
      open.push(await s.acquire(call));
    }
    clock.set(1_000);
    for (const done of open) done(); // all three answered at 1,000: they count until 2,000
    clock.set(1_500);
    expect(await admitted(s)).toBe(false);
    clock.set(1_900);
    expect(await admitted(s)).toBe(false);
    clock.set(2_001); // they have left the window
    expect(await admitted(s)).not.toBe(false);
    db.close();
  });
});
