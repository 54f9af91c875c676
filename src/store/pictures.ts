/**
 * What the console's pictures show, read from the roll-ups the store keeps (migration 17:
 * daily_rows, daily_latency, balance_readings, rate_minutes), never from a scan of `rows`: each
 * read touches at most days × games × accounts × outcomes small rows, however many million rows
 * the store holds. Money in whole cents, as the roll-ups keep it.
 */
import type { Db } from './db.js';
import type { TimeZone } from '../kernel/time-zone.js';
import { rollupZoneOf } from './rollup-zone.js';

const DAY_MS = 86_400_000;

/**
 * The zone the roll-ups' days are in (migration 22, store/rollup-zone.ts): the daemon keys them in
 * TOPUP_TIME_ZONE at start. Every reader of a day takes it from here, so the days it names are the
 * days the store counted, even in a process started with another setting.
 */
export function daysZone(db: Db): TimeZone {
  return rollupZoneOf(db);
}

/** The `days` days of `zone` ending with today's, oldest first. */
export function lastDays(zone: TimeZone, now: number, days: number): string[] {
  return zone.lastDays(now, days);
}

export interface DailyRow {
  day: string;
  game: string;
  account: string;
  /** The row's final state; `refunded` is a cancelled order the supplier refunded. */
  outcome: string;
  /** A failure's answer class (the supplier's reject code), '' for none. */
  cls: string;
  n: number;
  spentCents: number;
  refundedCents: number;
  saleCents: number;
  saleN: number;
  saleCostCents: number;
}

export interface LatencyBucket {
  day: string;
  game: string;
  bucket: number;
  n: number;
}

/** Bucket b of daily_latency holds times near 100 ms × e^(b/8) (its middle, in ms). */
export function bucketMs(b: number): number {
  return 100 * Math.exp(b / 8);
}

export class PictureReads {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Every roll-up line of the days from `fromDay` on (days of the roll-up zone, inclusive). */
  daily(fromDay: string): DailyRow[] {
    return this.#db
      .prepare(
        `SELECT day, game, account, outcome, class AS cls, n, spent_cents AS spentCents, refunded_cents AS refundedCents,
           sale_cents AS saleCents, sale_n AS saleN, sale_cost_cents AS saleCostCents
         FROM daily_rows WHERE day >= ? AND n > 0 ORDER BY day, game, account, outcome, class`,
      )
      .all(fromDay) as DailyRow[];
  }

  /** The time buckets of `games` from `fromDay` on. */
  latency(fromDay: string, games: readonly string[]): LatencyBucket[] {
    if (games.length === 0) return [];
    return this.#db
      .prepare(`SELECT day, game, bucket, n FROM daily_latency WHERE day >= ? AND game IN (${games.map(() => '?').join(', ')}) AND n > 0 ORDER BY day, game, bucket`)
      .all(fromDay, ...games) as LatencyBucket[];
  }

  /** Each account's balance readings since `since` (wall ms), oldest first. */
  balances(since: number): { account: string; at: number; usd: number }[] {
    return this.#db.prepare('SELECT account, at, usd FROM balance_readings WHERE at >= ? ORDER BY account, at').all(since) as { account: string; at: number; usd: number }[];
  }

  /** The last reading of each account before `since`, so a picture starts from a known balance. */
  balanceBefore(since: number): { account: string; at: number; usd: number }[] {
    return this.#db
      .prepare('SELECT account, max(at) AS at, usd FROM balance_readings WHERE at < ? GROUP BY account')
      .all(since) as { account: string; at: number; usd: number }[];
  }

  /** Per account and minute from `sinceMinute` (minutes since the epoch): calls, order calls and their wait. */
  rateMinutes(sinceMinute: number): { account: string; minute: number; calls: number; orders: number; orderWaitMs: number; orderWaitMaxMs: number }[] {
    return this.#db
      .prepare('SELECT account, minute, calls, orders, order_wait_ms AS orderWaitMs, order_wait_max_ms AS orderWaitMaxMs FROM rate_minutes WHERE minute >= ? ORDER BY account, minute')
      .all(sinceMinute) as { account: string; minute: number; calls: number; orders: number; orderWaitMs: number; orderWaitMaxMs: number }[];
  }
}

/** How often an unchanged balance is recorded again (a changed one is recorded at once). */
const BALANCE_EVERY_MS = 60_000;
/** Readings and rate minutes are kept this long: the pictures look back 30 days. */
export const PICTURE_KEEP_MS = 40 * DAY_MS;

/**
 * Records a balance reading of `account` (account/account.ts, at each read): at most one a minute
 * while it stays the same, at once when it changed (a top-up, a purchase). Never throws: a reading
 * not recorded costs a point on a picture, never an order.
 */
export function recordBalance(db: Db, account: string, usd: number, at: number): void {
  try {
    if (!db.open) return;
    const last = db.prepare('SELECT at, usd FROM balance_readings WHERE account = ? ORDER BY at DESC LIMIT 1').get(account) as { at: number; usd: number } | undefined;
    if (last && last.usd === usd && at - last.at < BALANCE_EVERY_MS) return;
    // The rise is kept with the reading, so the picture finds top-ups without comparing every pair of readings.
    const rise = last && at > last.at && usd > last.usd ? Math.round((usd - last.usd) * 100) / 100 : null;
    db.prepare('INSERT OR REPLACE INTO balance_readings (account, at, usd, rise) VALUES (?, ?, ?, ?)').run(account, at, usd, rise);
  } catch {
    // The store is closing or busy: the next reading is recorded.
  }
}

/** Drops readings and rate minutes older than PICTURE_KEEP_MS (store/upkeep.ts, when idle). */
export function prunePictures(db: Db, now: number): number {
  const a = db.prepare('DELETE FROM balance_readings WHERE at < ?').run(now - PICTURE_KEEP_MS).changes;
  const b = db.prepare('DELETE FROM rate_minutes WHERE minute < ?').run(Math.floor((now - PICTURE_KEEP_MS) / 60_000)).changes;
  return a + b;
}
