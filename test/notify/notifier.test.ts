/**
 * Notifications received by a local test server: a real daemon run posts batch-finished
 * (counts, spend, result file name; never a code or the key); a failing webhook is retried and
 * never affects orders; the Telegram target gets the same text.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { Notifier } from '../../src/notify/notifier.js';

let home: TempHome | undefined;
let sb: RunningSandbox | undefined;
let server: Server | undefined;
afterEach(async () => {
  await sb?.close();
  server?.close();
  home?.remove();
  home = sb = server = undefined;
});

interface Received {
  path: string;
  body: any;
  raw: string;
}

/** A webhook that answers `statuses` in turn (then 200), recording every request. */
async function hookServer(statuses: number[] = []): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      got.push({ path: req.url ?? '', body: JSON.parse(raw), raw });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, got };
}

describe('notifications', () => {
  it('a batch run by the daemon posts batch-finished with counts, spend and the result file name, and no code or key', async () => {
    const hook = await hookServer([500]);
    home = tempHome();
    sb = await inProcessSandbox();
    home.drop('cards.csv', csv([['pid', 'quantity'], ['STEAM-5', '2'], ['NOPE', '1']]));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb, { TOPUP_WEBHOOK_URL: `${hook.url}/hook` }));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const codes = readResult(home, 'cards')[0]!.codes!.split(' ');
    expect(codes).toHaveLength(2);
    const finished = hook.got.filter((g) => g.body.event === 'batch-finished');
    expect(finished.length).toBe(2); // the 500 was retried
    expect(finished[1]!.body).toMatchObject({
      event: 'batch-finished',
      mode: 'LIVE',
      data: { file: 'cards.csv', counts: { completed: 1, invalid: 1 }, spentUsd: 10.3, resultFile: 'cards.result.csv' },
    });
    for (const g of hook.got) {
      expect(g.raw).not.toContain(TEST_KEY);
      for (const c of codes) expect(g.raw).not.toContain(c);
    }
  });

  it('a webhook that keeps failing is retried a few times, then given up, without throwing', async () => {
    const hook = await hookServer([500, 500, 500, 500, 500]);
    const config = loadConfig({ TOPUP_HOME: '/tmp', TOPUP_WEBHOOK_URL: hook.url });
    const n = new Notifier(config, silentLogger(), { retryDelaysMs: [20, 20] });
    n.send('balance-wait', 'Batch b1 waits for balance', { batchId: 'b1', codes: ['SECRET-CODE'], nested: { apiKey: 'k' } });
    await n.flush();
    expect(hook.got).toHaveLength(3);
    expect(hook.got[0]!.body.data).toEqual({ batchId: 'b1', nested: {} });
  });

  it('Telegram gets the text (with the SANDBOX mark) at /bot<token>/sendMessage', async () => {
    const hook = await hookServer();
    const config = loadConfig({ TOPUP_HOME: '/tmp', TOPUP_TELEGRAM_BOT_TOKEN: '123:abc-token', TOPUP_TELEGRAM_CHAT_ID: '-1001', TOPUP_TELEGRAM_API_BASE: hook.url });
    const n = new Notifier(config, silentLogger());
    n.send('account-problem', 'Sending stopped: account problem ACCOUNT_RESTRICTED.', { code: 'ACCOUNT_RESTRICTED' });
    await n.flush();
    expect(hook.got).toEqual([
      { path: '/bot123:abc-token/sendMessage', body: { chat_id: '-1001', text: '[SANDBOX] Sending stopped: account problem ACCOUNT_RESTRICTED.' }, raw: expect.any(String) },
    ]);
  });
});
