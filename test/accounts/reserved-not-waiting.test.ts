/**
 * Issue 30 (the lead's note, stop 33, "noticed, not fixed"): "Reserved" in `topup status`, the
 * console's Money and `topup_reserved_usd` counted the rows of batches waiting for balance, for which
 * the funds check sets no money aside (account/funds.ts holdsMoney: a later file that the balance
 * covers goes ahead of them). So "available for new files" was understated by exactly what waited.
 * Now reserved is what funded batches still have to spend, and what waits for balance is its own
 * figure beside it, the same in status, the Overview, its live feed and /metrics. A real daemon with
 * its console, two real sandboxes, the real CLI.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome, TEST_KEY, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { start } from '../e2e/daemon.js';
import { Client } from '../console/helpers.js';

releaseAfterEach();

type Queue = { account: string; rowsWaiting: number; reservedUsd: number; waitingForBalanceUsd: number };

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

describe('reserved and waiting for balance', () => {
  it('are two figures: a batch waiting for balance reserves nothing, in status, the Overview, its feed and /metrics', async () => {
    const home = tempHome('reserved-waiting-');
    // PUBG-325 is 4.55 USD: supa (1.00) cannot cover its row, so its batch waits for balance.
    const supa = await inProcessSandbox({ balanceUsd: 1 });
    const supb = await inProcessSandbox({ balanceUsd: 100 });
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
    const acct = (name: string, url: string) => `[[account]]\nname = "${name}"\nurl = "${url}"\nkey_file = "keys/k"\n`;
    writeFileSync(join(home.dir, 'accounts.toml'), `routing = "priority"\n${acct('supa', supa.url)}\n${acct('supb', supb.url)}`);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '', TOPUP_CONSOLE: '127.0.0.1:0' });
    const { daemon, url } = await start(env, { started: true });
    try {
      const c = new Client(url);
      await c.get('/');
      home.drop('one.csv', csv([['pid', 'userId', 'trxid', 'account'], ['PUBG-325', '5123420001', 'Q-1', 'supa']]));
      await waitFor('the batch waiting for balance', async () => {
        const st = await runCli(['status', '--json'], env);
        return st.stdout !== '' && (JSON.parse(st.stdout) as { batches: { why: string | null }[] }).batches.some((b) => /balance/.test(b.why ?? '')) ? true : undefined;
      }, 60_000, 200);

      const st = await runCli(['status', '--json'], env);
      const status = (JSON.parse(st.stdout) as { accounts: Queue[] }).accounts.map((a) => ({ account: a.account, rowsWaiting: a.rowsWaiting, reservedUsd: a.reservedUsd, waitingForBalanceUsd: a.waitingForBalanceUsd }));
      expect(status).toEqual([
        { account: 'supa', rowsWaiting: 1, reservedUsd: 0, waitingForBalanceUsd: 4.55 },
        { account: 'supb', rowsWaiting: 0, reservedUsd: 0, waitingForBalanceUsd: 0 },
      ]);
      const table = (await runCli(['status'], env)).stdout;
      expect(table).toMatch(/reserved usd\s+waiting for balance usd/);
      expect(table).toMatch(/supa\s.*\s0\.00\s+4\.55/);

      const live = await livePayload(url, c.cookie);
      expect(live.accounts).toEqual(status);

      const overview = (await c.get('/')).text;
      // supa: balance 1.00, reserved 0.00, waiting for balance 4.55, available 1.00 (what a new file may use).
      expect(overview).toMatch(/<tr data-money-account="supa">.*?<span data-f="reserved">0\.00 USD<\/span><span class="muted note" data-f="waiting-balance">waiting for balance: 4\.55 USD<\/span><\/td><td class="num" data-f="available">1\.00 USD<\/td>/s);
      expect(overview).toMatch(/<tr data-money-account="supb">.*?<span data-f="reserved">0\.00 USD<\/span><span class="muted note" data-f="waiting-balance"><\/span>/s);

      const metrics = await c.get('/metrics');
      expect(metrics.text).toMatch(/^topup_reserved_usd 0$/m);
      expect(metrics.text).toMatch(/^topup_waiting_for_balance_usd 4\.55$/m);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  }, 180_000);
});
