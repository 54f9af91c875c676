/**
 * Issue 32, the lead's third open item: an account added and taken out again between two backups,
 * on a disk lost whole. A backup B1 is taken while accounts.toml names `main` only; `second` is
 * added, `main` goes into maintenance and a file's rows fail over and are bought on `second` as
 * `<trxid>-second`; `second` is taken out again and a backup B2 taken. Then the disk is lost whole
 * (jobs/, outbox/ and the home's mark file `.topup-store-mark`, which remembers the accounts), and
 * the OLDER backup B1 is restored (the newer one damaged, or picked by mistake). B1 never knew
 * `second`, nothing on the new disk does, and only `main` is configured: before the fix the day's
 * file dropped again was bought on `main` too (RD-1 and RD-2 on both suppliers).
 *
 * Now `topup restore` reads the accounts every newer backup beside it knew (their stores'
 * account_identities) and adds those the restored copy lacks, so the window after the restore
 * looks them up, or, when they cannot be read (taken out of accounts.toml), holds and then
 * reviews what they could have bought: never sent blind.
 * Real CLI, real daemon, two real sandboxes, real backups and restore.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';
import { MARK_FILE } from '../../src/store/backup.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'RD-1'], ['PUBG-60', '5123456002', 'RD-2']]);
const OPEN = ['pending', 'sending', 'resending', 'verifying', 'searching'];

describe('an account added and taken out between two backups, the disk lost whole, the older backup restored', () => {
  it('the re-dropped file\'s rows bought on that account are not bought again on main', released(async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const file = join(home.dir, 'accounts.toml');
    const whole = readFileSync(file, 'utf8');
    const mainOnly = whole.slice(0, whole.indexOf('[[account]]\nname = "second"'));
    const offsite = join(home.dir, 'offsite');

    // B1: main only.
    writeFileSync(file, mainOnly);
    const d1 = startDaemon(env);
    await waitFor('up', () => /topup daemon started/.test(d1.output()), 60_000);
    const b1 = await runCli(['backup', '--to', offsite, '--json'], env);
    expect(b1.code, b1.stderr).toBe(0);
    await d1.stop();

    // second added, used by a failover, taken out again; B2.
    writeFileSync(file, whole);
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const d2 = startDaemon(env);
    home.drop('rd.csv', FILE);
    await waitForResult(home, 'rd', 90_000);
    await d2.stop();
    expect(ledgerTrxids(b).sort()).toEqual(['RD-1-second', 'RD-2-second']);
    writeFileSync(file, mainOnly);
    a.admin.setFaults({ maintenance: null });
    const d3 = startDaemon(env);
    await waitFor('up', () => /topup daemon started/.test(d3.output()), 60_000);
    const b2 = await runCli(['backup', '--to', offsite, '--json'], env);
    expect(b2.code, b2.stderr).toBe(0);
    await d3.stop();

    // The disk lost whole: the store, the batches, the results, the mark file.
    rmSync(home.jobs, { recursive: true, force: true });
    rmSync(home.outbox, { recursive: true, force: true });
    rmSync(join(home.dir, MARK_FILE), { force: true });
    const rs = await runCli(['restore', JSON.parse(b1.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);

    const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '0' });
    await waitFor('reconciled', () => /sending starts now/i.test(d.output()), 60_000);
    home.drop('rd.csv', FILE);
    await waitFor('rows at an end or held', () => {
      const rows = storedRows(home).filter((r) => r.trxid?.startsWith('RD-'));
      return rows.length === 2 && rows.every((r) => !OPEN.includes(r.state));
    }, 60_000, 200).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 3_000));
    await d.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(ledgerTrxids(b).sort()).toEqual(['RD-1-second', 'RD-2-second']);
    // second is not configured, so it cannot be read: a person decides; never sent on main.
    expect(storedRows(home).filter((r) => r.trxid?.startsWith('RD-')).map((r) => [r.state, r.account])).toEqual([['review', 'main'], ['review', 'main']]);
    expect(rs.stdout).toMatch(/accounts known to newer backups.*second/);
  }), 300_000);
});
