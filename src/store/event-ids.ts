/**
 * Event ids that are never issued twice, even by a store brought back from a copy.
 *
 * An order event's id (`evt_<n>`, order_events.id, AUTOINCREMENT) is the shop's de-duplication key
 * and the change feed's cursor (docs/webhooks.md). A store restored from a copy, or a new store in
 * a home whose store was deleted, numbers its events on from the copy's last id (or from 1): ids the
 * shop was already sent after the copy was taken came again naming other events, and a shop that
 * de-duplicates by id, as the docs tell it to, dropped them (a new-user trial: 28 ids clashed after a
 * restore, and the shop never heard of one order at all).
 *
 * Which ids were issued after the copy is known to no file that survives a lost disk, so the floor
 * comes from time: every store numbers its events from below EVENTS_PER_MS × (ms since the epoch
 * below) — no store can issue ids faster than EVENTS_PER_MS a millisecond (100,000 events/s; the
 * order API's measured ceiling is about 2,000 accepted orders/s, each making at most a handful of
 * events) — so a store that may be behind (one the reconcile-first start marks: restored, a copy
 * brought in by hand, a deleted store) raises its next id to that bound of now, above every id any
 * store of this home can have issued before. Ids stay numbers, rising: a shop comparing them still
 * reads the newest as the highest, and its feed cursor from before the loss reads on.
 *
 * The bound's one assumption is a clock that does not run backwards across the loss by more than the
 * ids issued meanwhile cover; the copy's own last id is a floor too (max of both).
 */
import type { Db } from './db.js';

/** 2020-01-01T00:00:00Z: no store of this project is older (the floor is counted from here). */
export const EVENT_ID_EPOCH_MS = Date.UTC(2020, 0, 1);
/** More events than any store can make in a millisecond. */
export const EVENTS_PER_MS = 100;

/** The lowest next event id for a store that may be behind, at `now`. */
export function eventIdFloor(now: number): number {
  return Math.max(0, Math.floor(now - EVENT_ID_EPOCH_MS)) * EVENTS_PER_MS;
}

/**
 * Raises order_events' sequence to eventIdFloor(now) (never lowers it); returns the next id's floor
 * as set. Idempotent; one statement each, in one transaction.
 */
export function raiseEventIds(db: Db, now: number): number {
  const floor = eventIdFloor(now);
  db.transaction(() => {
    // sqlite_sequence has a row for a table once it has had one insert; a store that never had an
    // event gets one (SQLite documents ordinary INSERT/UPDATE on sqlite_sequence).
    const had = db.prepare(`UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'order_events'`).run(floor).changes;
    if (had === 0) db.prepare(`INSERT INTO sqlite_sequence (name, seq) VALUES ('order_events', max(?, (SELECT coalesce(max(id), 0) FROM order_events)))`).run(floor);
  })();
  return floor;
}
