/**
 * Issue 32 (lead's note s35, still open): an account added after the LAST backup, used, and taken
 * out of accounts.toml before the disk was lost whole. No backup knew it, and the home's mark file
 * went with the disk: the restored home had no word of it, the day's file dropped again was looked
 * up at `main` only, and the rows bought on `second` by a failover were bought again on `main`.
 *
 * Now the daemon records every account it runs with beside the backups (TOPUP_BACKUP_DIR, another
 * disk: `accounts-seen.json`, written when its accounts change), `topup restore` records the ones
 * the copy lacks and names them, and the window's lookup holds the rows that could have been
 * bought there (they wait, then go to review), never sends them.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123464001', 'AL-1'], ['PUBG-60', '5123464002', 'AL-2']]);

describe('an account added after the last backup and taken out before the disk was lost', () => {
  it('is recorded beside the backups; the restore names it and the re-dropped rows are not bought on main', async () => {
    const { home, a, b, env: base } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const offsite = mkdtempSync(join(tmpdir(), 'topup-offsite-'));
    const env: NodeJS.ProcessEnv = { ...base, TOPUP_BACKUP_DIR: offsite, TOPUP_RESTORE_LOOKUP_WAIT: '0' };
    let restored = '';
    try {
      const file = join(home.dir, 'accounts.toml');
      const both = readFileSync(file, 'utf8');
      const mainOnly = both.slice(0, both.indexOf('[[account]]\nname = "second"'));
      // The last backup: `main` only.
      writeFileSync(file, mainOnly);
      let d = startDaemon(env);
      await waitFor('up', () => /topup daemon started/.test(d.output()), 60_000);
      const bk = await runCli(['backup', '--json'], env);
      expect(bk.code, bk.stderr).toBe(0);
      await d.stop();
      // `second` added, the file's rows fail over to it and are bought there; then `second` taken out.
      writeFileSync(file, both);
      a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
      d = startDaemon(env);
      home.drop('al.csv', FILE);
      await waitForResult(home, 'al', 90_000);
      await d.stop();
      // Moved there by a failover (`AL-n-second`), or routed there at once once main's pause was known (`AL-n`).
      expect(ledgerTrxids(b).map((t) => t.replace(/-second$/, '')).sort()).toEqual(['AL-1', 'AL-2']);
      expect(ledgerTrxids(a)).toEqual([]);
      a.admin.setFaults({ maintenance: null });
      writeFileSync(file, mainOnly);
      d = startDaemon(env);
      await waitFor('up', () => /topup daemon started/.test(d.output()), 60_000);
      await d.stop();

      // The disk lost whole: the store, jobs/, outbox/ and the mark file gone; the backups are elsewhere.
      for (const p of [home.jobs, home.outbox, join(home.dir, '.topup-store-mark')]) rmSync(p, { recursive: true, force: true });
      const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
      restored = rs.stdout;
      expect(rs.code, rs.stderr).toBe(0);

      d = startDaemon(env);
      try {
        await waitFor('reconciled', () => /sending starts now/i.test(d.output()), 90_000, 100);
        home.drop('al.csv', FILE);
        await waitFor('the re-dropped rows at an end', () => {
          const rows = storedRows(home).filter((r) => r.trxid?.startsWith('AL-'));
          return rows.length === 2 && rows.every((r) => ['review', 'completed', 'processing'].includes(r.state));
        }, 90_000, 250);
        await new Promise((r) => setTimeout(r, 2000));
      } finally {
        await d.stop();
      }
      expect(ledgerTrxids(a).filter((t) => t.startsWith('AL-'))).toEqual([]);
      expect(storedRows(home).filter((r) => r.trxid?.startsWith('AL-')).map((r) => r.state)).toEqual(['review', 'review']);
      expect(existsSync(join(offsite, 'accounts-seen.json'))).toBe(true);
      expect(restored).toMatch(/accounts recorded beside the backups \(accounts-seen\.json\) and not known to this copy.*second/);
      expect(restored).toMatch(/WARNING: not in accounts\.toml: second/);
    } finally {
      rmSync(offsite, { recursive: true, force: true });
    }
  }, 360_000);
});
