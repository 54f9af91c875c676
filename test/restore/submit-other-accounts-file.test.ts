/**
 * Issue 32, third adversarial review (what held): two processes in the window after a restore with
 * different accounts files. The daemon runs with `main` and `second` (supplier B, which bought
 * SO-n-second after the backup); a `topup submit` of the day's file runs beside it with
 * TOPUP_ACCOUNTS_FILE naming only `main` and TOPUP_RESTORE_LOOKUP_WAIT=0: the claim's mark names
 * `second` (known to the store), the submit cannot read it, and the rows go to review, never
 * bought on `main`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'SO-1'], ['PUBG-60', '5123456002', 'SO-2']]);

async function scenario(): Promise<void> {
  const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
  a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
  const first = startDaemon(env);
  await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
  const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
  expect(bk.code, bk.stderr).toBe(0);
  home.drop('so.csv', FILE);
  await waitForResult(home, 'so', 60_000);
  await first.stop();
  expect(ledgerTrxids(a)).toEqual([]);
  expect(ledgerTrxids(b).sort()).toEqual(['SO-1-second', 'SO-2-second']);
  a.admin.setFaults({ maintenance: null });
  const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
  expect(rs.code, rs.stderr).toBe(0);
  const d = startDaemon(env);
  await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
  const whole = readFileSync(join(home.dir, 'accounts.toml'), 'utf8');
  const otherFile = join(home.dir, 'accounts-other.toml');
  writeFileSync(otherFile, whole.slice(0, whole.indexOf('[[account]]\nname = "second"')));
  const file = join(home.dir, 'so.csv');
  writeFileSync(file, FILE);
  const r = await runCli(['submit', file], { ...env, TOPUP_ACCOUNTS_FILE: otherFile, TOPUP_RESTORE_LOOKUP_WAIT: '0' }, { timeoutMs: 120_000 });
  await new Promise((res) => setTimeout(res, 3000));
  await d.stop();
  expect(r.stderr).toMatch(/2 need a person \(could not be looked up at second/);
  expect(ledgerTrxids(a)).toEqual([]);
  expect(storedRows(home).filter((x) => x.trxid?.startsWith('SO-')).map((x) => x.state)).toEqual(['review', 'review']);
  expect(ledgerTrxids(b).sort()).toEqual(['SO-1-second', 'SO-2-second']);
}

describe('a topup submit beside the daemon with another accounts file, in the window after a restore', () => {
  it('submit with only main: the rows go to review, never bought on main', scenario, 240_000);
});
