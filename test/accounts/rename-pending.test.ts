/**
 * New-user trial, issue 30 follow-up item 6: a rename in accounts.toml (the same URL and key under a
 * new name) was applied by any command that opened the keys, `topup doctor` among them, while
 * docs/accounts.md says it is taken from the next start. A read-only command applying it rewrites
 * the store under a running daemon, which still knows the account by its old name. Now only a
 * process that sends (the daemon, submit, retry, cancel) applies it; doctor and status leave the
 * store as it is and say the rename is pending. Real sandboxes, the real CLI, the store read back.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

function accounts(home: TempHome, main: RunningSandbox, second: RunningSandbox, secondName: string): void {
  mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
  writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${main.url}"\nkey_file = "keys/k"\n\n[[account]]\nname = "${secondName}"\nurl = "${second.url}"\nkey_file = "keys/k"\n`);
}

function stored(home: TempHome): { accounts: string[]; renames: number; audit: number } {
  const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return {
      accounts: (db.prepare('SELECT DISTINCT account FROM rows ORDER BY account').all() as { account: string }[]).map((r) => r.account),
      renames: (db.prepare('SELECT count(*) AS n FROM account_renames').get() as { n: number }).n,
      audit: (db.prepare(`SELECT count(*) AS n FROM audit WHERE action = 'account renamed'`).get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

describe('a rename in accounts.toml', () => {
  it('is not applied by doctor or status, which say it is pending; the daemon\'s next start applies it', async () => {
    const home = tempHome('rename-pending-');
    const a = await inProcessSandbox();
    const b = await inProcessSandbox();
    accounts(home, a, b, 'second');
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    home.drop('shop.csv', csv([['pid', 'userId', 'account'], ['PUBG-60', '5123456789', 'second']]));
    expect((await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 })).code).toBe(0);
    expect(readResult(home, 'shop').map((x) => [x.status, x.account])).toEqual([['completed', 'second']]);

    accounts(home, a, b, 'backup');
    const doctor = await runCli(['doctor'], env, { timeoutMs: 90_000 });
    expect(doctor.stderr + doctor.stdout).toMatch(/account \\?"second\\?" is named \\?"backup\\?" in accounts\.toml: not applied yet/);
    expect(stored(home)).toEqual({ accounts: ['second'], renames: 0, audit: 0 });

    const status = await runCli(['status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/account "second" is named "backup" in accounts\.toml: not applied yet/);
    const sj = JSON.parse((await runCli(['status', '--json'], env)).stdout);
    expect(sj.pendingRenames).toEqual([{ from: 'second', to: 'backup', rows: 1 }]);
    expect(stored(home)).toEqual({ accounts: ['second'], renames: 0, audit: 0 });

    const start = await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 });
    expect(start.code, start.stderr.slice(-2000)).toBe(0);
    expect(start.stderr + start.stdout).toMatch(/account \\?"second\\?" is named \\?"backup\\?" now/);
    expect(stored(home)).toEqual({ accounts: ['backup'], renames: 1, audit: 1 });
    const after = JSON.parse((await runCli(['status', '--json'], env)).stdout);
    expect(after.pendingRenames ?? []).toEqual([]);
  }, 300_000);
});
