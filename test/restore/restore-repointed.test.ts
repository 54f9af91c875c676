/**
 * adv9: a restore, then a start with accounts.toml pointing the account at another endpoint than
 * the copy recorded. The copy's rows are `pending` (never sent when it was taken); after the copy
 * they were bought at the old endpoint. The reconcile-first start sweeps only the accounts as the
 * file names them now (the new endpoint), finds nothing, and sends: bought a second time at the new
 * endpoint. The copy itself knows where `main` was (account_identities), and the identity guard
 * (store/account-identity.ts) lets it pass because the rows hold no sent_origin in the copy.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, TEST_KEY, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { batchStates, ledgerTrxids, storedRows } from '../backup/world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'RP-1'], ['PUBG-60', '5123456002', 'RP-2']]);

describe('adv9: restore, then accounts.toml re-points the account', () => {
  it('rows bought at the old endpoint after the copy are not bought again at the new one', async () => {
    const home = tempHome('adv9-repoint-');
    const x = await inProcessSandbox();
    const y = await inProcessSandbox();
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'main.key'), TEST_KEY, { mode: 0o600 });
    const accounts = (url: string) => writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${url}"\nkey_file = "keys/main.key"\n`);
    accounts(x.url);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    // No balance at X: the rows wait, pending, while the copy is taken.
    x.admin.setBalance({ balanceUsd: 0 });
    const first = startDaemon(env);
    home.drop('rp.csv', FILE);
    await waitFor('rows stored and waiting', () => {
      const rows = storedRows(home);
      return rows.length === 2 && rows.every((r) => r.state === 'pending');
    }, 30_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    const backupDir = JSON.parse(bk.stdout).path as string;
    // Topped up: bought at X after the copy.
    x.admin.setBalance({ balanceUsd: 100 });
    await waitForResult(home, 'rp', 60_000);
    await first.stop();
    expect(ledgerTrxids(x).sort()).toEqual(['RP-1', 'RP-2']);

    // The disk is lost; meanwhile the operator moved `main` to another host (another supplier account).
    accounts(y.url);
    const r = await runCli(['restore', backupDir], env);
    expect(r.code, r.stderr).toBe(0);
    const second = startDaemon(env);
    await waitFor('the restored batch ends, or a refusal', () => (batchStates(home).length === 1 && batchStates(home).every((b) => b.state === 'done')) || second.output().includes('refus'), 60_000).catch(() => undefined);
    await second.stop();
    expect(ledgerTrxids(y)).toEqual([]);
  }, 180_000);
});
