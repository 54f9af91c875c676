/**
 * Issue 13, "Metrics", and the console's place in the daemon: /metrics of a real daemon after real
 * batches (gauges read from the store, so rows a `topup submit` in another process stores count
 * at once; counters from the runner's events), the overview's figures, the address in the log,
 * a port already taken, and no console for `daemon --once`.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_KEY, cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { Client, startConsoleDaemon } from './helpers.js';

releaseAfterEach();

/** `name{labels} value` lines of a Prometheus text answer, as a map. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

describe('/metrics', () => {
  it('shows rows by state (also those another process stores), finished rows, USD, API calls, durations, rate budget, batches, balance and process figures; never the key', async () => {
    const t = await startConsoleDaemon();
    t.home.drop('orders.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['FFMENA-100', '12'], ['PUBG-325', '5123456789']]));
    await waitForResult(t.home, 'orders');
    const text = await (await fetch(`${t.url}/metrics`)).text();
    expect(text).not.toContain(TEST_KEY);
    const m = samples(text);
    expect(m.get('topup_rows{state="completed"}')).toBe(2);
    expect(m.get('topup_rows{state="invalid"}')).toBe(1);
    expect(m.get('topup_rows_finished_total{outcome="completed"}')).toBe(2);
    // Stored invalid, so it never moved: counted when its batch was stored (issue 21, item 8).
    expect(m.get('topup_rows_finished_total{outcome="invalid"}')).toBe(1);
    expect(m.get('topup_spent_usd_total')).toBeCloseTo(0.92 + 4.55, 2);
    expect(m.get('topup_refunded_usd_total')).toBe(0);
    expect(m.get('topup_api_calls_total{route="submit",outcome="2xx",account="default"}')).toBe(2);
    expect(m.get('topup_api_request_duration_seconds_count{route="submit",account="default"}')).toBe(2);
    expect(m.get('topup_batches{state="done",wait_reason="none"}')).toBe(1);
    expect(m.get('topup_balance_usd{mode="LIVE",account="default"}')).toBeCloseTo(1000 - 0.92 - 4.55, 2);
    expect(m.get('topup_balance_age_seconds{mode="LIVE",account="default"}')).toBeLessThan(60);
    expect(m.get('topup_rate_window_limit{window="1s",account="default"}')).toBe(40);
    expect(m.get('topup_rate_window_calls{window="1m",account="default"}')).toBeGreaterThanOrEqual(3);
    expect(m.get('topup_oldest_pending_row_age_seconds')).toBe(0);
    expect(m.get('topup_paused{kind="account",account="default"}')).toBe(0);
    expect(m.has('topup_process_cpu_user_seconds_total')).toBe(true);
    expect(m.has('topup_nodejs_eventloop_lag_seconds')).toBe(true);
    // Labels come from fixed sets only: no batch id, file name, player or order in any of them.
    expect(text).not.toMatch(/orders\.csv|5123456789|ORD\d|b\d{6}-/);

    // The runway names the span its pace was measured over, and it is the one runway of
    // reports/runway.ts (the last 7 days' pace from the store), not this daemon's last minutes.
    const overview = await (await fetch(`${t.url}/`)).text();
    expect(overview).toMatch(/Runway<\/dt><dd>about .+ at the last 7 days&#39; pace \(\d+\.\d\d USD a day\)/);
    expect(overview).not.toMatch(/Runway<\/dt><dd>[^<]*(daemon|last hour|last 10 min)/);

    // A submit in another process, held before sending (balance too low): its rows count at once.
    t.sb.admin.setBalance({ balanceUsd: 0 });
    const file = join(t.home.dir, 'more.csv');
    // Another player: a repeat of a purchase bought minutes ago would be skipped (claim/repeats.ts).
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123450001']]));
    const child = runCli(['submit', file], { ...t.env }, { timeoutMs: 60_000 });
    const pending = await waitFor('the other process\'s row in the gauge', async () => {
      const s = samples(await (await fetch(`${t.url}/metrics`)).text());
      return (s.get('topup_rows{state="pending"}') ?? 0) === 1 ? s : undefined;
    }, 30_000, 200);
    expect(pending.get('topup_batch_wait_longest_seconds{reason="balance"}')).toBeGreaterThanOrEqual(0);
    t.sb.admin.setBalance({ balanceUsd: 100 });
    const r = await child;
    expect(r.code, r.stderr).toBe(0);
  });
});

describe('the console in the daemon', () => {
  it('prints its address among the first lines of the log, and a taken port does not stop the daemon', async () => {
    const t = await startConsoleDaemon();
    const lines = t.daemon.output().split('\n');
    const at = lines.findIndex((l) => l.includes('console: open http://127.0.0.1:'));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(20);
    expect(lines.find((l) => l.includes('topup daemon started'))).toContain(`"console":"${t.url}/"`);

    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const home = tempHome();
    const sb = await inProcessSandbox();
    const d = startDaemon(cliEnv(home, sb, { TOPUP_CONSOLE: `127.0.0.1:${port}` }));
    await waitFor('the daemon started', () => d.output().includes('topup daemon started'));
    expect(d.output()).toMatch(/console: 127\.0\.0\.1:\d+ is already in use .*running without the console\. Set TOPUP_CONSOLE to another address, or off/);
    home.drop('after.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    await waitForResult(home, 'after');
    expect(await d.stop()).toBe(0);
    blocker.close();
  });

  it('daemon --once starts no console', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    home.drop('once.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb, { TOPUP_CONSOLE: '127.0.0.1:0' }));
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('console: open');
  });

  it('the overview shows balance, reserved and runway, pauses, the rate budget, batches and why they wait, jobs, errors and review', async () => {
    const t = await startConsoleDaemon({}, { balanceUsd: 1 });
    const c = new Client(t.url);
    t.home.drop('big.csv', csv([['pid', 'userId'], ['PUBG-325', '5123456789']]));
    await waitFor('the wait', async () => (await c.get('/')).text.includes('waiting for balance'), 30_000, 200);
    t.sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    t.sb.admin.setBalance({ balanceUsd: 100 });
    const page = await waitFor('the maintenance pause', async () => {
      const p = (await c.get('/')).text;
      return p.includes('Maintenance: <strong>MAINTENANCE</strong>') ? p : undefined;
    }, 30_000, 200);
    expect(page).toMatch(/Balance<\/dt><dd><strong data-f="balance-usd">\d+\.\d\d USD<\/strong> read <time/);
    // The pause says when its read probe last ran (issue 30), in a home of one account too.
    expect(page).toMatch(/Maintenance: <strong>MAINTENANCE<\/strong>.*?data-probe>· (last probed <time|not probed yet)/s);
    expect(page).toMatch(/Reserved<\/dt><dd>(?:<span data-f="reserved">)?4\.55 USD/);
    expect(page).toMatch(/Runway<\/dt><dd>/);
    expect(page).toMatch(/last 1 s<\/th><td>\d+ \/ 40<\/td>/);
    expect(page).toMatch(/last 1 min<\/th><td>\d+ \/ 200<\/td>/);
    expect(page).toContain('big.csv');
    expect(page).toMatch(/balance-report<\/th><td>off<\/td>/);
    expect(page).toMatch(/orders paused by the API: MAINTENANCE|API submit: HTTP 503/);
    expect(page).toContain('No rows waiting for review.');
    t.sb.admin.setFaults({ maintenance: null });
    await waitForResult(t.home, 'big');
  });
});
