/**
 * Found by an adversary (issue 32, third review; 4 of 4 and 2 of 2 before the fix): after a
 * restore (and its first start, or with it), `second` is pointed at another supplier account under
 * the same name (another URL and key), and the day's file is dropped again. Its rows were bought on
 * the old `second` (supplier B) as `<trxid>-second` after the backup. The lookup read `second` =
 * the new supplier C, found nothing, and the rows were sent on `main`. Now what `second` pointed at
 * before is kept as a retired identity (store/account-identity.ts retireRepointed), which cannot be
 * read: with TOPUP_RESTORE_LOOKUP_WAIT=0 the rows go to review at once, naming it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, inProcessSandbox, runCli, startDaemon, waitFor, waitForResult, TEST_KEY } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'RP-1'], ['PUBG-60', '5123456002', 'RP-2']]);
const OPEN = ['pending', 'sending', 'resending', 'verifying', 'searching'];

async function scenario(when: 'after first start' | 'before first start'): Promise<void> {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const c = await inProcessSandbox();
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const first = startDaemon(env);
    await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    home.drop('rp.csv', FILE);
    await waitForResult(home, 'rp', 60_000);
    await first.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(ledgerTrxids(b).sort()).toEqual(['RP-1-second', 'RP-2-second']);
    a.admin.setFaults({ maintenance: null });
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    if (when === 'after first start') {
      // The first start after the restore: reconciled (nothing open in the copy), window open.
      const d1 = startDaemon(env);
      await waitFor('up', () => /sending starts now/i.test(d1.output()), 60_000);
      await d1.stop();
    }
    // `second` now names another supplier account (the operator replaced supplier B by C under the same name).
    const f = join(home.dir, 'accounts.toml');
    writeFileSync(f, readFileSync(f, 'utf8').replace(b.url, c.url));
    writeFileSync(join(home.dir, 'keys', 'second.key'), TEST_KEY, { mode: 0o600 });
    const d2 = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '0' });
    if (when === 'before first start') await waitFor('reconciled', () => /sending starts now/i.test(d2.output()), 60_000);
    else await waitFor('up again', () => /watching|idle|sending|started/i.test(d2.output()), 60_000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    home.drop('rp.csv', FILE);
    await waitFor('rows at an end or held', () => {
      const rows = storedRows(home).filter((r) => r.trxid?.startsWith('RP-'));
      return rows.length === 2 && rows.every((r) => !OPEN.includes(r.state));
    }, 60_000).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 3000));
    const st = await runCli(['status'], env);
    await d2.stop();
    // Money: RP-1/RP-2 were bought on supplier B as RP-n-second; no second purchase anywhere.
    const bought = [...ledgerTrxids(a), ...ledgerTrxids(c)].filter((t) => t.startsWith('RP-'));
    expect(bought).toEqual([]);
    expect(storedRows(home).filter((r) => r.trxid?.startsWith('RP-')).map((r) => r.state)).toEqual(['review', 'review']);
    expect(st.stdout + st.stderr).not.toMatch(/RP-1.*completed/);
}

describe.concurrent('an account re-pointed under the same name within the window after a restore', () => {
  it('second re-pointed to another supplier after the first start, the file dropped again: not bought twice', released(() => scenario('after first start')), 240_000);
  it('second re-pointed to another supplier with the restore (before its first start, nothing open in the copy), the file dropped again: not bought twice', released(() => scenario('before first start')), 240_000);
});
