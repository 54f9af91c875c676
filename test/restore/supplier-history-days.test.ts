/**
 * Issue 32's leftovers: a setting for how long the supplier keeps its order history
 * (TOPUP_SUPPLIER_HISTORY_DAYS). The restore lookup can tell a history cut off before the copy only
 * from an order this home placed at that account before the copy (history-cut-off.test.ts). An
 * account first used after the copy has none: the supplier's end of its history was trusted, and a
 * purchase made there after the copy but older than what the supplier keeps read as "not bought".
 * A reseller whose supplier keeps N days can now say so: a copy older than N days makes every
 * history read for it cut off, and the rows it would have cleared go to review, the reason saying
 * the copy is older than the supplier keeps. Never bought again.
 *
 * Against two real sandboxes; `second` keeps 10 ms of history (the sandbox's knob
 * `historyKeepMs`), the setting says 0.0001 days (8.6 s), and the file is dropped again more than
 * that after the copy. Without the setting the same scenario buys both rows again on `main`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, twoAccounts } from '../backup/world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123460201', 'SH-1'], ['PUBG-60', '5123460202', 'SH-2']]);

function shRows(home: TempHome): { state: string; account: string; error: string | null }[] {
  const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT state, account, error FROM rows WHERE trxid LIKE 'SH-%' ORDER BY idx").all() as { state: string; account: string; error: string | null }[];
  } finally {
    db.close();
  }
}

describe('TOPUP_SUPPLIER_HISTORY_DAYS: a copy older than the supplier keeps', () => {
  it('an account first used after the copy, its history cut off: the re-dropped rows go to review, never bought on main', async () => {
    const world = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const { home, a, b } = world;
    const env = { ...world.env, TOPUP_SUPPLIER_HISTORY_DAYS: '0.0001' };
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const first = startDaemon(env);
    await waitFor('the store opened by the daemon', () => existsSync(join(home.dir, '.topup-store-mark')), 30_000);
    // The copy first: `second` has no order of this home before it (no anchor to prove a cut-off).
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    const copyAt = Date.now();
    home.drop('sh.csv', FILE);
    await waitForResult(home, 'sh', 90_000);
    await first.stop();
    expect(ledgerTrxids(b).filter((t) => t.startsWith('SH-')).map((t) => t.replace(/-second$/, '')).sort()).toEqual(['SH-1', 'SH-2']);
    expect(ledgerTrxids(a)).toEqual([]);
    a.admin.setFaults({ maintenance: null });
    // The supplier behind `second` keeps almost nothing: its history ends (hasMore: false) empty.
    b.admin.setFaults({ historyKeepMs: 10 });

    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    const d = startDaemon(env);
    try {
      await waitFor('reconciled', () => /sending starts now/i.test(d.output()), 90_000, 100);
      // Past the 0.0001 days (8.64 s) the setting says the supplier keeps, counted from the copy.
      await new Promise((r) => setTimeout(r, Math.max(0, copyAt + 10_000 - Date.now())));
      home.drop('sh.csv', FILE);
      await waitFor('the re-dropped rows at an end', () => {
        const rows = shRows(home);
        return rows.length === 2 && rows.every((r) => ['review', 'completed', 'processing'].includes(r.state));
      }, 120_000, 250);
      await new Promise((r) => setTimeout(r, 2000));
    } finally {
      await d.stop();
    }
    expect(ledgerTrxids(a).filter((t) => t.startsWith('SH-'))).toEqual([]);
    expect(ledgerTrxids(b).filter((t) => t.startsWith('SH-'))).toHaveLength(2);
    const rows = shRows(home);
    expect(rows.map((r) => r.state)).toEqual(['review', 'review']);
    for (const r of rows) {
      expect(r.error).toMatch(/second/);
      expect(r.error).toMatch(/is older than the 0\.0001 day\(s\) of orders the supplier keeps \(TOPUP_SUPPLIER_HISTORY_DAYS=0\.0001\)/);
    }
  }, 300_000);

  it('a value that is not a number of days is refused at start, naming the setting', async () => {
    const world = await twoAccounts('');
    for (const bad of ['30d', '0', '-5', '4000', 'a month']) {
      const r = await runCli(['doctor'], { ...world.env, TOPUP_SUPPLIER_HISTORY_DAYS: bad });
      expect(r.code, `${bad}: ${r.stdout}${r.stderr}`).not.toBe(0);
      expect(r.stderr, bad).toMatch(/TOPUP_SUPPLIER_HISTORY_DAYS/);
      expect(r.stderr, bad).toMatch(/number of days above 0 and at most 3650/);
    }
  }, 120_000);
});
