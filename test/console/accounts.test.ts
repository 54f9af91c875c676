/**
 * Issue 22 item 2: /metrics and the console of a daemon with two supplier accounts (two real
 * sandboxes, test/e2e/accounts.ts): the API-call and pause figures carry an `account` label, the
 * overview shows each account's pause and balance, the batch page each row's account.
 */
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccountHome } from '../e2e/accounts.js';
import { Client } from './helpers.js';

releaseAfterEach();

function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

describe('a daemon with two accounts', () => {
  it('/metrics labels calls and pauses by account; the overview shows each account; the batch page each row\'s account', async () => {
    const t = await twoAccountHome();
    const daemon = startDaemon({ ...t.env, TOPUP_CONSOLE: '127.0.0.1:0' });
    const url = await consoleUrl(daemon);
    await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 30_000, 20);
    const metrics = async () => samples(await (await fetch(`${url}/metrics`)).text());

    // 60 UC is cheaper at second, 325 UC at main.
    t.home.drop('orders.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456781'], ['PUBG-325', '5123456782']]));
    await waitForResult(t.home, 'orders');
    let m = await metrics();
    expect(m.get('topup_api_calls_total{route="submit",outcome="2xx",account="main"}')).toBe(1);
    expect(m.get('topup_api_calls_total{route="submit",outcome="2xx",account="second"}')).toBe(1);
    expect(m.get('topup_api_request_duration_seconds_count{route="submit",account="second"}')).toBe(1);
    expect(m.get('topup_api_rate_limited_total{route="submit",account="second"}')).toBe(0);
    expect(m.get('topup_paused{kind="maintenance",account="second"}')).toBe(0);
    expect(m.get('topup_pauses_total{kind="maintenance",account="second"}')).toBe(0);
    expect(m.get('topup_rate_window_calls{window="1m",account="main"}')).toBeGreaterThan(0);

    // The batch page: each row's account.
    const list = JSON.parse((await runCli(['status', '--json'], t.env)).stdout);
    const id = list.batches.find((b: any) => b.file === 'orders.csv').id;
    const batchPage = await (await fetch(`${url}/batches/${id}`)).text();
    expect(batchPage).toContain('<th scope="col">Account</th>');
    expect(batchPage).toMatch(/<td data-account>second<\/td>/);
    expect(batchPage).toMatch(/<td data-account>main<\/td>/);

    // second goes into maintenance: its pause is counted and shown under its name, main's is not.
    t.second.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    t.home.drop('more.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456783']]));
    m = await waitFor('second paused in /metrics', async () => {
      const s = await metrics();
      return s.get('topup_paused{kind="maintenance",account="second"}') === 1 ? s : undefined;
    }, 30_000, 200);
    expect(m.get('topup_pauses_total{kind="maintenance",account="second"}')).toBe(1);
    expect(m.get('topup_pauses_total{kind="maintenance",account="main"}')).toBe(0);
    expect(m.get('topup_paused{kind="maintenance",account="main"}')).toBe(0);

    // The overview: each account's pause (and its probe) in the Accounts table; each account's
    // money (balance once read, reserved, available, runway) in the Money table, with the total of
    // all accounts: one balance per account, none shown twice (issue 30).
    await fetch(`${url}/`);
    const overview = await waitFor('both balances read', async () => {
      const text = await (await fetch(`${url}/`)).text();
      return text.includes('data-account="second"') && !text.includes('not read yet') && !text.includes('not every account read yet') ? text : undefined;
    }, 15_000, 200);
    expect(overview).toContain('<h2 id="accounts-h">Accounts</h2>');
    expect(overview).toMatch(/data-account="second"><th scope="row">second<\/th><td data-pause><span class="badge">Maintenance<\/span> <strong>MAINTENANCE<\/strong>/);
    expect(overview).toMatch(/data-account="main"><th scope="row">main<\/th><td data-pause><span class="ok">sending<\/span><\/td>/);
    expect(overview).not.toContain('data-balance');
    // Why it is paused and when its read probe last ran (or that none has yet), and the next one.
    expect(overview).toMatch(/data-account="second">.*?<span class="muted" data-probe>(last probed <time |not probed yet)/s);
    expect(overview).toMatch(/data-account="second">.*?next probe in /s);
    const moneyOf = (account: string): number => Number(new RegExp(`data-money-account="${account}"><th scope="row">${account}</th><td class="num" data-f="balance"><strong data-f="balance-usd">([\\d.]+) USD`).exec(overview)?.[1]);
    expect(moneyOf('main')).toBeCloseTo(t.main.admin.account().balanceUsd, 2);
    expect(moneyOf('second')).toBeCloseTo(t.second.admin.account().balanceUsd, 2);
    const total = Number(/data-money-total><th scope="row">All accounts<\/th><td class="num" data-f="balance"><strong data-f="balance-usd">([\d.]+) USD/.exec(overview)?.[1]);
    expect(total).toBeCloseTo(moneyOf('main') + moneyOf('second'), 2);
    // /metrics: each account's balance under its name.
    m = await metrics();
    expect(m.get('topup_balance_usd{mode="LIVE",account="main"}')).toBeCloseTo(moneyOf('main'), 2);
    expect(m.get('topup_balance_usd{mode="LIVE",account="second"}')).toBeCloseTo(moneyOf('second'), 2);

    // The upload's quote: the plan by account, and each pack line's account.
    const c = new Client(url);
    await c.get('/login');
    await c.post('/login', { name: 'ana', next: '/' });
    await c.get('/upload');
    const form = new FormData();
    form.set('file', new Blob([csv([['pid', 'userId'], ['PUBG-60', '5123456790'], ['PUBG-325', '5123456791']])]), 'next.csv');
    const up = await c.post('/upload', form);
    expect(up.status, up.text).toBe(303);
    const quote = (await c.get(up.headers.get('location')!)).text;
    // second is in maintenance: the router prefers main while second is paused.
    expect(quote).toMatch(/<tr data-plan="main"><th scope="row">main<\/th><td class="num">2<\/td><td class="num">5\.47 USD<\/td>/);
    // second's waiting row (more.csv, held by the maintenance) is reserved there.
    expect(quote).toMatch(/<tr data-plan="second"><th scope="row">second<\/th><td class="num">0<\/td><td class="num">0\.00 USD<\/td><td class="num">[\d.]+ USD<\/td><td class="num">0\.80 USD<\/td>/);
    expect(quote).toMatch(/<tr data-pack="PUBG-60"><td>main<\/td><td>PUBG Mobile<\/td>/);
  });
});
