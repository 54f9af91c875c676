/**
 * Issue 30 follow-up (new-user trial): a batch waiting for balance on two accounts said "top up at
 * least 0.75 USD", the two shortfalls summed, while each account pays for its own rows: 0.75 USD on
 * either would not start it. The wait names each account's top-up, in `topup status` (and every
 * reader of the batch's wait detail: doctor, console, notification). Two real sandboxes, a real
 * daemon, the real CLI.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, TEST_KEY, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('a wait for balance on several accounts', () => {
  it('says the top-up per account, not their sum', async () => {
    const home = tempHome('topup-per-acct-');
    // PUBG-325 is 4.55 USD: supa (4.00) is 0.55 short, supb (4.20) 0.35 short.
    const supa = await inProcessSandbox({ balanceUsd: 4 });
    const supb = await inProcessSandbox({ balanceUsd: 4.2 });
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
    const acct = (name: string, url: string) => `[[account]]\nname = "${name}"\nurl = "${url}"\nkey_file = "keys/k"\n`;
    writeFileSync(join(home.dir, 'accounts.toml'), `routing = "priority"\n${acct('supa', supa.url)}\n${acct('supb', supb.url)}`);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    const daemon = startDaemon(env);
    home.drop('two.csv', csv([
      ['pid', 'userId', 'trxid', 'account'],
      ['PUBG-325', '5123420001', 'TWO-1', 'supa'],
      ['PUBG-325', '5123420002', 'TWO-2', 'supb'],
    ]));
    const why = await waitFor('the batch waiting for balance', async () => {
      const st = await runCli(['status', '--json'], env);
      if (st.stdout === '') return undefined;
      return (JSON.parse(st.stdout) as { batches: { why: string | null }[] }).batches.find((b) => /balance/.test(b.why ?? ''))?.why ?? undefined;
    }, 60_000, 200);
    expect(why).toContain('top up at least 0.55 USD on supa and 0.35 USD on supb');
    expect(why).toContain('needs 4.55 USD on supa (4.00 USD available) and 4.55 USD on supb (4.20 USD available)');
    expect(why).not.toMatch(/top up at least 0\.9 USD|top up at least 0\.90 USD/);
    const text = await runCli(['status'], env);
    expect(text.stdout).toContain('0.55 USD on supa and 0.35 USD on supb');
    expect(supa.admin.ledger().orders).toHaveLength(0);
    expect(supb.admin.ledger().orders).toHaveLength(0);
    expect(await daemon.stop()).toBe(0);
  }, 180_000);
});
