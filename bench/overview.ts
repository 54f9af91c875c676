/**
 * `npm run bench -- --parts overview` (issue 33): the console's Overview, with all its pictures,
 * rendered by the real daemon over a store of 1,000,000 rows (--overview-rows N).
 *
 * The store is filled the way rows end in it — through the store's own schema and triggers (the
 * daily roll-ups are kept by them as each row is inserted final), 10,000 rows a batch, spread over
 * the last 30 days, 8 games, the mix of outcomes a reseller sees, half with a sale price — plus a
 * balance reading every 5 minutes for 30 days and the last hour's rate minutes. Then `topup daemon`
 * (built-in sandbox, console on a free port) serves GET / again and again: the time from request
 * to the whole page, on loopback, is what is measured (warm-up requests first, then `renders`).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { mkdirSync } from 'node:fs';
import { CLI, DIST, removeDir, startChild, stopChild, tempDir } from './lib.js';

export interface OverviewReport {
  rows: number;
  fillSec: number;
  rowsPerSecFilled: number;
  dbMb: number;
  renders: number;
  overviewMs: { p50: number; p95: number; max: number };
  picturesMs: { p50: number; p95: number };
  pageKb: number;
  /** TOPUP_TIME_ZONE of the daemon (UTC unless --overview-zone). */
  zone: string;
  /** How long the daemon's start took to rebuild the daily roll-ups for that zone (store/rollup-zone.ts); null for UTC (nothing to rebuild). */
  rollupRebuildMs: number | null;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]! * 10) / 10;
};

const GAMES = ['pubgm', 'mlbb', 'freefire', 'genshin', 'valorant', 'steam', 'honkai', 'codm'];
const CODES = ['INVALID_USER', 'OUT_OF_STOCK', 'PRODUCT_DISABLED'];

