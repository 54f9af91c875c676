/**
 * Issue 32: the accounts.toml changes an adversary tries after a restore, before the day's file is
 * dropped again (its rows had failed over from `main` and were bought on `second` as
 * `<trxid>-second` after the copy was taken):
 *  - `second` renamed (same URL and key, another name): its rows follow it, and the moved trxid
 *    it bought them under carries its old name;
 *  - `second` added after the backup (the copy never knew it) and taken out again after the
 *    restore: only the home's mark file remembers it.
 * 0 bought twice in each.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'RC-1'], ['PUBG-60', '5123456002', 'RC-2']]);
const OPEN = ['pending', 'sending', 'resending', 'verifying', 'searching'];
const storeMade = (jobs: string) => (): boolean => { try { readFileSync(join(jobs, 'topup.db')); return true; } catch { return false; } };

describe('accounts.toml changed after a restore, the file dropped again', () => {
  it('second renamed to backup: the rows are found under RC-n-second on backup and settled, not bought again', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const first = startDaemon(env);
    await waitFor('store', storeMade(home.jobs), 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    home.drop('rc.csv', FILE);
    await waitForResult(home, 'rc', 60_000);
    await first.stop();
    expect(ledgerTrxids(b).sort()).toEqual(['RC-1-second', 'RC-2-second']);
    a.admin.setFaults({ maintenance: null });
    expect((await runCli(['restore', JSON.parse(bk.stdout).path], env)).code).toBe(0);
    const file = join(home.dir, 'accounts.toml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('name = "second"', 'name = "backup"'));
    const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '10m' });
    await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
    home.drop('rc.csv', FILE);
    await waitFor('the rows settled', () => {
      const rows = storedRows(home).filter((r) => r.trxid?.startsWith('RC-'));
      return rows.length === 2 && rows.every((r) => !OPEN.includes(r.state));
    }, 90_000);
    await d.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(ledgerTrxids(b).sort()).toEqual(['RC-1-second', 'RC-2-second']);
    expect(storedRows(home).map((r) => [r.state, r.account, r.trxid])).toEqual([['completed', 'backup', 'RC-1-second'], ['completed', 'backup', 'RC-2-second']]);
  }, 240_000);

  it('second added after the backup and taken out after the restore: the mark file remembers it, the batch is held for it', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const file = join(home.dir, 'accounts.toml');
    const whole = readFileSync(file, 'utf8');
    const mainOnly = whole.slice(0, whole.indexOf('[[account]]\nname = "second"'));
    writeFileSync(file, mainOnly);
    const first = startDaemon(env);
    await waitFor('store', storeMade(home.jobs), 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    await first.stop();
    // second added after the copy; main in maintenance; the rows bought on second.
    writeFileSync(file, whole);
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const withSecond = startDaemon(env);
    home.drop('rc.csv', FILE);
    await waitForResult(home, 'rc', 60_000);
    await withSecond.stop();
    expect(ledgerTrxids(b).sort()).toEqual(['RC-1-second', 'RC-2-second']);
    a.admin.setFaults({ maintenance: null });
    expect((await runCli(['restore', JSON.parse(bk.stdout).path], env)).code).toBe(0);
    writeFileSync(file, mainOnly);
    const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '10m' });
    await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
    home.drop('rc.csv', FILE);
    const st = await waitFor('status names the wait for second', async () => {
      const s = await runCli(['status'], env);
      return /waiting for the restore lookup/.test(s.stdout) ? s.stdout : false;
    }, 60_000, 500);
    expect(st).toMatch(/account "second" is no longer in accounts\.toml/);
    await new Promise((r) => setTimeout(r, 3000));
    await d.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(storedRows(home).filter((r) => r.trxid?.startsWith('RC-')).map((r) => r.state)).toEqual(['pending', 'pending']);
  }, 240_000);
});
