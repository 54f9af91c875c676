/**
 * The reseller's time zone (TOPUP_TIME_ZONE, an IANA name such as Asia/Jakarta; default UTC): the
 * zone the days of reports, report file names, the daily roll-up and the console's per-day pictures
 * are in, and the zone cron schedules are read in (docs/reports.md, "Time zones").
 *
 * A zone is turned once into its list of offset changes (2000 to 2100, from the Node runtime's own
 * time-zone data through Intl), so every "which day is this instant in" afterwards is a binary
 * search and a sum, never an Intl call: the console groups thousands of readings per render, and
 * the store keeps the same list (store/rollup-zone.ts) for its triggers, which know no IANA zones.
 * DST zones (a day of 23 or 25 hours) and zones whose offset is not whole hours (Asia/Kolkata
 * +05:30, Asia/Kathmandu +05:45) come out exact, as the offsets are kept to the second and
 * their changes to the minute.
 */
import { ConfigError } from './errors.js';

const DAY_MS = 86_400_000;
/** The span the offsets are computed for: every instant a row of this program can end at (earlier instants take 2000's offset, later ones 2100's). */
const FROM_MS = Date.UTC(2000, 0, 1);
const TO_MS = Date.UTC(2100, 0, 1);
/** Offset changes are looked for at this step, then pinned to the second: no zone changes twice within a week. */
const STEP_MS = 7 * DAY_MS;

export interface OffsetChange {
  /** From this instant (wall ms, UTC) on … */
  fromMs: number;
  /** … local time is UTC plus this (ms). */
  offsetMs: number;
}

/**
 * The zone name to keep for `raw`, or null when Intl does not know the zone. The name as given,
 * with Intl's spelling when the two differ only in case ("asia/jakarta" → "Asia/Jakarta"); an
 * alias is kept as given, since Node's ICU resolves current names to older ones (Asia/Kolkata →
 * Asia/Calcutta) that a reseller would not recognise.
 */
export function canonicalZone(raw: string): string | null {
  const v = raw.trim();
  if (v === '') return null;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone: v }).resolvedOptions().timeZone;
    return resolved.toLowerCase() === v.toLowerCase() ? resolved : v;
  } catch {
    return null;
  }
}

/** TOPUP_TIME_ZONE read once at config load: empty is UTC; a name Intl does not know is a ConfigError naming the setting. */
export function parseTimeZone(raw: string, setting = 'TOPUP_TIME_ZONE'): string {
  if (raw.trim() === '') return 'UTC';
  const zone = canonicalZone(raw);
  if (zone === null) {
    throw new ConfigError(setting, `"${raw.trim()}" is not a time zone this system knows: give an IANA name such as UTC, Asia/Jakarta or America/New_York (\`timedatectl list-timezones\` lists them)`);
  }
  // Etc/UTC, UTC, Etc/GMT… all read as one zone: the store keeps one roll-up per zone name.
  return /^(etc\/)?(utc|gmt|uct|universal|zulu|gmt[+-]?0|greenwich)$/i.test(zone) ? 'UTC' : zone;
}

const zones = new Map<string, TimeZone>();

export class TimeZone {
  readonly name: string;
  /** The offset changes, oldest first; the first starts before any instant this program keeps. */
  readonly changes: readonly OffsetChange[];

  /** One per zone name (its offsets are computed once per process). */
  static of(name: string): TimeZone {
    let z = zones.get(name);
    if (!z) zones.set(name, (z = new TimeZone(name)));
    return z;
  }

  private constructor(name: string) {
    this.name = name;
    this.changes = name === 'UTC' ? [{ fromMs: -8.64e15, offsetMs: 0 }] : offsetChanges(name);
  }

  /** Local time minus UTC at `ms`, in ms. */
  offsetAt(ms: number): number {
    const c = this.changes;
    let lo = 0;
    let hi = c.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (c[mid]!.fromMs <= ms) lo = mid;
      else hi = mid - 1;
    }
    return c[lo]!.offsetMs;
  }

  /** The local day of an instant: `2026-11-28`. */
  dayOf(ms: number): string {
    return new Date(ms + this.offsetAt(ms)).toISOString().slice(0, 10);
  }

  /** The local month of an instant: `2026-11`. */
  monthOf(ms: number): string {
    return this.dayOf(ms).slice(0, 7);
  }

  /**
   * The first instant of a local day (`YYYY-MM-DD`): its midnight, or where a DST change skips
   * midnight, the first instant after it. Found by bisection over the offset table.
   */
  startOf(day: string): number {
    const base = Date.parse(`${day}T00:00:00Z`);
    let lo = base - 15 * 3_600_000 - DAY_MS;
    let hi = base + 15 * 3_600_000;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.dayOf(mid) >= day) hi = mid;
      else lo = mid;
    }
    return hi;
  }

  /** The `n` local days ending with the day of `now`, oldest first. */
  lastDays(now: number, n: number): string[] {
    const out: string[] = [];
    let day = this.dayOf(now);
    for (let i = 0; i < n; i++) {
      out.unshift(day);
      day = new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
    }
    return out;
  }

  /** "UTC" or "Asia/Jakarta, UTC+07:00 now": how a page or a line names the zone its days are in. */
  label(now: number): string {
    if (this.name === 'UTC') return 'UTC';
    const off = this.offsetAt(now) / 60_000;
    const abs = Math.abs(off);
    return `${this.name}, UTC${off < 0 ? '−' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')} now`;
  }
}

/**
 * Local wall time minus UTC at `ms`, from Intl's `longOffset` name ("GMT+05:30", "GMT-00:44:30",
 * "GMT" for zero): one short string per call, about 4 times cheaper than reading the date's parts.
 */
function intlOffset(fmt: Intl.DateTimeFormat, ms: number): number {
  const m = /GMT(?:([+-−])(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?)?$/.exec(fmt.format(ms));
  if (!m) throw new Error(`no offset in ${fmt.format(ms)}`);
  if (m[1] === undefined) return 0;
  const abs = ((Number(m[2]) * 60 + Number(m[3] ?? 0)) * 60 + Number(m[4] ?? 0)) * 1000;
  return m[1] === '+' ? abs : -abs;
}

function offsetChanges(zone: string): OffsetChange[] {
  const fmt = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
  let prev = intlOffset(fmt, FROM_MS);
  const out: OffsetChange[] = [{ fromMs: -8.64e15, offsetMs: prev }];
  for (let t = FROM_MS + STEP_MS; t <= TO_MS; t += STEP_MS) {
    const off = intlOffset(fmt, t);
    if (off === prev) continue;
    // Pin the change to the minute (every change since 1970 is on one): the last minute with the old offset, then the first with the new.
    let lo = t - STEP_MS;
    let hi = t;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (intlOffset(fmt, mid) === prev) lo = mid;
      else hi = mid;
    }
    out.push({ fromMs: hi, offsetMs: off });
    prev = off;
  }
  return out;
}
