/**
 * Issue 22 items 2-4: what `topup catalog --compare`, `topup validate`, `status`, `balance` and
 * `doctor` show of a home with two supplier accounts. Real CLI (dist/cli.js) as a child process
 * against two real in-process sandboxes with different pids and prices (test/e2e/accounts.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { cliEnv, csv, inProcessSandbox, releaseAll, runCli, tempHome } from '../e2e/harness.js';
import { twoAccountHome } from '../e2e/accounts.js';

const opened: Runtime[] = [];
afterEach(async () => {
  for (const rt of opened.splice(0)) await rt.close();
  await releaseAll();
});

describe('topup catalog --compare', () => {
  it('shows each pack at every account, its pid, price and stock there, the cheapest marked', async () => {
    const t = await twoAccountHome();
    t.second.admin.setProduct({ id: 'B-STEAM-10', stock: 4 });
    const r = await runCli(['catalog', '--compare', '--json'], t.env);
    expect(r.stderr).not.toMatch(/warning|error/i);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.accounts).toEqual(['main', 'second']);
    const pack = (slug: string, name: string) => out.packs.find((p: any) => p.slug === slug && p.pack === name);
    expect(pack('pubg', '60 UC')).toEqual({
      slug: 'pubg', game: 'PUBG Mobile', pack: '60 UC', cheapest: 'second',
      offers: [
        { account: 'main', pid: 'PUBG-60', priceUsd: 0.92, status: 'active', stock: null, orderable: true },
        { account: 'second', pid: 'B-PUBG-60', priceUsd: 0.8, status: 'active', stock: null, orderable: true },
      ],
    });
    expect(pack('pubg', '325 UC').cheapest).toBe('main');
    expect(pack('steamgiftcard', 'Steam $10').offers.map((o: any) => [o.account, o.pid, o.stock])).toEqual([['main', 'STEAM-10', 600], ['second', 'B-STEAM-10', 4]]);
    // A game only one account sells is listed once, at that account.
    expect(pack('mobilelegends', '86 Diamonds')).toMatchObject({ cheapest: 'main', offers: [{ account: 'main', pid: 'ML-86' }] });
    // Every product of every account appears exactly once.
    const offers = out.packs.flatMap((p: any) => p.offers.map((o: any) => `${o.account}:${o.pid}`));
    expect(new Set(offers).size).toBe(offers.length);

    const table = await runCli(['catalog', '--compare', '--slug', 'pubg'], t.env);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/slug\s+game\s+pack\s+account\s+pid\s+priceUsd\s+stock\s+status\s+cheapest/);
    const first = lines.findIndex((l) => /\bPUBG-60\b/.test(l));
    expect(lines[first]).toMatch(/pubg\s+PUBG Mobile\s+60 UC\s+main\s+PUBG-60\s+0\.92/);
    expect(lines[first]).not.toMatch(/cheapest/);
    expect(lines[first + 1]).toMatch(/^\s+second\s+B-PUBG-60\s+0\.80\s+active\s+cheapest\s*$/);
    expect(table.stdout).not.toMatch(/mobilelegends/);

    const asCsv = await runCli(['catalog', '--compare', '--csv', '--slug', 'pubg'], t.env);
    expect(asCsv.stdout).toMatch(/^pubg,PUBG Mobile,60 UC,second,B-PUBG-60,0\.80,,active,cheapest$/m);
  });

  it('the [[pack]] table pairs packs whose names differ', async () => {
    const pidsOf660 = async (extra?: string) => {
      const t = await twoAccountHome(extra ? { extra } : {});
      const r = await runCli(['catalog', '--compare', '--json', '--slug', 'pubg'], t.env);
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout).packs.filter((p: any) => p.pack.startsWith('660 UC')).map((p: any) => p.offers.map((o: any) => o.pid));
    };
    // "660 UC" and "660 UC (promo)": two packs by name...
    expect(await pidsOf660()).toEqual([['PUBG-660'], ['B-PUBG-660']]);
    // ...one purchase by the table.
    expect(await pidsOf660('[[pack]]\nmain = { pid = "PUBG-660" }\nsecond = { pid = "B-PUBG-660" }\n')).toEqual([['PUBG-660', 'B-PUBG-660']]);
  });

  it('a home with one account: topup catalog is unchanged; --compare lists its packs', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const plain = await runCli(['catalog', '--slug', 'pubg'], env);
    expect(plain.code).toBe(0);
    expect(plain.stdout.split('\n')[0]).toMatch(/^pid\s+slug\s+game\s+pack\s+category\s+priceUsd\s+status\s+stock$/);
    const r = await runCli(['catalog', '--compare', '--json', '--slug', 'pubg'], env);
    expect(JSON.parse(r.stdout).packs[0]).toMatchObject({ pack: '60 UC', cheapest: 'default', offers: [{ account: 'default', pid: 'PUBG-60' }] });
  });
});

describe('status, balance and doctor per account', () => {
  it('topup status: each account\'s pause, calls in the last minute, rows waiting and USD reserved; each row\'s account', async () => {
    const t = await twoAccountHome();
    // A batch stored by the real load (rows placed per the routing), and a maintenance pause on second.
    const rt = openRuntime(loadConfig({ TOPUP_HOME: t.home.dir }), silentLogger(), t.main.url);
    opened.push(rt);
    const file = join(t.home.dir, 'shop.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456781'], ['PUBG-60', '5123456782'], ['PUBG-325', '5123456783']]));
    const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    await loadBatch(rt, batch);
    rt.accountOf('second').pauses().pause('maintenance', 'MAINTENANCE', 'scheduled maintenance');

    const r = await runCli(['status', '--json'], t.env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.accounts.map((a: any) => [a.account, a.pause?.code ?? null, a.rowsWaiting, a.reservedUsd])).toEqual([
      ['main', null, 1, 4.55],
      ['second', 'MAINTENANCE', 2, 1.6],
    ]);
    // The load read each account's catalog and balance: those calls are in the shared call log, per account.
    for (const a of out.accounts) expect(a.callsLastMinute).toBeGreaterThan(0);

    const table = await runCli(['status'], t.env);
    expect(table.stdout).toMatch(/^second: Orders paused by the API: MAINTENANCE since /m);
    expect(table.stdout).toMatch(/^main\s+\d+\s+1\s+4\.55\s+0\.00$/m);
    expect(table.stdout).toMatch(/^second\s+maintenance MAINTENANCE\s+\d+\s+2\s+1\.60\s+0\.00$/m);

    const one = JSON.parse((await runCli(['status', batch.id, '--json'], t.env)).stdout);
    expect(one.rows.map((row: any) => [row.line, row.account, row.pid])).toEqual([[2, 'second', 'B-PUBG-60'], [3, 'second', 'B-PUBG-60'], [4, 'main', 'PUBG-325']]);
    const rowsTable = (await runCli(['status', batch.id], t.env)).stdout;
    expect(rowsTable).toMatch(/^\s*2\s+second\s+pending\s/m);
  });

  it('a home without accounts.toml: status shows no accounts and no account column', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const r = await runCli(['status', '--json'], env);
    expect(Object.keys(JSON.parse(r.stdout))).toEqual(['pause', 'batches']);
    expect((await runCli(['status'], env)).stdout).not.toMatch(/Accounts:/);
  });

  it('topup balance: one line per account, each with its reserve; an account that cannot be read is named, the others still shown', async () => {
    const t = await twoAccountHome({ secondBalanceUsd: 12.5 });
    const r = await runCli(['balance', '--json'], t.env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).accounts.map((a: any) => [a.account, a.balanceUsd, a.reservedUsd, a.error])).toEqual([['main', 1000, 0, null], ['second', 12.5, 0, null]]);
    const table = await runCli(['balance'], t.env);
    expect(table.stdout).toMatch(/^second\s+12\.50\s+USD\s+0\.00\s+LIVE/m);

    t.second.admin.setAccount({ state: 'banned' });
    const bad = await runCli(['balance', '--json'], t.env);
    expect(bad.code).toBe(1);
    const accounts = JSON.parse(bad.stdout).accounts;
    expect(accounts[0]).toMatchObject({ account: 'main', balanceUsd: 1000, error: null });
    expect(accounts[1]).toMatchObject({ account: 'second', balanceUsd: null });
    expect(accounts[1].error).toMatch(/.+/);
  });

  it('topup doctor: the rate limits, key, IP and clock of each account; a refused key of one account fails', async () => {
    const t = await twoAccountHome();
    const ok = await runCli(['doctor', '--json'], t.env);
    const report = JSON.parse(ok.stdout);
    const names = report.checks.map((c: any) => c.name);
    for (const a of ['main', 'second']) for (const c of ['rate limits', 'api key', 'public ip', 'clock']) expect(names).toContain(`${c} (${a})`);
    expect(report.accounts.map((a: any) => [a.account, a.balanceUsd])).toEqual([['main', 1000], ['second', 1000]]);
    expect(report.checks[0].detail).toMatch(/accounts \/.+\/accounts\.toml: main, second; routing cheapest$/);
    expect(ok.code).toBe(0);

    t.second.admin.setAccount({ state: 'banned' });
    const bad = await runCli(['doctor'], t.env);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/api key \(main\)\s+ok\s+accepted by http/);
    expect(bad.stdout).toMatch(/api key \(second\)\s+FAIL/);
    expect(bad.stdout).toMatch(/NOT READY/);
  });
});
