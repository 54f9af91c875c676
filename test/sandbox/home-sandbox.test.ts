/**
 * Issue 21, reproduction 6 / "A sandbox you can top up": the home's built-in sandbox
 * (jobs/sandbox.db, no TOPUP_API_URL), through the real CLI and a real daemon:
 *  - `topup sandbox balance --add/--set` while the daemon runs: a batch waiting for balance goes
 *    on, and the console's badge shows the balance;
 *  - TOPUP_SANDBOX_BALANCE_USD applies, once, when it differs from the starting balance;
 *  - a sandbox state deleted to start afresh never gives out an order id the home has seen.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach, released } from '../e2e/release.js';

releaseAfterEach();

const players = (n: number, from: number): string[][] => Array.from({ length: n }, (_, i) => ['PUBG-60', String(5_123_400_000 + from + i)]);

function deleteSandboxState(home: TempHome): void {
  for (const f of ['sandbox.db', 'sandbox.db-wal', 'sandbox.db-shm']) rmSync(join(home.jobs, f), { force: true });
}

describe.concurrent('topup sandbox balance', () => {
  it('tops up the sandbox a running daemon uses: a batch waiting for balance goes on, and the console badge shows the balance', released(async () => {
    const home = tempHome();
    const env = cliEnv(home, null, { TOPUP_SANDBOX_BALANCE_USD: '1', TOPUP_CONSOLE: '127.0.0.1:0' });
    const daemon = startDaemon(env);
    const url = `${await consoleUrl(daemon)}/`;
    const badge = async (): Promise<string | undefined> => /<span data-sandbox-balance>([^<]+)<\/span>/.exec(await (await fetch(url)).text())?.[1];
    expect(await badge()).toBe('1.00 USD');
    home.drop('big.csv', csv([['pid', 'userId'], ['PUBG-325', '5123456789'], ['PUBG-325', '5123456790']]));
    await waitFor('the batch waits for balance', () => /waits for balance|waiting for balance|INSUFFICIENT/i.test(daemon.output()), 30_000, 100);

    const shown = await runCli(['sandbox', 'balance'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^SANDBOX balance: 1\.00 USD\n/);
    expect(shown.stdout).toContain('topup sandbox balance --add 500');
    const added = await runCli(['sandbox', 'balance', '--add', '500'], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^SANDBOX balance: 501\.00 USD \(was 1\.00 USD; 500\.00 USD added\)\n/);
    await waitForResult(home, 'big', 90_000);
    const rows = readResult(home, 'big');
    expect(rows.map((r) => r.status).every((s) => s === 'completed' || s === 'cancelled'), JSON.stringify(rows)).toBe(true);
    const spent = rows.filter((r) => r.status === 'completed').length * 4.55;
    expect(await badge()).toBe(`${(501 - spent).toFixed(2)} USD`);

    const set = JSON.parse((await runCli(['sandbox', 'balance', '--set', '20', '--json'], env)).stdout);
    expect(set).toMatchObject({ balanceUsd: 20, beforeUsd: Math.round((501 - spent) * 100) / 100, startingBalanceUsd: 1 });
    expect(await badge()).toBe('20.00 USD');
    expect(await daemon.stop()).toBe(0);

    // A home that talks to a real API has no sandbox to top up: said, exit 2.
    const live = await runCli(['sandbox', 'balance', '--add', '5'], { ...env, TOPUP_API_URL: 'http://127.0.0.1:9' });
    expect(live.code).toBe(2);
    expect(live.stderr).toMatch(/TOPUP_API_URL.*its balance is the supplier's/);
  }), 120_000);

  it('TOPUP_SANDBOX_BALANCE_USD is applied once when it differs from the starting balance, and said; leaving it unset takes nothing back', released(async () => {
    const home = tempHome();
    const env = cliEnv(home, null);
    const balance = async (extra: NodeJS.ProcessEnv = {}): Promise<{ usd: number; stderr: string }> => {
      const r = await runCli(['balance', '--json'], { ...env, ...extra });
      expect(r.code, r.stderr).toBe(0);
      return { usd: JSON.parse(r.stdout).balanceUsd, stderr: r.stderr };
    };
    expect((await balance()).usd).toBe(1000);
    expect(existsSync(join(home.jobs, 'sandbox.db'))).toBe(true);
    const raised = await balance({ TOPUP_SANDBOX_BALANCE_USD: '5000' });
    expect(raised.usd).toBe(5000);
    expect(raised.stderr).toMatch(/TOPUP_SANDBOX_BALANCE_USD changed from 1000\.00 to 5000\.00 USD: 4000\.00 USD added to the sandbox balance, now 5000\.00 USD/);
    const again = await balance({ TOPUP_SANDBOX_BALANCE_USD: '5000' });
    expect(again.usd).toBe(5000);
    expect(again.stderr).not.toContain('TOPUP_SANDBOX_BALANCE_USD');
    expect((await balance()).usd).toBe(5000);
    await runCli(['sandbox', 'balance', '--add', '250'], env);
    const lowered = await balance({ TOPUP_SANDBOX_BALANCE_USD: '4000' });
    expect(lowered.usd).toBe(4250);
    expect(lowered.stderr).toMatch(/changed from 5000\.00 to 4000\.00 USD: 1000\.00 USD taken off the sandbox balance, now 4250\.00 USD/);
    // With a real API the setting is ignored, and the log says why.
    const r = await runCli(['status'], { ...env, TOPUP_SANDBOX_BALANCE_USD: '7000', TOPUP_API_URL: 'http://127.0.0.1:9' });
    expect(r.code).toBe(0);
    const d = await runCli(['balance'], { ...env, TOPUP_SANDBOX_BALANCE_USD: '7000', TOPUP_API_URL: 'http://127.0.0.1:9', TOPUP_REQUEST_TIMEOUT_MS: '500' });
    expect(d.stderr).toMatch(/TOPUP_SANDBOX_BALANCE_USD is ignored: TOPUP_API_URL is set/);
  }), 120_000); // nine CLI runs, one after another, beside the file's other tests
});

describe.concurrent('a new sandbox state', () => {
  for (const answers of ['spec', 'real-world'] as const) {
    it(`never gives out an order id the home has seen (${answers} answers)`, released(async () => {
      const home = tempHome();
      const env = cliEnv(home, null, { TOPUP_SANDBOX_ANSWERS: answers });
      home.drop('morning.csv', csv([['pid', 'userId'], ...players(6, 0)]));
      expect((await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 })).code).toBe(0);
      const morning = readResult(home, 'morning');
      const seen = new Set(morning.map((r) => r.orderId).filter(Boolean));
      expect(seen.size).toBeGreaterThan(0);

      // The only way to start afresh before: delete the state. Its new orders must not take old ids.
      deleteSandboxState(home);
      home.drop('afternoon.csv', csv([['pid', 'userId'], ...players(6, 100)]));
      const r = await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 });
      expect(r.code, r.stdout.slice(-2000)).toBe(0);
      const afternoon = readResult(home, 'afternoon');
      expect(afternoon.filter((x) => x.status === 'review'), JSON.stringify(afternoon)).toEqual([]);
      expect(afternoon.map((x) => x.error).join('\n')).not.toMatch(/already holds/);
      const fresh = afternoon.map((x) => x.orderId).filter(Boolean);
      expect(fresh.length).toBeGreaterThan(0);
      expect(fresh.filter((id) => seen.has(id))).toEqual([]);
      expect(r.stdout + r.stderr).toMatch(/SANDBOX: new orders get ids after ORD\d+, the largest this home has seen/);
    }), 120_000);
  }
});
