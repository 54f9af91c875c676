/**
 * Issue 30, TOPUP_TIME_ZONE in the store: the daily roll-ups (migration 22) count each row on its day
 * in the roll-up zone, whatever writes it and whenever the zone changes. What the roll-up must hold
 * is computed here from the rows with Intl (not with the store's offsets or kernel/time-zone.ts),
 * so a wrong offset, a day cut at the wrong hour or a row left on its old day after a zone change
 * shows as a difference. Zones: America/New_York (its days of 23 and 25 hours), Asia/Kolkata
 * (+05:30), Asia/Kathmandu (+05:45), Australia/Lord_Howe (a DST change of half an hour), UTC.
 */
import { fc, it } from '@fast-check/vitest';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { useRollupZone } from '../../src/store/rollup-zone.js';
import { parseTimeZone, TimeZone } from '../../src/kernel/time-zone.js';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/kernel/errors.js';
import { registerIdentity } from '../../src/kernel/identity.js';

const dir = mkdtempSync(join(tmpdir(), 'tz-rollups-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const HOUR = 3_600_000;
const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe'] as const;
/** 2026-10-31 00:00 UTC: five days that hold New York's fall-back (Nov 1) and Lord Howe's spring (Oct 4 is before; use the span below). */
const T0 = Date.parse('2026-10-30T00:00:00Z');

const fmt = new Map<string, Intl.DateTimeFormat>();
/** The date of an instant in a zone, straight from Intl. */
function intlDay(ms: number, zone: string): string {
  let f = fmt.get(zone);
  if (!f) fmt.set(zone, (f = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' })));
  return f.format(ms);
}

function fresh(): Db {
  const db = openDb(join(dir, `t${n++}.db`));
  db.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at) VALUES ('b', 1, 'b', 'b', 'j', 'h', 'inbox', 'open', 1, 0)`).run();
  return db;
}

function insert(db: Db, idx: number, state: string, at: number, cents: number, slug = 'pubgm'): void {
  db.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, slug, amount_usd, expected_usd, first_sent_at, updated_at)
    VALUES ('b', ?, 1, '[]', ?, ?, ?, ?, ?, ?)`).run(idx, state, slug, cents / 100, cents / 100, at - 5_000, at);
}

/** Per day (of `zone`, by Intl): ended rows and the spent cents (completed), from the rows. */
function expected(db: Db, zone: string): Map<string, { n: number; spent: number; lat: number }> {
  const rows = db.prepare(`SELECT state, updated_at AS at, CAST(round(coalesce(amount_usd, expected_usd, 0) * 100) AS INTEGER) AS c, first_sent_at AS sent FROM rows
    WHERE state IN ('completed', 'cancelled', 'invalid', 'rejected', 'skipped', 'review')`).all() as { state: string; at: number; c: number; sent: number | null }[];
  const out = new Map<string, { n: number; spent: number; lat: number }>();
  for (const r of rows) {
    const d = intlDay(r.at, zone);
    const e = out.get(d) ?? { n: 0, spent: 0, lat: 0 };
    e.n++;
    // The SPENT rule of store/cost.ts: completed, or cancelled without a refund (none here is refunded).
    if (r.state === 'completed' || r.state === 'cancelled') e.spent += r.c;
    if (r.state === 'completed' && r.sent !== null) e.lat++;
    out.set(d, e);
  }
  return out;
}

function rollup(db: Db): Map<string, { n: number; spent: number; lat: number }> {
  const out = new Map<string, { n: number; spent: number; lat: number }>();
  for (const r of db.prepare('SELECT day, sum(n) AS n, sum(spent_cents) AS spent FROM daily_rows GROUP BY day HAVING sum(n) <> 0').all() as { day: string; n: number; spent: number }[]) {
    out.set(r.day, { n: r.n, spent: r.spent, lat: 0 });
  }
  for (const r of db.prepare('SELECT day, sum(n) AS n FROM daily_latency GROUP BY day HAVING sum(n) <> 0').all() as { day: string; n: number }[]) {
    const e = out.get(r.day) ?? { n: 0, spent: 0, lat: 0 };
    e.lat = r.n;
    out.set(r.day, e);
  }
  return out;
}

const sorted = (m: Map<string, unknown>): [string, unknown][] => [...m.entries()].sort(([a], [b]) => a.localeCompare(b));

describe('the daily roll-ups in TOPUP_TIME_ZONE (issue 30, migration 22)', () => {
  it('each zone\'s offsets agree with Intl at random instants, to the second', () => {
    fc.assert(fc.property(fc.constantFrom(...ZONES, 'America/Santiago', 'Europe/London', 'Asia/Jakarta'), fc.integer({ min: Date.parse('2000-01-02T00:00:00Z'), max: Date.parse('2099-12-30T00:00:00Z') }), (zone, ms) => {
      expect(TimeZone.of(zone).dayOf(ms)).toBe(intlDay(ms, zone));
    }), { numRuns: 400 });
  });

  it.prop([fc.array(fc.oneof(
    fc.record({ kind: fc.constant('insert' as const), state: fc.constantFrom('completed', 'cancelled', 'rejected', 'invalid', 'processing'), minute: fc.integer({ min: 0, max: 5 * 24 * 60 - 1 }), cents: fc.integer({ min: 1, max: 5000 }) }),
    fc.record({ kind: fc.constant('end' as const), pick: fc.nat(), state: fc.constantFrom('completed', 'cancelled', 'review', 'processing'), minute: fc.integer({ min: 0, max: 5 * 24 * 60 - 1 }) }),
    fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
    fc.record({ kind: fc.constant('zone' as const), zone: fc.constantFrom(...ZONES) }),
  ), { minLength: 1, maxLength: 30 })], { numRuns: 40 })('equal the rows by the zone\'s days after every write and every zone change', (ops) => {
    const db = fresh();
    let zone = 'UTC';
    let next = 0;
    const pick = (i: number): number | undefined => {
      const ids = db.prepare('SELECT idx FROM rows ORDER BY idx').all() as { idx: number }[];
      return ids.length === 0 ? undefined : ids[i % ids.length]!.idx;
    };
    for (const o of ops) {
      if (o.kind === 'insert') insert(db, next++, o.state, T0 + o.minute * 60_000, o.cents);
      else if (o.kind === 'zone') {
        useRollupZone(db, TimeZone.of(o.zone), Date.now());
        zone = o.zone;
      } else {
        const idx = pick(o.pick);
        if (idx === undefined) continue;
        if (o.kind === 'end') db.prepare('UPDATE rows SET state = ?, updated_at = ? WHERE idx = ?').run(o.state, T0 + o.minute * 60_000, idx);
        else db.prepare('DELETE FROM rows WHERE idx = ?').run(idx);
      }
      expect(sorted(rollup(db))).toEqual(sorted(expected(db, zone)));
    }
    db.close();
  });

  it('a DST day in America/New_York has 23 and 25 hours; a row every 20 minutes: 69 and 75 on those days, totals equal the store', () => {
    const ny = TimeZone.of('America/New_York');
    expect((ny.startOf('2026-03-09') - ny.startOf('2026-03-08')) / HOUR).toBe(23);
    expect((ny.startOf('2026-11-02') - ny.startOf('2026-11-01')) / HOUR).toBe(25);
    expect((ny.startOf('2026-11-03') - ny.startOf('2026-11-02')) / HOUR).toBe(24);
    expect(new Date(ny.startOf('2026-11-01')).toISOString()).toBe('2026-11-01T04:00:00.000Z');
    // Asia/Kolkata's day starts at 18:30 UTC, Asia/Kathmandu's at 18:15 UTC.
    expect(new Date(TimeZone.of('Asia/Kolkata').startOf('2026-11-28')).toISOString()).toBe('2026-11-27T18:30:00.000Z');
    expect(new Date(TimeZone.of('Asia/Kathmandu').startOf('2026-11-28')).toISOString()).toBe('2026-11-27T18:15:00.000Z');

    const db = fresh();
    let i = 0;
    // Rows every 20 minutes from 2026-03-07 to 2026-03-10 and 2026-10-31 to 2026-11-03 (UTC), each 1.00 USD.
    for (const [from, to] of [['2026-03-07T00:00:00Z', '2026-03-10T12:00:00Z'], ['2026-10-31T00:00:00Z', '2026-11-03T12:00:00Z']] as const) {
      for (let t = Date.parse(from); t < Date.parse(to); t += 20 * 60_000) insert(db, i++, 'completed', t, 100);
    }
    const total = (db.prepare("SELECT count(*) AS n FROM rows WHERE state = 'completed'").get() as { n: number }).n;
    useRollupZone(db, ny, Date.now());
    const days = new Map((db.prepare('SELECT day, sum(n) AS n, sum(spent_cents) AS c FROM daily_rows GROUP BY day').all() as { day: string; n: number; c: number }[]).map((r) => [r.day, r]));
    expect(days.get('2026-03-08')).toMatchObject({ n: 69, c: 6900 });
    expect(days.get('2026-03-09')).toMatchObject({ n: 72, c: 7200 });
    expect(days.get('2026-11-01')).toMatchObject({ n: 75, c: 7500 });
    expect(days.get('2026-11-02')).toMatchObject({ n: 72, c: 7200 });
    expect([...days.values()].reduce((s, d) => s + d.n, 0)).toBe(total);
    expect([...days.values()].reduce((s, d) => s + d.c, 0)).toBe(total * 100);
    // Back to UTC: every day 72, the same total.
    useRollupZone(db, TimeZone.of('UTC'), Date.now());
    const utc = db.prepare('SELECT day, sum(n) AS n FROM daily_rows GROUP BY day').all() as { day: string; n: number }[];
    expect(utc.find((d) => d.day === '2026-03-08')!.n).toBe(72);
    expect(utc.reduce((s, d) => s + d.n, 0)).toBe(total);
    db.close();
  });

  it('a store at schema 21 keeps its UTC roll-up through migration 22; the zone then counts rows that ended before it', () => {
    const path = join(dir, 'old.db');
    const old = new Database(path);
    registerIdentity(old);
    old.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
    for (const m of MIGRATIONS.slice(0, 21)) old.exec(m);
    old.prepare('INSERT INTO schema_version (version) VALUES (21)').run();
    old.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at) VALUES ('b', 1, 'b', 'b', 'j', 'h', 'inbox', 'open', 1, 0)`).run();
    const ended = Date.parse('2026-11-27T23:30:00Z');
    old.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, slug, amount_usd, expected_usd, updated_at) VALUES ('b', 0, 1, '[]', 'completed', 'pubgm', 0.8, 0.8, ?)`).run(ended);
    expect(old.prepare('SELECT day, n FROM daily_rows').all()).toEqual([{ day: '2026-11-27', n: 1 }]);
    old.close();

    const db = openDb(path);
    expect(db.prepare('SELECT version FROM schema_version').get()).toEqual({ version: MIGRATIONS.length });
    expect(db.prepare('SELECT zone FROM rollup_zone').get()).toEqual({ zone: 'UTC' });
    expect(db.prepare('SELECT day, n FROM daily_rows WHERE n > 0').all()).toEqual([{ day: '2026-11-27', n: 1 }]);
    const change = useRollupZone(db, TimeZone.of('Asia/Jakarta'), Date.now());
    expect(change).toMatchObject({ from: 'UTC', to: 'Asia/Jakarta', rebuilt: true });
    expect(db.prepare('SELECT day, n FROM daily_rows WHERE n > 0').all()).toEqual([{ day: '2026-11-28', n: 1 }]);
    // Asked again with the same zone: nothing to do.
    expect(useRollupZone(db, TimeZone.of('Asia/Jakarta'), Date.now()).rebuilt).toBe(false);
    // A row ending after the change, at 16:59 and 17:00 UTC: the last minute of Jakarta's 28th, the first of its 29th.
    insert(db, 1, 'completed', Date.parse('2026-11-28T16:59:59Z'), 100);
    insert(db, 2, 'completed', Date.parse('2026-11-28T17:00:00Z'), 100);
    expect(db.prepare('SELECT day, sum(n) AS n FROM daily_rows WHERE n > 0 GROUP BY day ORDER BY day').all()).toEqual([{ day: '2026-11-28', n: 2 }, { day: '2026-11-29', n: 1 }]);
    db.close();
  });

  it('TOPUP_TIME_ZONE is validated once at config load: unknown names are a ConfigError naming it; names are canonical', () => {
    const home = mkdtempSync(join(dir, 'home-'));
    expect(() => loadConfig({ TOPUP_HOME: home, TOPUP_TIME_ZONE: 'Mars/Olympus' })).toThrow(ConfigError);
    expect(() => loadConfig({ TOPUP_HOME: home, TOPUP_TIME_ZONE: 'Mars/Olympus' })).toThrow(/^TOPUP_TIME_ZONE: "Mars\/Olympus" is not a time zone/);
    expect(() => loadConfig({ TOPUP_HOME: home, TOPUP_TIME_ZONE: '+07:00' })).toThrow(/TOPUP_TIME_ZONE/);
    expect(loadConfig({ TOPUP_HOME: home }).timeZone).toBe('UTC');
    expect(loadConfig({ TOPUP_HOME: home, TOPUP_TIME_ZONE: ' asia/jakarta ' }).timeZone).toBe('Asia/Jakarta');
    expect(parseTimeZone('Etc/UTC')).toBe('UTC');
    // Kept as given, not turned into ICU's older name (Asia/Calcutta).
    expect(parseTimeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
  });
});
