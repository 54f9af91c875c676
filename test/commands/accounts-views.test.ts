/**
 * Issue 22 items 2-4: what `topup catalog --compare`, `topup validate`, `status`, `balance` and
 * `doctor` show of a home with two supplier accounts. Real CLI (dist/cli.js) as a child process
 * against two real in-process sandboxes with different pids and prices (test/e2e/accounts.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccountHome } from '../e2e/accounts.js';

releaseAfterEach();

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
