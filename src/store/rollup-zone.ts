/**
 * The zone the store's daily roll-ups are keyed in (migration 22: rollup_zone, rollup_offsets).
 *
 * Why a zone kept in the store, with a rebuild when it changes, rather than a finer UTC key grouped
 * at read time: the console's Overview reads 30 days of daily_rows at every render, and a key fine
 * enough for every zone (quarter hours, for +05:45) multiplies its rows by up to 96. Measured on
 * this machine (docs/reports.md, "Time zones"): grouping 30 days at quarter hours took ~6× as long
 * as by hour, and hours cannot give Asia/Kolkata's days. Days keyed in the zone keep the read what
 * it was (a few thousand rows), and a zone changes about never; its one cost is the rebuild.
 *
 * The daemon calls useRollupZone at start. When the zone (or Node's data for it) differs from the
 * store's, the offsets are replaced and both roll-ups rebuilt from the rows, all in one write
 * transaction: a process ending a row at that moment waits for it (SQLite serialises writers), and
 * every trigger before and after sees one zone, so totals always equal the rows. Other processes
 * (the CLI) never change the zone: their triggers use the store's offsets, whatever their own
 * TOPUP_TIME_ZONE, so two processes with different settings cannot corrupt or flip the roll-up.
 */
import type { Db } from './db.js';
import { rebuildDailyRollupsSql } from './migrations.js';
import { TimeZone } from '../kernel/time-zone.js';

export interface RollupZoneChange {
  /** The zone the roll-ups were keyed in before. */
  from: string;
  to: string;
  /** Whether the roll-ups were rebuilt (false: the store already used this zone). */
  rebuilt: boolean;
  ms: number;
}

/** The zone the store's roll-ups are keyed in now. */
export function rollupZoneOf(db: Db): TimeZone {
  const row = db.prepare('SELECT zone FROM rollup_zone WHERE id = 1').get() as { zone: string } | undefined;
  return TimeZone.of(row?.zone ?? 'UTC');
}

/** Keys the store's daily roll-ups in `zone`, rebuilding them from the rows if they were keyed otherwise. */
export function useRollupZone(db: Db, zone: TimeZone, now: number): RollupZoneChange {
  const started = performance.now();
  const stored = db.prepare('SELECT zone FROM rollup_zone WHERE id = 1').get() as { zone: string } | undefined;
  const from = stored?.zone ?? 'UTC';
  const same = (): boolean => {
    const offsets = db.prepare('SELECT from_ms AS fromMs, offset_ms AS offsetMs FROM rollup_offsets ORDER BY from_ms').all() as { fromMs: number; offsetMs: number }[];
    return from === zone.name && offsets.length === zone.changes.length && offsets.every((o, i) => o.fromMs === zone.changes[i]!.fromMs && o.offsetMs === zone.changes[i]!.offsetMs);
  };
  if (same()) return { from, to: zone.name, rebuilt: false, ms: 0 };
  const change = db.transaction(() => {
    // Read again inside the write lock: another daemon start may have done it meanwhile.
    if (same()) return false;
    db.prepare('DELETE FROM rollup_offsets').run();
    const add = db.prepare('INSERT INTO rollup_offsets (from_ms, offset_ms) VALUES (?, ?)');
    for (const c of zone.changes) add.run(c.fromMs, c.offsetMs);
    db.prepare('UPDATE rollup_zone SET zone = ?, changed_at = ? WHERE id = 1').run(zone.name, now);
    db.exec(rebuildDailyRollupsSql());
    return true;
  });
  const rebuilt = change.immediate();
  return { from, to: zone.name, rebuilt, ms: Math.round(performance.now() - started) };
}
