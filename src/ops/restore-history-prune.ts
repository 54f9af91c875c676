/**
 * The account histories kept for the window after a restore (meta `restore.history:<account>`,
 * ops/restore-reconcile.ts HistoryCache) go once that window is over: its end has passed and no
 * lookup is left (no batch claimed in it, no held file row and no API order still waiting for its
 * lookup). Before, they stayed until the next reconcile, which may never come: each one holds an
 * account's whole history back to the copy (thousands of orders, their player ids included) in
 * the store, and in every backup taken of it, for good (issue 32's leftovers).
 *
 * MONEY SAFETY. A kept reading is only ever used by a lookup of its own window (HistoryCache
 * checks the window's end it was read for). After the window's end nothing new is marked for a
 * lookup (store/backup.ts markClaimInRestoreWindow, markOrderInRestoreWindow refuse), and the
 * marks left are checked in the same immediate transaction that deletes: a lookup still waiting
 * keeps every reading (it may need it). A reading of another window (a copy taken during an
 * earlier one) can never be used and goes at once. While a restored copy waits for its reconcile
 * nothing is touched: the reconcile replaces the readings itself.
 */
import type { Db } from '../store/db.js';
import { RECONCILE_KEY, RESTORE_WINDOW_KEY, hasClaimLookups, hasOrderLookups, type RestoreWindow } from '../store/backup.js';
import { HISTORY_KEPT_PREFIX } from './restore-reconcile.js';

const HISTORY_KEPT_END = `${HISTORY_KEPT_PREFIX}\uffff`;

/** Deletes the kept readings no lookup can use any more; returns how many went. */
export function pruneKeptHistories(db: Db, now: number): number {
  return db.transaction((): number => {
    const kept = db.prepare('SELECT key, value FROM meta WHERE key >= ? AND key < ?').all(HISTORY_KEPT_PREFIX, HISTORY_KEPT_END) as { key: string; value: string }[];
    if (kept.length === 0) return 0;
    if (db.prepare('SELECT 1 FROM meta WHERE key = ?').get(RECONCILE_KEY) !== undefined) return 0;
    const w = db.prepare('SELECT value FROM meta WHERE key = ?').get(RESTORE_WINDOW_KEY) as { value: string } | undefined;
    const window = w === undefined ? null : (JSON.parse(w.value) as RestoreWindow);
    const over = window === null || (now >= window.until && !hasClaimLookups(db) && !hasOrderLookups(db));
    const del = db.prepare('DELETE FROM meta WHERE key = ?');
    let gone = 0;
    for (const k of kept) {
      const readFor = readingWindow(k.value);
      if (over || window === null || readFor !== window.until) gone += del.run(k.key).changes;
    }
    return gone;
  }).immediate();
}

/** The window end a kept reading was read for (KeptHistory.window); null when it cannot be read. */
function readingWindow(value: string): number | null {
  try {
    const w = (JSON.parse(value) as { window?: unknown }).window;
    return typeof w === 'number' ? w : null;
  } catch {
    return null;
  }
}
