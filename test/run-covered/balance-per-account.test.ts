/**
 * New-user trial, issue 30 follow-up item 1: with two accounts, `topup run-covered BATCH` said "At
 * the balance now (505.00 USD …)", the two accounts' balances together, while only the account the
 * batch's rows wait on decides (its plan was right). The preview names that account and shows its
 * balance, one line per account when the rows wait on several. A real daemon, two real sandboxes,
 * the real CLI.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, TEST_KEY, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('run-covered shows the balance that decides', () => {
  it('names the account the rows wait on and shows its balance, not the sum of all accounts', async () => {
    const home = tempHome('run-covered-acct-');
    // Rows pinned to `main` (5.00 USD) and `spare` (3.00 USD); `rich` has 500 USD and no row of the batch.
    const main = await inProcessSandbox({ balanceUsd: 5 });
    const spare = await inProcessSandbox({ balanceUsd: 3 });
    const rich = await inProcessSandbox({ balanceUsd: 500 });
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
    const acct = (name: string, url: string) => `[[account]]\nname = "${name}"\nurl = "${url}"\nkey_file = "keys/k"\n`;
    writeFileSync(join(home.dir, 'accounts.toml'), `routing = "priority"\n${acct('main', main.url)}\n${acct('spare', spare.url)}\n${acct('rich', rich.url)}`);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    const daemon = startDaemon(env);
    // PUBG-325 4.55 USD each: main's 5.00 USD covers line 2 (not 3), spare's 3.00 USD not line 4.
    home.drop('two.csv', csv([
      ['pid', 'userId', 'trxid', 'account'],
      ['PUBG-325', '5123420001', 'ACCT-1', 'main'],
      ['PUBG-325', '5123420002', 'ACCT-2', 'main'],
      ['PUBG-325', '5123420003', 'ACCT-3', 'spare'],
    ]));
    const batchId = await waitFor('a batch waiting for balance', async () => {
      const st = await runCli(['status', '--json'], env);
      if (st.stdout === '') return undefined;
      return (JSON.parse(st.stdout) as { batches: { id: string; why: string | null }[] }).batches.find((b) => /balance/.test(b.why ?? ''))?.id;
    }, 60_000, 200);

    const look = await runCli(['run-covered', batchId], env);
    expect(look.code, look.stderr).toBe(0);
    expect(look.stdout).toContain('account main: 5.00 USD');
    expect(look.stdout).toContain('account spare: 3.00 USD');
    // Neither the sum of every account (508.00) nor an account without rows of the batch.
    expect(look.stdout).not.toMatch(/508\.00|rich/);
    expect(look.stdout).toContain('run now:  1 row, 4.55 USD (line 2)');

    const json = JSON.parse((await runCli(['run-covered', batchId, '--json'], env)).stdout);
    expect(json).toMatchObject({ balanceUsd: 8, availableUsd: 8, run: { lines: [2] }, skip: { lines: [3, 4] } });
    expect(json.accounts).toEqual([
      { account: 'main', balanceUsd: 5, availableUsd: 5, rows: 2, usd: 9.1 },
      { account: 'spare', balanceUsd: 3, availableUsd: 3, rows: 1, usd: 4.55 },
    ]);

    // A second file on spare waits too; a cancel of it says the wait that is guaranteed, not "within seconds".
    home.drop('later.csv', csv([['pid', 'userId', 'trxid', 'account'], ['PUBG-325', '5123420011', 'ACCT-11', 'spare']]));
    const later = await waitFor('the second batch waiting', async () => {
      const st = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { batches: { id: string; file: string; why: string | null }[] };
      return st.batches.find((b) => b.id !== batchId && /balance/.test(b.why ?? ''))?.id;
    }, 60_000, 200);
    const cancel = await runCli(['cancel', later, '--no-wait'], env);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stderr).toMatch(/at its next step, within 5 s/);
    expect(cancel.stderr).not.toContain('within seconds');

    // Asked: the daemon holds the batch; the wait it promises is its step, not "within seconds".
    const go = await runCli(['run-covered', batchId, '--yes'], env);
    expect(go.code, go.stderr).toBe(0);
    expect(go.stdout).toMatch(/does it at its next step, within 5 s/);
    expect(go.stdout).not.toContain('within seconds');
    await waitFor('line 2 bought on main', () => (main.admin.ledger().orders.length === 1 ? true : undefined), 60_000, 100);
    expect(spare.admin.ledger().orders).toHaveLength(0);
    expect(rich.admin.ledger().orders).toHaveLength(0);
    expect(await daemon.stop()).toBe(0);
  }, 180_000);
});
