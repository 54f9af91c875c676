/**
 * Every command as a real child process against a sandbox started in the test process:
 * exit codes, --json output parsed, progress output present, one-line errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, runCli, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

let home: TempHome;
let sb: RunningSandbox;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  home = tempHome();
  sb = await inProcessSandbox();
  env = cliEnv(home, sb);
});
afterAll(async () => {
  await sb?.close();
  home?.remove();
});

const json = (s: string): any => JSON.parse(s);

describe('template → validate → submit → status', () => {
  it('template prints exactly the columns of the line and an example row that validates', async () => {
    const t = await runCli(['template', 'mobilelegends'], env);
    expect(t.code, t.stderr).toBe(0);
    const lines = t.stdout.trim().split('\n');
    expect(lines[0]).toBe('pid,userId,zoneId,trxid');
    expect(lines).toHaveLength(2);
    const [t2, t3, bad] = await Promise.all([runCli(['template', 'oncehuman'], env), runCli(['template', 'steamgiftcard'], env), runCli(['template', 'nosuchgame'], env)]);
    expect(t2.stdout.split('\n')[0]).toBe('pid,userId,region,moreId,trxid');
    expect(t3.stdout.split('\n')[0]).toBe('pid,quantity,trxid');

    const file = join(home.dir, 'ml.csv');
    writeFileSync(file, t.stdout);
    const v = await runCli(['validate', file, '--json'], env);
    expect(v.code, v.stderr).toBe(0);
    const q = json(v.stdout);
    expect(q).toMatchObject({ rows: 1, validRows: 1, invalidRows: 0, affordable: true, ok: true, problems: [] });
    expect(q.totalUsd).toBeGreaterThan(0);

    expect(bad.code).toBe(6);
    expect(bad.stderr).toMatch(/no line "nosuchgame"/);
  });

  it('validate prints the problems and the quote, and exits 1 for an invalid or unaffordable file; sends nothing', async () => {
    const file = join(home.dir, 'mixed.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['FFMENA-100', '12'], ['NOPE', '5123456789']]));
    const before = sb.admin.ledger().orders.length;
    const r = await runCli(['validate', file], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/lines\s+column\s+problem/);
    expect(r.stdout).toMatch(/userId\s+must be 5–20 digits/);
    expect(r.stdout).toMatch(/no pack with pid "NOPE"/);
    expect(r.stdout).toMatch(/balance after\s+999\.08 USD/);

    const big = join(home.dir, 'big.csv');
    writeFileSync(big, csv([['pid', 'userId'], ...Array.from({ length: 12 }, () => ['PUBG-8100', '5123456789'])]));
    const j = await runCli(['validate', big, '--json'], env);
    expect(j.code).toBe(1);
    expect(json(j.stdout)).toMatchObject({ validRows: 12, affordable: false, totalUsd: 1092 });
    expect(sb.admin.ledger().orders.length).toBe(before);

    const unreadable = join(home.dir, 'x.csv');
    writeFileSync(unreadable, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]));
    const u = await runCli(['validate', unreadable], env);
    expect(u.code).toBe(7);
    expect(u.stderr.trim().split('\n').filter((l) => l.startsWith('topup:'))).toHaveLength(1);
  });

  it('submit runs one batch with progress lines, writes the result files, and its exit code says whether every row completed', async () => {
    const file = join(home.dir, 'orders.csv');
    writeFileSync(file, csv([['pid', 'userId', 'note'], ['PUBG-60', '5123456789', 'a'], ['PUBG-325', '5123456789', 'b'], ['FFMENA-100', '12', 'bad']]));
    const r = await runCli(['submit', file], env);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toMatch(/progress b\d{6}-[0-9a-f]{6}: 3\/3 done; sent 2, completed 2, cancelled 0, rejected 0, invalid 1; spent 5\.47 USD/);
    expect(r.stdout).toMatch(/2 completed, 0 cancelled, 0 rejected, 1 invalid/);
    expect(readResult(home, 'orders').map((x) => x.status)).toEqual(['completed', 'completed', 'invalid']);
    expect(readSummary(home, 'orders').spentUsd).toBeCloseTo(5.47, 2);
    expect(readFileSync(file, 'utf8')).toMatch(/note/); // the user's file stays where it is

    const again = await runCli(['submit', file, '--json'], env);
    expect(again.code).toBe(1);
    const dup = json(again.stdout);
    // The same bytes again: a duplicate of the first submit, nothing sent, the way out named.
    expect(dup.duplicateOf).toMatch(/^b\d{6}-[0-9a-f]{6}$/);
    expect(dup.counts.skipped).toBe(3);
    expect(readFileSync(dup.resultFile, 'utf8')).toContain('topup submit --again');
    const good = join(home.dir, 'good.csv');
    // Another player: the same purchase for 5123456789 was just bought, and would be skipped as a repeat.
    writeFileSync(good, csv([['pid', 'userId'], ['PUBG-60', '5123456001']]));
    const ok = await runCli(['submit', good, '--json'], env);
    expect(ok.code, ok.stderr).toBe(0);
    const s = json(ok.stdout);
    expect(s).toMatchObject({ rows: 1, counts: { completed: 1 }, mode: 'LIVE' }); // an API URL was given
    expect(statSync(s.resultFile).mode & 0o777).toBe(0o600);

    const st = await runCli(['status', '--json'], env);
    expect(st.code).toBe(0);
    const list = json(st.stdout).batches;
    expect(list[0]).toMatchObject({ id: s.batchId, state: 'done', rows: 1, completed: 1 });
    const one = await runCli(['status', s.batchId, '--json'], env);
    expect(json(one.stdout).rows).toEqual([expect.objectContaining({ line: 2, state: 'completed', codesDelivered: 0 })]);
    const table = await runCli(['status'], env);
    expect(table.stdout).toMatch(/batch\s+file\s+state\s+done/);
  });

  it('balance, catalog, services, history and order answer as tables, --json and --csv', async () => {
    const b = await runCli(['balance', '--json'], env);
    expect(b.code).toBe(0);
    expect(json(b.stdout)).toMatchObject({ currency: 'USD', mode: 'LIVE' });
    expect(json(b.stdout).balanceUsd).toBeCloseTo(sb.admin.ledger().balances[Object.keys(sb.admin.ledger().balances)[0]!]!, 2);

    const [c, cc, svc, h, paged0, both] = await Promise.all([
      runCli(['catalog', '--slug', 'pubg', '--json'], env),
      runCli(['catalog', '--csv'], env),
      runCli(['services'], env),
      runCli(['history', '--limit', '2', '--json'], env),
      runCli(['history', '--page', '1', '--page-size', '1', '--json'], env),
      runCli(['history', '--limit', '2', '--page', '1'], env),
    ]);
    expect(c.code).toBe(0);
    expect(json(c.stdout).map((p: any) => p.id)).toContain('PUBG-60');
    expect(json(c.stdout).every((p: any) => p.slug === 'pubg')).toBe(true);
    expect(cc.stdout.split('\n')[0]).toBe('pid,slug,game,pack,category,priceUsd,status,stock');
    expect(svc.stdout).toMatch(/wutheringwaves.*userId serverId/);

    expect(h.code).toBe(0);
    const hist = json(h.stdout);
    expect(hist.orders).toHaveLength(2);
    const paged = json(paged0.stdout);
    expect(paged).toMatchObject({ page: 1, hasMore: true });
    expect(paged.orders).toHaveLength(1);
    expect(both.code).toBe(2);

    const id = hist.orders[0].orderId;
    const o = await runCli(['order', id, '--json'], env);
    expect(o.code).toBe(0);
    expect(json(o.stdout)).toMatchObject({ orderId: id, status: 'completed', local: { line: expect.any(Number) } });
    const [missing, verbose] = await Promise.all([runCli(['order', 'NO-SUCH-ORDER'], env), runCli(['--verbose', 'order', 'NO-SUCH-ORDER'], env)]);
    expect(missing.code).toBe(6);
    expect(missing.stderr).toMatch(/^topup: no order NO-SUCH-ORDER.*\n$/);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    expect(verbose.stderr).toMatch(/\n\s+at /);
  });

  it('doctor shows the public IP and passes; a wrong key is one sentence with the API code, exit 4', async () => {
    const d = await runCli(['doctor', '--json'], env);
    expect(d.code, d.stdout).toBe(0);
    const rep = json(d.stdout);
    expect(rep.ip).toMatch(/\d+\.\d+\.\d+\.\d+/);
    expect(rep.checks.map((c: any) => c.name)).toEqual(expect.arrayContaining(['api key', 'public ip', 'clock', 'disk space', 'database']));
    const t = await runCli(['doctor'], env);
    expect(t.stdout).toMatch(/Public IP seen by the API/);

    const wrong = await runCli(['balance'], { ...env, TOPUP_API_KEY: 'wrong-key-000000000' });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toMatch(/^topup: .*\[INVALID_API_KEY\]\n$/);
    const wd = await runCli(['doctor'], { ...env, TOPUP_API_KEY: 'wrong-key-000000000' });
    expect(wd.code).toBe(1);
    expect(wd.stdout).toMatch(/api key\s+FAIL/);
  });

  it('status works while the API is down, and unknown batches exit 6', async () => {
    const down = { ...env, TOPUP_API_URL: 'http://127.0.0.1:9' };
    const r = await runCli(['status', '--csv'], down);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^batch,file,state,done/);
    expect((await runCli(['status', 'b000000-000000'], down)).code).toBe(6);
  });

  it('every command has --help, and nothing printed holds the key', async () => {
    const cmds = ['daemon', 'submit', 'validate', 'status', 'cancel', 'retry', 'run-covered', 'template', 'catalog', 'services', 'balance', 'order', 'history', 'doctor'];
    const results = await Promise.all(cmds.map((cmd) => runCli([cmd, '--help'], env)));
    for (const [i, cmd] of cmds.entries()) {
      const r = results[i]!;
      expect(r.code, cmd).toBe(0);
      expect(r.stdout, cmd).toMatch(/Usage: topup/);
      expect(r.stdout + r.stderr).not.toContain(TEST_KEY);
    }
    expect((await runCli(['frobnicate'], env)).code).toBe(2);
  });
});
