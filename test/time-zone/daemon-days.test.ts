/**
 * Issue 30, TOPUP_TIME_ZONE with the real daemon and CLI: a reseller in Jakarta (UTC+7) reads
 * "yesterday" as theirs. A row that ended at 23:30 UTC is counted on the next day in Jakarta's
 * per-day figures (the console's pictures, read from the roll-up the daemon rebuilt for the zone at
 * its start), and on its UTC day again once the zone is set back; the report jobs' cron is read in
 * the zone (06:00 Jakarta is 23:00 UTC); the reconciliation file is named by the zone's date; a
 * zone the system does not know stops the CLI naming the setting.
 */
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor, type TempHome } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { openDb } from '../../src/store/db.js';

releaseAfterEach();

const DAY = 86_400_000;
const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
/** The date of an instant in a zone, from Intl itself (not from the code under test). */
const zoneDay = (ms: number, zone: string): string => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

/** One finished batch with one completed row that ended at `endedAt`, written straight into the store. */
function storeRowEndedAt(home: TempHome, endedAt: number): void {
  const db = openDb(join(home.jobs, 'topup.db'));
  try {
    db.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at, started_at, finished_at)
      VALUES ('tz-1', 1, 'tz-1', 'tz.csv', 'jobs/tz.csv', 'h-tz', 'inbox', 'done', 1, ?, ?, ?)`).run(endedAt - 60_000, endedAt - 60_000, endedAt);
    db.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, slug, pack_name, quantity, expected_usd, amount_usd, order_id, first_sent_at, updated_at)
      VALUES ('tz-1', 0, 2, '["PUBG-60","5123400000"]', 'completed', 'TZ-ROW-1', 'pubgm', 'pack', 1, 0.8, 0.8, 'ORD-TZ-1', ?, ?)`).run(endedAt - 5_000, endedAt);
  } finally {
    db.close();
  }
}

async function csvOf(url: string, path: string): Promise<Record<string, string>[]> {
  const res = await fetch(url + path);
  expect(res.status, path).toBe(200);
  return parse(await res.text(), { columns: true, bom: true }) as Record<string, string>[];
}

