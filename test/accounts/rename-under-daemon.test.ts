/**
 * Issue 30 (the lead's note, stop 33, "noticed, not fixed"): `submit`, `retry` and `cancel` applied a
 * rename in accounts.toml while a daemon ran under the old name: the store's rows, pause and call log
 * moved to a name the running daemon does not know (it read accounts.toml when it started), so its
 * rows on that account waited as "not configured" until it restarted. Now, while a daemon runs:
 * `submit` and `retry` refuse before changing anything and say to restart the daemon (it applies a
 * rename at its start); `cancel` (a word the daemon acts on, by its own names) leaves the rename
 * pending. With no daemon running they apply it, as before. Real sandboxes, the real CLI, the store
 * read back.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, TEST_KEY, waitFor, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

function accounts(home: TempHome, main: RunningSandbox, second: RunningSandbox, secondName: string): void {
  mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
  writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${main.url}"\nkey_file = "keys/k"\n\n[[account]]\nname = "${secondName}"\nurl = "${second.url}"\nkey_file = "keys/k"\n`);
}

function stored(home: TempHome): { identities: string[]; renames: number; batches: number } {
  const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return {
      identities: (db.prepare('SELECT name FROM account_identities ORDER BY name').all() as { name: string }[]).map((r) => r.name),
      renames: (db.prepare('SELECT count(*) AS n FROM account_renames').get() as { n: number }).n,
      batches: (db.prepare('SELECT count(*) AS n FROM batches').get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

describe('a rename in accounts.toml while a daemon runs under the old name', () => {
  it('submit and retry refuse and say to restart the daemon; cancel leaves it pending; with no daemon, cancel applies it', async () => {
    const home = tempHome('rename-daemon-');
    const a = await inProcessSandbox();
    const b = await inProcessSandbox();
    accounts(home, a, b, 'second');
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    const d = startDaemon(env);
    try {
      await waitFor('the daemon started', () => d.output().includes('topup daemon started'), 60_000, 20);
      expect(stored(home)).toMatchObject({ identities: ['main', 'second'], renames: 0 });
      accounts(home, a, b, 'backup');
      writeFileSync(join(home.dir, 'shop.csv'), csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));

      const submit = await runCli(['submit', join(home.dir, 'shop.csv')], env, { timeoutMs: 60_000 });
      expect(submit.code, submit.stderr).toBe(3);
      expect(submit.stderr).toMatch(/account "second" is named "backup" in accounts\.toml, and the daemon running on this home \(pid \d+\) still knows it as "second"/);
      expect(submit.stderr).toMatch(/Restart the daemon/);
      expect(submit.stderr).toMatch(/Nothing was changed/);
      expect(stored(home)).toMatchObject({ identities: ['main', 'second'], renames: 0, batches: 0 });

      const retry = await runCli(['retry', 'b-none'], env, { timeoutMs: 60_000 });
      expect(retry.code, retry.stderr).toBe(3);
      expect(retry.stderr).toMatch(/Restart the daemon/);
      expect(stored(home)).toMatchObject({ identities: ['main', 'second'], renames: 0 });

      // Cancel is a word the running daemon acts on: not refused, and the rename stays pending.
      const cancel = await runCli(['cancel', 'b-none'], env, { timeoutMs: 60_000 });
      expect(cancel.code, cancel.stderr).toBe(6);
      expect(cancel.stderr).toMatch(/account \\?"second\\?" is named \\?"backup\\?" in accounts\.toml: not applied yet/);
      expect(stored(home)).toMatchObject({ identities: ['main', 'second'], renames: 0 });
    } finally {
      expect(await d.stop()).toBe(0);
    }
    // No daemon: a command that may send applies it.
    const cancel = await runCli(['cancel', 'b-none'], env, { timeoutMs: 60_000 });
    expect(cancel.code, cancel.stderr).toBe(6);
    expect(stored(home)).toMatchObject({ identities: ['backup', 'main'], renames: 1 });
  }, 300_000);
});
