/**
 * The home's wall-clock mark: a step back of the wall clock applied once to the stored clocks that
 * time a wait by "since when".
 *
 * Several deadlines of the send and poll path count from a wall time stored when a wait began: a
 * row in doubt stops being resent, and goes to review, TOPUP_REVIEW_AFTER_MS (and the stall bound,
 * dispatch/stall.ts) after its `doubt_since`; an order unreadable since `doubt_since` goes to review;
 * a paused account hands its rows to another account max_queue_delay after the pause's `since`.
 * Stepped back by an hour (NTP, a VM resumed, an operator), the wall clock makes each of those
 * waits an hour longer, told nothing (the simulator: seed 20261127 #31,
 * test/sim/found/forever-history-clock-step-back.json: five rows resending for 14 minutes, silently).
 *
 * A monotonic clock alone does not do: it restarts at boot, and a step made while no process ran
 * (the daemon stopped, the clock corrected, the daemon started) is seen by no process's StepWatch.
 * So the home keeps in its store the latest wall time any of its processes has seen (meta
 * WALL_MARK_KEY, raised on every lease renewal, every few seconds). A process that reads a wall
 * clock behind the mark by more than MARK_TOLERANCE_MS knows the clock stepped back since, by about
 * the difference (less by at most one renewal interval), whether it saw the step or was started
 * after it. In one transaction it moves every stored doubt clock and pause start back by the step
 * (the time already waited still counts; none is left ahead of now), moves the due times back as
 * the StepWatch did (store/row-writes.ts clampFutureTimes) and lowers the mark to now. The mark is
 * what makes it happen once: a second process seeing the same step finds the mark already lowered
 * (moving the clocks twice would halve waits; only safe, but untrue).
 *
 * A clock written in the moment between the step and the first look is moved too: its wait ends
 * early, which only sends a row to its history check, then review, sooner — never read as "not
 * charged". A step forward needs nothing: waits end early, the same way.
 */
import type { Db } from './db.js';
import type { MetaStore } from './meta.js';
import type { RowWrites } from './row-writes.js';

export const WALL_MARK_KEY = 'clock.wall_mark';
/** A wall clock behind the mark by this much or less is not a step (renewals of two processes interleave). */
export const MARK_TOLERANCE_MS = 2_000;
/** Longest any stored wait can legitimately be ahead of now (the review recheck's 2 h): due times beyond it come to now. */
export const LONGEST_WAIT_MS = 2 * 3_600_000 + 60_000;

export interface WallStep {
  /** How far the wall clock was found behind the mark (ms). */
  stepBackMs: number;
  /** Rows whose doubt clock moved. */
  doubtClocks: number;
  /** Rows whose due times moved. */
  dueTimes: number;
  /** Account pauses (and trials) whose start moved. */
  pauses: number;
}

/**
 * Compares the wall clock with the home's mark: raises the mark, or, when the clock is behind it
 * (a step back not yet applied by any process), applies the step to the stored clocks and returns
 * what it moved. Null when there was nothing to apply. `seenStepBackMs`: the step as this process's
 * StepWatch measured it, when it saw it.
 */
export function noteWallClock(store: { db: Db; meta: MetaStore; rows: Pick<RowWrites, 'clampFutureTimes' | 'shiftDoubtClocks'> }, now: number, seenStepBackMs?: number): WallStep | null {
  return store.db.transaction((): WallStep | null => {
    const raw = store.meta.get(WALL_MARK_KEY);
    const mark = raw === undefined ? Number.NaN : Number(raw);
    if (!Number.isFinite(mark) || now > mark) {
      store.meta.set(WALL_MARK_KEY, String(now));
      return null;
    }
    if (mark - now <= MARK_TOLERANCE_MS) return null;
    // The step this process measured (its StepWatch) is exact; the mark's difference is short of
    // it by the time between the last renewal and the step.
    const stepBackMs = seenStepBackMs !== undefined && seenStepBackMs > 0 ? seenStepBackMs : mark - now;
    const doubtClocks = store.rows.shiftDoubtClocks(now, stepBackMs);
    const dueTimes = store.rows.clampFutureTimes(now, now + LONGEST_WAIT_MS, stepBackMs);
    const pauses = shiftPauseStarts(store.db, now, stepBackMs);
    store.meta.set(WALL_MARK_KEY, String(now));
    return { stepBackMs, doubtClocks, dueTimes, pauses };
  }).immediate();
}

/**
 * Every account pause and trial (account/pauses.ts, meta `dispatch.pause…`, `dispatch.trial:…`):
 * its `since` is when the failover's grace began (engine/stages/dispatch.ts moveGraceMs).
 */
function shiftPauseStarts(db: Db, now: number, stepBackMs: number): number {
  const rows = db
    .prepare(`SELECT key, value FROM meta WHERE key = 'dispatch.pause' OR key LIKE 'dispatch.pause:%' OR key LIKE 'dispatch.trial:%'`)
    .all() as { key: string; value: string }[];
  const put = db.prepare('UPDATE meta SET value = ? WHERE key = ?');
  let n = 0;
  for (const r of rows) {
    let v: { since?: unknown };
    try {
      v = JSON.parse(r.value) as { since?: unknown };
    } catch {
      continue;
    }
    if (v === null || typeof v !== 'object' || typeof v.since !== 'number') continue;
    v.since = Math.min(now, v.since - stepBackMs);
    put.run(JSON.stringify(v), r.key);
    n++;
  }
  return n;
}