describe('TOPUP_TIME_ZONE with the real daemon (issue 30)', () => {
  it('a row ending 23:30 UTC is on the next day for Asia/Jakarta, back on its UTC day for UTC; the cron runs at 06:00 Jakarta = 23:00 UTC', async () => {
    const home = tempHome('topup-tz-');
    const sb = await inProcessSandbox();
    const now = Date.now();
    // 23:30 UTC of yesterday (UTC): always past, within the pictures' 30 days; 06:30 of today in Jakarta.
    const ended = Date.parse(`${utcDay(now - DAY)}T23:30:00Z`);
    storeRowEndedAt(home, ended);
    const utcD = utcDay(ended);
    const jktD = zoneDay(ended, 'Asia/Jakarta');
    expect(jktD).not.toBe(utcD);

    const env = cliEnv(home, sb, { TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_TIME_ZONE: 'Asia/Jakarta', TOPUP_RECONCILE_CRON: '0 6 * * *' });
    const d1 = startDaemon(env);
    const url1 = await consoleUrl(d1);
    await waitFor('the daemon started', () => d1.output().includes('topup daemon started'), 60_000, 20);
    expect(d1.output()).toMatch(/daily roll-ups rebuilt for the days of Asia\/Jakarta/);
    const out1 = await csvOf(url1, '/pictures/outcomes.csv');
    const on = (rows: Record<string, string>[], day: string): number => Number(rows.find((r) => r.day === day)?.completed ?? 'NaN');
    expect(on(out1, jktD)).toBe(1);
    expect(on(out1, utcD)).toBe(0);
    // The page says which zone its days are in.
    const page = await (await fetch(`${url1}/`)).text();
    expect(page).toMatch(/data-days-zone="Asia\/Jakarta"/);
    expect(page).toMatch(/days in <strong>Asia\/Jakarta, UTC\+07:00 now<\/strong>/);
    await d1.stop();

    // The report job's next time, as the daemon recorded it: 06:00 in Jakarta is 23:00 UTC.
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    const rec = JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'reports.reconcile.schedule'").get() as { value: string }).value) as { pattern: string; nextDue: number; timeZone: string };
    db.close();
    expect(rec.timeZone).toBe('Asia/Jakarta');
    expect(new Date(rec.nextDue).toISOString().slice(11, 19)).toBe('23:00:00');
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Jakarta', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(rec.nextDue)).toBe('06:00');
    expect(rec.nextDue).toBeGreaterThan(now);
    expect(rec.nextDue - now).toBeLessThanOrEqual(DAY + 120_000);

    // The zone set back to UTC (unset): the roll-up is rebuilt again, the row is on its UTC day, nothing counted twice.
    const env2 = { ...env };
    delete env2.TOPUP_TIME_ZONE;
    const d2 = startDaemon(env2);
    const url2 = await consoleUrl(d2);
    await waitFor('the daemon started', () => d2.output().includes('topup daemon started'), 60_000, 20);
    const out2 = await csvOf(url2, '/pictures/outcomes.csv');
    expect(on(out2, utcD)).toBe(1);
    expect(on(out2, jktD)).toBe(0);
    expect(out2.reduce((s, r) => s + Number(r.completed), 0)).toBe(1);
    expect(await (await fetch(`${url2}/`)).text()).toMatch(/data-days-zone="UTC"/);
    await d2.stop();
  }, 180_000);

  it('the reconciliation file is named by the date in the zone, not the UTC date', async () => {
    const home = tempHome('topup-tz-rec-');
    const sb = await inProcessSandbox();
    // A zone whose date differs from UTC's right now: +14 from 10:00 UTC, -11 before 11:00 UTC.
    const zone = new Date().getUTCHours() >= 10 ? 'Pacific/Kiritimati' : 'Pacific/Pago_Pago';
    const env = cliEnv(home, sb, { TOPUP_TIME_ZONE: zone, TOPUP_RECONCILE_CRON: '*/2 * * * * *' });
    const d = startDaemon(env);
    const reports = join(home.outbox, 'reports');
    const file = await waitFor('a reconciliation file', () => {
      const want = join(reports, `reconcile-${zoneDay(Date.now(), zone)}.csv`);
      return existsSync(want) ? want : undefined;
    }, 60_000, 100);
    expect(file).toContain(zoneDay(Date.now(), zone));
    expect(existsSync(join(reports, `reconcile-${utcDay(Date.now())}.csv`))).toBe(false);
    await d.stop();
  }, 120_000);

  it('a zone the system does not know is refused at config load, naming TOPUP_TIME_ZONE (exit 3)', async () => {
    const home = tempHome('topup-tz-bad-');
    const r = await runCli(['status'], cliEnv(home, null, { TOPUP_TIME_ZONE: 'Asia/Jakartaa' }));
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/TOPUP_TIME_ZONE: "Asia\/Jakartaa" is not a time zone/);
    const ok = await runCli(['doctor', '--json'], cliEnv(home, null, { TOPUP_TIME_ZONE: 'Asia/Kolkata' }));
    // The CLI says which zone days are in, and that the store's
    // figures are still UTC days until a daemon starts with it (doctor only reads).
    const check = (JSON.parse(ok.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }).checks.find((c) => c.name === 'time zone');
    expect(check?.detail).toMatch(/^Asia\/Kolkata, UTC\+05:30 now \(TOPUP_TIME_ZONE\): cron schedules run and report days start there/);
    expect(check?.detail).toMatch(/still UTC days: the daemon rebuilds them for Asia\/Kolkata at its next start/);
    expect(check?.ok).toBe(false);
  }, 60_000);
});
