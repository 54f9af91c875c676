/**
 * Issue 32's leftovers: the account histories kept for the window after a restore (meta
 * `restore.history:<account>`, one reading per account per window: window-history-once.test.ts)
 * were never pruned. They stayed in the store, and in every backup of it, until the next
 * reconcile, which may never come. Now they go once the window is over: its end has passed and no
 * lookup is left. A lookup still waiting keeps them; a window still open keeps them.
 *
 * Real parts: two in-process sandboxes as two accounts, the real CLI (backup, restore, daemon),
 * the home's real SQLite store. The window's end is moved into the past in the store (8 days
 * cannot be waited for), as the clock would.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, twoAccounts } from '../backup/world.js';

releaseAfterEach();

function store<T>(home: TempHome, fn: (db: Database.Database) => T): T {
  const db = new Database(join(home.jobs, 'topup.db'));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const kept = (home: TempHome): string[] =>
  store(home, (db) => (db.prepare("SELECT key FROM meta WHERE key LIKE 'restore.history:%' ORDER BY key").all() as { key: string }[]).map((r) => r.key));

function moveWindowEnd(home: TempHome, until: number): void {
  store(home, (db) => {
    const w = JSON.parse((db.prepare("SELECT value FROM meta WHERE key = 'restore.window'").get() as { value: string }).value) as { until: number };
    // The readings name the window they were read for by its end: moved with it, as one window.
    for (const r of db.prepare("SELECT key, value FROM meta WHERE key LIKE 'restore.history:%'").all() as { key: string; value: string }[]) {
      db.prepare('UPDATE meta SET value = ? WHERE key = ?').run(JSON.stringify({ ...JSON.parse(r.value), window: until }), r.key);
    }
    db.prepare("UPDATE meta SET value = ? WHERE key = 'restore.window'").run(JSON.stringify({ ...w, until }));
  });
}

describe('the histories kept for a restore window are pruned once it is over', () => {
  it('kept while the window is open or a lookup waits; removed when it is over, by the next daemon', async () => {
    const { home, a, env } = await twoAccounts('routing = "priority"');
    const first = startDaemon(env);
    await waitFor('up', () => /topup daemon started/.test(first.output()), 60_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'offsite'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    await first.stop();
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);

    // The restored home reconciles, then a file claimed in the window is looked up at both
    // accounts: each account's history is read once and kept for the window.
    const d = startDaemon(env);
    await waitFor('reconciled', () => /sending starts now/i.test(d.output()), 90_000, 100);
    home.drop('one.csv', csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123463001', 'ONE-1']]));
    await waitForResult(home, 'one', 120_000);
    await waitFor('ONE-1 bought', () => ledgerTrxids(a).includes('ONE-1'), 60_000, 50);
    await d.stop();
    expect(kept(home)).toEqual(['restore.history:main', 'restore.history:second']);

    // The window still open: a daemon keeps them (the window's next lookups read from them).
    const once = async (): Promise<string> => {
      const r = await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      return r.stdout + r.stderr;
    };
    await once();
    expect(kept(home)).toHaveLength(2);

    // Over, but an API order still waits for its lookup: kept (it may need them).
    moveWindowEnd(home, Date.now() - 60_000);
    const mark = { batchId: 'api-elsewhere', idx: 0, trxid: 'SHOP-9', at: Date.now() - 120_000, since: 0, accounts: ['main', 'second'] };
    store(home, (db) => db.prepare("INSERT INTO meta (key, value) VALUES ('restore.order:api-elsewhere:0', ?)").run(JSON.stringify(mark)));
    await once();
    expect(kept(home)).toHaveLength(2);

    // Over and every lookup done: the next daemon removes them, and says so.
    store(home, (db) => db.prepare("DELETE FROM meta WHERE key = 'restore.order:api-elsewhere:0'").run());
    const out = await once();
    expect(kept(home)).toEqual([]);
    expect(out).toMatch(/restore window over: the account histories kept for its lookups were removed/);
    // The window itself and the restore's report stay (status and doctor still tell of the restore).
    expect(store(home, (db) => db.prepare("SELECT 1 FROM meta WHERE key = 'restore.window'").get())).toBeDefined();
  }, 300_000);
});
