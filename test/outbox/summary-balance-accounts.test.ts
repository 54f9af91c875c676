/**
 * Adversarial review round 3 (issue 22), outbox/finish.ts.balanceAtEndByAccount. With several
 * accounts the batch's balance BEFORE is the sum of every account's balance (account/funds.ts
 * judgeFunds: setBalanceBefore(total)), but its balance AFTER is the sum over the accounts that
 * placed rows of the batch only. A batch placed on one of two accounts then reads, in summary.json
 * and on the console's batch page ("Balance before / after"), as if it had spent the other
 * account's whole balance. Money is not spent; the figures a reseller reconciles with are wrong.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, runCli, tempHome, TEST_KEY } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('summary balances with two accounts', () => {
  it('a batch placed on one of two accounts: balance before less balance after is what it spent', async () => {
    const home = tempHome('adv7-summary-');
    const a = await inProcessSandbox();
    const b = await inProcessSandbox();
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
    const acct = (name: string, url: string) => `[[account]]\nname = "${name}"\nurl = "${url}"\nkey_file = "keys/k"\n`;
    writeFileSync(join(home.dir, 'accounts.toml'), `routing = "priority"\n${acct('main', a.url)}\n${acct('second', b.url)}`);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    const file = join(home.dir, 'one.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123459001'], ['PUBG-60', '5123459002']]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(readResult(home, 'one').map((x) => [x.status, x.account])).toEqual([['completed', 'main'], ['completed', 'main']]);
    expect(b.admin.ledger().orders).toHaveLength(0);
    const s = readSummary(home, 'one');
    expect(s.balanceAtEndByAccount).toEqual({ main: a.admin.account().balanceUsd, second: b.admin.account().balanceUsd });
    // Before and after must be read over the same accounts (on main: before 2000, after 998.16).
    expect(s.balanceBeforeUsd - s.balanceAfterUsd, JSON.stringify({ before: s.balanceBeforeUsd, after: s.balanceAfterUsd, spent: s.spentUsd })).toBeCloseTo(s.spentUsd, 2);
  }, 150_000);

  it('rows placed on one account (in maintenance) that moved to the other: balance before less balance after is what the batch spent', async () => {
    const home = tempHome('adv7-summary-');
    const a = await inProcessSandbox({ balanceUsd: 1000 });
    const b = await inProcessSandbox({ balanceUsd: 500 });
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
    const acct = (name: string, url: string) => `[[account]]\nname = "${name}"\nurl = "${url}"\nkey_file = "keys/k"\n`;
    // priority: every row goes to `second` first, which is in maintenance: after 1 s they move to `main`.
    writeFileSync(join(home.dir, 'accounts.toml'), `routing = "priority"\nmax_queue_delay = "1s"\n${acct('second', b.url)}\n${acct('main', a.url)}`);
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    const file = join(home.dir, 'moved.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123459101'], ['PUBG-60', '5123459102']]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(readResult(home, 'moved').map((x) => [x.status, x.account])).toEqual([['completed', 'main'], ['completed', 'main']]);
    const s = readSummary(home, 'moved');
    expect(s.balanceBeforeUsd - s.balanceAfterUsd, JSON.stringify({ before: s.balanceBeforeUsd, after: s.balanceAfterUsd, byAccount: s.balanceAtEndByAccount, spent: s.spentUsd })).toBeCloseTo(s.spentUsd, 2);
  }, 150_000);
});
