/**
 * The runway — how long an account's balance lasts at its spending pace — defined once, here, and
 * used by everything that states one: the console's Money table, the balance picture (per day)
 * and the low-balance alert (text and `runwayHours`):
 *
 *   runway = balance ÷ (what the account spent over the last RUNWAY_DAYS days, today included) ÷ RUNWAY_DAYS)
 *
 * The days are the roll-up's (TOPUP_TIME_ZONE's, store/rollup-zone.ts): "today" starts at the
 * reseller's midnight.
 *
 * "Spent" is the daily roll-up's spent_cents (store/migrations.ts, daily_rows): a completed row's
 * price, or a cancelled one's the supplier did not refund, counted on the day the row ended. Why a
 * week from the store: an hour (or a daemon's last ten minutes) swings with one batch, so three
 * windows used to give three answers at once (36 min, 4.6 days, …); a week's average is what a
 * reseller plans a top-up by, survives restarts, and is one indexed read of the roll-up.
 */
import type { Db } from '../store/db.js';
import { daysZone } from '../store/pictures.js';

export const RUNWAY_DAYS = 7;

/** The account's (or, without one, the home's) average USD per day over the last RUNWAY_DAYS days. */
export function usdPerDay(db: Db, now: number, account?: string): number {
  const from = daysZone(db).lastDays(now, RUNWAY_DAYS)[0]!;
  const row = (account === undefined
    ? db.prepare('SELECT coalesce(sum(spent_cents), 0) AS c FROM daily_rows WHERE day >= ?').get(from)
    : db.prepare('SELECT coalesce(sum(spent_cents), 0) AS c FROM daily_rows WHERE day >= ? AND account = ?').get(from, account)) as { c: number };
  return averagePerDay(row.c);
}

/** USD per day from the cents spent over RUNWAY_DAYS days (the picture adds its own days up). */
export function averagePerDay(centsOverWindow: number): number {
  return centsOverWindow / 100 / RUNWAY_DAYS;
}

/** Days the balance lasts at `perDay` USD a day; null when nothing was spent (no estimate). */
export function runwayDays(balanceUsd: number, perDay: number): number | null {
  return perDay > 0 ? Math.max(balanceUsd, 0) / perDay : null;
}

/** The runway alone, for a table whose caption states the pace: "about 4.6 days". */
export function runwayShort(balanceUsd: number, perDay: number): string {
  const d = runwayDays(balanceUsd, perDay);
  if (d === null) return `no spending in ${RUNWAY_DAYS} days`;
  const h = d * 24;
  return `about ${h >= 48 ? `${(Math.round(d * 10) / 10).toFixed(1)} days` : h >= 1 ? `${Math.round(h)} hours` : `${Math.max(1, Math.round(h * 60))} minutes`}`;
}

/** The runway in words, the same everywhere: "about 4.6 days at the last 7 days' pace (12.40 USD a day)". */
export function runwayText(balanceUsd: number, perDay: number): string {
  if (runwayDays(balanceUsd, perDay) === null) return `no spending in the last ${RUNWAY_DAYS} days, so no estimate`;
  return `${runwayShort(balanceUsd, perDay)} at the last ${RUNWAY_DAYS} days' pace (${perDay.toFixed(2)} USD a day)`;
}
