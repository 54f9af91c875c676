/**
 * Issue 32 (lead's note s35, still open): a supplier whose history does not reach back to the copy.
 * The spec calls GET /history "recent orders" without saying how recent.
 *
 * - **Cut off at an age**: the supplier lists only orders of the last N days and says `hasMore:
 *   false` there. Read to that end, the history looked complete; a purchase made after the copy
 *   and before the cut-off was absent from it, and "absent" was read as "not bought": a re-dropped
 *   file's rows that had failed over and been bought on `second` as `<trxid>-second` were bought
 *   again on `main`. Now a history that ends without listing any order this home placed there
 *   before the copy is cut off: the rows that could have been bought there go to review, the
 *   reason naming the account and what to look for.
 * - **More than 200 pages** since the copy (the most the lookup reads): the same, never sent.
 *
 * Both against real sandboxes with the sandbox's knobs `historyKeepMs` and `historyPageMax`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, TEST_KEY, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, twoAccounts } from '../backup/world.js';
import type { TempHome } from '../e2e/harness.js';

releaseAfterEach();

const ANCHOR = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123460001', 'AN-1']]);
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123460101', 'CO-1'], ['PUBG-60', '5123460102', 'CO-2']]);

function coRows(home: TempHome): { state: string; account: string; error: string | null }[] {
  const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT state, account, error FROM rows WHERE trxid LIKE 'CO-%' ORDER BY idx").all() as { state: string; account: string; error: string | null }[];
  } finally {
    db.close();
  }
}

/**
 * `main` in maintenance: AN-1 fails over and is bought on `second` before the copy (this home's
 * order there, older than the copy); after the copy the file's rows are bought there as
 * `CO-n-second` (or as `CO-n`, routed there once main's pause is known). Then `shape(second)` (after the daemon stopped), the copy restored, the file
 * dropped again: nothing of it may be bought on `main`.
 */
async function scenario(shape: (b: Awaited<ReturnType<typeof twoAccounts>>['b']) => Promise<void>, expectWhy: RegExp): Promise<void> {
  const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
  a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
  const first = startDaemon(env);
  await waitFor('the store opened by the daemon', () => existsSync(join(home.dir, '.topup-store-mark')), 30_000);
  home.drop('an.csv', ANCHOR);
  await waitForResult(home, 'an', 90_000);
  expect(ledgerTrxids(b)).toEqual(['AN-1-second']);
  const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
  expect(bk.code, bk.stderr).toBe(0);
  home.drop('co.csv', FILE);
  await waitForResult(home, 'co', 90_000);
  await first.stop();
  // Moved there by a failover (`CO-n-second`), or routed there at once once main's pause was known (`CO-n`).
  expect(ledgerTrxids(b).filter((t) => t.startsWith('CO-')).map((t) => t.replace(/-second$/, '')).sort()).toEqual(['CO-1', 'CO-2']);
  expect(ledgerTrxids(a)).toEqual([]);
  a.admin.setFaults({ maintenance: null });
  await shape(b);

  const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
  expect(rs.code, rs.stderr).toBe(0);
  const d = startDaemon(env);
  try {
    await waitFor('reconciled', () => /sending starts now/i.test(d.output()), 90_000, 100);
    home.drop('co.csv', FILE);
    await waitFor('the re-dropped rows at an end', () => {
      const rows = coRows(home);
      return rows.length === 2 && rows.every((r) => ['review', 'completed', 'processing'].includes(r.state));
    }, 120_000, 250);
    await new Promise((r) => setTimeout(r, 2000));
  } finally {
    await d.stop();
  }
  expect(ledgerTrxids(a).filter((t) => t.startsWith('CO-'))).toEqual([]);
  expect(ledgerTrxids(b).filter((t) => t.startsWith('CO-'))).toHaveLength(2);
  const rows = coRows(home);
  expect(rows.map((r) => r.state)).toEqual(['review', 'review']);
  for (const r of rows) {
    expect(r.error).toMatch(/second/);
    expect(r.error).toMatch(expectWhy);
  }
}

describe('a history that does not reach back to the copy', () => {
  it('cut off at an age (hasMore: false there): the rows go to review, never bought on main', () => scenario(async (b) => {
    await new Promise((r) => setTimeout(r, 50));
    b.admin.setFaults({ historyKeepMs: 10 });
  }, /keeps only recent orders/), 300_000);

  it('longer than the 200 pages the lookup reads: the rows go to review, never bought on main', () => scenario(async (b) => {
    // 200 newer orders on second (pages of one): the purchases after the copy are on page 201 and later.
    b.admin.setFaults({ historyPageMax: 1 });
    b.admin.setRateLimits([{ windowMs: 1000, limit: 100_000 }]);
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${b.url}/orders`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': TEST_KEY }, body: JSON.stringify({ pid: 'B-PUBG-60', userId: `5123461${String(i).padStart(3, '0')}`, trxid: `WEB-${i}` }) });
      expect(res.status, await res.text()).toBe(200);
    }
  }, /200 pages/), 300_000);
});