export async function measureOverview(opts: { rows: number; renders: number; log: (s: string) => void; zone?: string }): Promise<OverviewReport> {
  const home = tempDir('topup-bench-overview-');
  for (const d of ['inbox', 'jobs', 'outbox']) mkdirSync(join(home, d), { recursive: true, mode: 0o700 });
  try {
    const { openDb } = (await import(join(DIST, 'store', 'db.js'))) as typeof import('../src/store/db.js');
    const dbPath = join(home, 'jobs', 'topup.db');
    const db = openDb(dbPath);
    const now = Date.now();
    const DAY = 86_400_000;
    const t0 = performance.now();
    const perBatch = 10_000;
    const batches = Math.ceil(opts.rows / perBatch);
    const addBatch = db.prepare(`INSERT INTO batches (id, seq, name, source_name, job_file, content_hash, origin, state, sandbox, created_at, started_at, finished_at)
      VALUES (?, ?, ?, ?, ?, ?, 'inbox', 'done', 1, ?, ?, ?)`);
    const addRow = db.prepare(`INSERT INTO rows (batch_id, idx, line, cells_json, state, trxid, slug, pack_name, quantity, expected_usd, amount_usd, order_id, refunded, reject_code, first_sent_at, updated_at, sale_usd)
      VALUES (?, ?, ?, ?, ?, ?, ?, 'pack', 1, ?, ?, ?, ?, ?, ?, ?, ?)`);
    let seed = 12345;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    let n = 0;
    for (let b = 0; b < batches; b++) {
      const id = `bench-${b}`;
      const day = now - Math.floor(((batches - 1 - b) / batches) * 30 * DAY);
      db.transaction(() => {
        addBatch.run(id, b + 1, id, `${id}.csv`, `jobs/${id}.csv`, `h${b}`, day - 3_600_000, day - 3_600_000, day);
        for (let i = 0; i < perBatch && n < opts.rows; i++, n++) {
          const r = rnd();
          const state = r < 0.9 ? 'completed' : r < 0.93 ? 'cancelled' : r < 0.96 ? 'rejected' : r < 0.97 ? 'review' : 'invalid';
          const price = Math.round((0.5 + rnd() * 20) * 100) / 100;
          const sent = state === 'invalid' ? null : day - Math.floor(rnd() * 3_000_000) - 5_000;
          const ended = sent === null ? day : sent + 2_000 + Math.floor(rnd() * rnd() * 180_000);
          const placed = state === 'completed' || state === 'cancelled';
          addRow.run(id, i, i + 2, `["${GAMES[i % 8]}","5${100000000 + i}"]`, state, state === 'invalid' ? null : `${id}-${i}`, GAMES[(i + b) % 8], price,
            placed ? price : null, placed ? `ORD${b}-${i}` : null, state === 'cancelled' ? (rnd() < 0.66 ? 1 : 0) : null,
            state === 'rejected' ? CODES[i % 3] : null, sent, Math.min(ended, now), state === 'completed' && i % 2 === 0 ? Math.round(price * 112) / 100 : null);
        }
      })();
    }
    // Balance readings every 5 minutes for 30 days (a top-up every 3 days), the last hour's rate minutes.
    const addReading = db.prepare('INSERT INTO balance_readings (account, at, usd, rise) VALUES (?, ?, ?, ?)');
    const addMinute = db.prepare('INSERT INTO rate_minutes (account, minute, calls, orders, order_wait_ms, order_wait_max_ms) VALUES (?, ?, ?, ?, ?, ?)');
    db.transaction(() => {
      let usd = 5_000;
      for (let at = now - 30 * DAY; at <= now; at += 300_000) {
        const topUp = (at - (now - 30 * DAY)) % (3 * DAY) < 300_000 ? 3_000 : 0;
        usd = Math.max(0, usd - rnd() * 40 + topUp);
        addReading.run('default', at, Math.round(usd * 100) / 100, topUp > 0 ? topUp : null);
      }
      const m = Math.floor(now / 60_000);
      for (let i = 0; i < 60; i++) addMinute.run('default', m - i, 150 + i, 100, 100 * 40, 900);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const fillSec = (performance.now() - t0) / 1000;
    const { statSync } = await import('node:fs');
    const dbMb = Math.round((statSync(dbPath).size / 1024 / 1024) * 10) / 10;
    opts.log(`overview: ${n} rows stored in ${fillSec.toFixed(1)} s (triggers keeping the roll-ups), store ${dbMb} MB; starting the daemon…`);

    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TOPUP_HOME: home, TOPUP_API_KEY: 'bench-overview-key', TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_LOG_LEVEL: 'info',
      TOPUP_BALANCE_REPORT_CRON: 'off', TOPUP_HISTORY_EXPORT_CRON: 'off', TOPUP_RECONCILE_CRON: 'off', TOPUP_LOW_BALANCE_CRON: 'off', TOPUP_BACKUP_CRON: 'off', ...(opts.zone !== undefined && { TOPUP_TIME_ZONE: opts.zone }) };
    const child = startChild(process.execPath, [CLI, 'daemon'], { env, logFile: join(home, 'daemon.log') });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const until = Date.now() + 300_000;
    let url: string | undefined;
    while (!url || !out.includes('topup daemon started')) {
      if (Date.now() > until || child.exitCode !== null) throw new Error(`the daemon did not start on the ${n}-row store:\n${out.slice(-3000)}`);
      url = /console: open (http:\/\/[^\s]+\/) in a browser/.exec(out)?.[1];
      await new Promise((r) => setTimeout(r, 100));
    }
    const time = async (path: string): Promise<{ ms: number; bytes: number }> => {
      const s = performance.now();
      const res = await fetch(url!.replace(/\/$/, '') + path);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
      return { ms: performance.now() - s, bytes: text.length };
    };
    for (let i = 0; i < 3; i++) await time('/');
    const overview: number[] = [];
    const pictures: number[] = [];
    let bytes = 0;
    for (let i = 0; i < opts.renders; i++) {
      const r = await time('/');
      overview.push(r.ms);
      bytes = r.bytes;
      pictures.push((await time('/pictures')).ms);
    }
    await stopChild(child);
    const rebuilt = /"ms":(\d+)[^\n]*daily roll-ups rebuilt|daily roll-ups rebuilt[^\n]*"ms":(\d+)/.exec(out);
    return {
      zone: opts.zone ?? 'UTC',
      rollupRebuildMs: rebuilt ? Number(rebuilt[1] ?? rebuilt[2]) : null,
      rows: n,
      fillSec: Math.round(fillSec * 10) / 10,
      rowsPerSecFilled: Math.round(n / fillSec),
      dbMb,
      renders: opts.renders,
      overviewMs: { p50: pct(overview, 50), p95: pct(overview, 95), max: pct(overview, 100) },
      picturesMs: { p50: pct(pictures, 50), p95: pct(pictures, 95) },
      pageKb: Math.round(bytes / 1024),
    };
  } finally {
    removeDir(home);
  }
}
