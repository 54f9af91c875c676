/**
 * Issue 30 follow-up (new-user trial): during a pause the console's Accounts showed supa "Rows
 * waiting 1" and Money "Reserved 1.20 USD" while `topup status` said 0 and 0.00. Both now read one
 * definition (ops/account-views.ts accountQueues), and the console's figures follow it live (its
 * event feed carries them; the Overview's cells were rendered once, while rows moved on). A real
 * daemon with its console, two real sandboxes, the real CLI.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome, TEST_KEY, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { start } from '../e2e/daemon.js';
import { Client } from './helpers.js';

releaseAfterEach();

type Queue = { account: string; rowsWaiting: number; reservedUsd: number; waitingForBalanceUsd: number };

/** The next `progress` payload of the console's event feed. */
async function livePayload(url: string, cookie: string): Promise<{ accounts?: Queue[] }> {
  const ac = new AbortController();
  const res = await fetch(`${url}/events`, { headers: cookie ? { cookie } : {}, signal: ac.signal });
  const reader = res.body!.getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the feed ended: ${text}`);
      text += Buffer.from(value).toString('utf8');
      const m = /event: progress\ndata: (.*)\n/.exec(text);
      if (m) return JSON.parse(m[1]!);
    }
  } finally {
    ac.abort();
  }
}

describe('rows waiting and reserved per account', () => {
  it('are the same figures in topup status, the Overview and its live feed', async () => {
    const home = tempHome('queues-agree-');
    // PUBG-325 is 4.55 USD: supa (1.00) cannot cover its row, so the row waits on supa.
    const supa = await inProcessSandbox({ balanceUsd: 1 });
    const supb = await inProcessSandbox({ balanceUsd: 100 });
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
    const acct = (name: string, url: string) => `[[account]]\nname = "${name}"\nurl = "${url}"\nkey_file = "keys/k"\n`;
    writeFileSync(join(home.dir, 'accounts.toml'), `routing = "priority"\n${acct('supa', supa.url)}\n${acct('supb', supb.url)}`);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '', TOPUP_CONSOLE: '127.0.0.1:0' });
    const { daemon, url } = await start(env, { started: true });
    const c = new Client(url);
    await c.get('/');
    home.drop('one.csv', csv([['pid', 'userId', 'trxid', 'account'], ['PUBG-325', '5123420001', 'Q-1', 'supa']]));
    await waitFor('the batch waiting for balance', async () => {
      const st = await runCli(['status', '--json'], env);
      return st.stdout !== '' && (JSON.parse(st.stdout) as { batches: { why: string | null }[] }).batches.some((b) => /balance/.test(b.why ?? '')) ? true : undefined;
    }, 60_000, 200);

    const status = (JSON.parse((await runCli(['status', '--json'], env)).stdout) as { accounts: Queue[] }).accounts.map((a) => ({ account: a.account, rowsWaiting: a.rowsWaiting, reservedUsd: a.reservedUsd, waitingForBalanceUsd: a.waitingForBalanceUsd }));
    expect(status.map((a) => [a.account, a.rowsWaiting])).toEqual([['supa', 1], ['supb', 0]]);
    const live = await livePayload(url, c.cookie);
    expect(live.accounts).toEqual(status);
    const overview = (await c.get('/')).text;
    // The waiting figure in supa's own row (the row ends with its Pause / Resume action since stop 37).
    expect(overview).toMatch(/<tr data-account="supa">(?:(?!<\/tr>).)*?<td class="num" data-f="waiting">1<\/td>/s);
    expect(await daemon.stop()).toBe(0);
  }, 180_000);
});
