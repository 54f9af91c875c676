/**
 * Issue 22 item 4: the dry run (topup validate, the console's quote) shows the plan per account,
 * and places every row exactly where a load now would: the same placer (claim/placement.ts), the
 * same routing, queues and balances. Two real sandboxes as two accounts; real store, claim, load
 * and quote in this process; then the real CLI.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { quoteFile } from '../../src/ops/quote.js';
import { csv, releaseAll, runCli } from '../e2e/harness.js';
import { twoAccountHome, type TwoAccounts } from '../e2e/accounts.js';

const opened: Runtime[] = [];
afterEach(async () => {
  for (const rt of opened.splice(0)) await rt.close();
  await releaseAll();
});

function runtimeOf(t: TwoAccounts): Runtime {
  const rt = openRuntime(loadConfig({ TOPUP_HOME: t.home.dir }), silentLogger(), t.main.url);
  opened.push(rt);
  return rt;
}

// second sells 60 UC cheaper (0.80 against 0.92) and 325 UC dearer (5.00 against 4.55); only main sells Mobile Legends.
const ORDER = csv([
  ['pid', 'userId', 'zoneId', 'account'],
  ['PUBG-60', '5123456781', '', ''],
  ['PUBG-60', '5123456782', '', ''],
  ['PUBG-325', '5123456783', '', ''],
  ['ML-86', '5123456784', '1234', ''],
  ['PUBG-60', '5123456785', '', 'main'],
]);

describe('the dry run plans rows per account as the load places them', () => {
  it('cheapest routing, a pinned row, a game one account lacks, and a balance that runs out', async () => {
    // second can pay for one 60 UC (0.80) but not two: the router's balance preference sends the second one to main.
    const t = await twoAccountHome({ secondBalanceUsd: 1 });
    const rt = runtimeOf(t);
    const file = join(t.home.dir, 'shop.csv');
    writeFileSync(file, ORDER);

    const q = await quoteFile(rt, file, false);
    expect(q.problems).toEqual([]);
    expect(q.namedAccounts).toBe(true);
    expect(q.byAccount).toEqual([
      { account: 'main', rows: 4, usd: 7.94, balanceUsd: 1000, reservedUsd: 0, balanceAfterUsd: 992.06, affordable: true },
      { account: 'second', rows: 1, usd: 0.8, balanceUsd: 1, reservedUsd: 0, balanceAfterUsd: 0.2, affordable: true },
    ]);
    expect(q.byPack.map((p) => [p.account, p.pid, p.rows, p.usd])).toEqual([
      ['main', 'ML-86', 1, 1.55],
      ['main', 'PUBG-325', 1, 4.55],
      ['main', 'PUBG-60', 2, 1.84],
      ['second', 'B-PUBG-60', 1, 0.8],
    ]);
    expect(q).toMatchObject({ totalUsd: 8.74, balanceUsd: 1001, balanceAfterUsd: 992.26, affordable: true, ok: true });

    // The load places them where the plan said.
    const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    expect(await loadBatch(rt, batch)).toMatchObject({ loaded: true, rows: 5 });
    const placed = [...rt.rows.iterate(batch.id)].map((r) => [r.line, r.account, r.productId, r.expectedUsd]);
    expect(placed).toEqual([
      [2, 'second', 'B-PUBG-60', 0.8],
      [3, 'main', 'PUBG-60', 0.92],
      [4, 'main', 'PUBG-325', 4.55],
      [5, 'main', 'ML-86', 1.55],
      [6, 'main', 'PUBG-60', 0.92],
    ]);
    for (const a of q.byAccount) {
      const mine = placed.filter((p) => p[1] === a.account);
      expect(mine.length).toBe(a.rows);
    }

    // That batch's unsent rows are now reserved on their accounts.
    const again = await quoteFile(rt, file, true);
    expect(again.byAccount.map((a) => [a.account, a.reservedUsd])).toEqual([['main', 7.94], ['second', 0.8]]);
  });

  it('an account that cannot pay for its rows is named, with how much it needs', async () => {
    const t = await twoAccountHome({ mainBalanceUsd: 5 });
    const file = join(t.home.dir, 'shop.csv');
    writeFileSync(file, ORDER);
    const r = await runCli(['validate', file], t.env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/Plan by account \(SANDBOX balances\)|Plan by account:/);
    const plan = r.stdout.slice(r.stdout.indexOf('Plan by account'));
    expect(plan).toMatch(/main\s+3\s+7\.02\s+5\.00\s+-2\.02\s+NOT AFFORDABLE/);
    expect(plan).toMatch(/second\s+2\s+1\.60\s+1000\.00\s+998\.40/);
    expect(r.stdout).toMatch(/NOT AFFORDABLE: top up main by at least 2\.02 USD before submitting/);
    // The packs say which account sells them at which pid.
    expect(r.stdout).toMatch(/second\s+PUBG Mobile\s+60 UC\s+B-PUBG-60\s+2\s+2\s+0\.80\s+1\.60/);

    const json = JSON.parse((await runCli(['validate', '--json', file], t.env)).stdout);
    expect(json.byAccount.map((a: any) => [a.account, a.rows, a.usd, a.balanceAfterUsd, a.affordable])).toEqual([['main', 3, 7.02, -2.02, false], ['second', 2, 1.6, 998.4, true]]);
  });

  it('a row pinned to an account that lacks its pack is a problem of that row, as the load makes it', async () => {
    const t = await twoAccountHome();
    const file = join(t.home.dir, 'pinned.csv');
    writeFileSync(file, csv([['pid', 'userId', 'zoneId', 'account'], ['ML-86', '5123456784', '1234', 'second'], ['PUBG-60', '5123456781', '', 'nobody']]));
    const rt = runtimeOf(t);
    const q = await quoteFile(rt, file, false);
    expect(q.problems).toEqual([
      { line: 2, column: 'account', problem: 'second does not sell mobilelegends / 86 Diamonds now (not in its catalog, inactive or out of stock)' },
      { line: 3, column: 'account', problem: '"nobody" is not one of this home\'s accounts (main, second)' },
    ]);
    const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    await loadBatch(rt, batch);
    expect(rt.rows.byLine(batch.id, 2)).toMatchObject({ state: 'invalid', error: `account: ${q.problems[0]!.problem}` });
    expect(rt.rows.byLine(batch.id, 3)).toMatchObject({ state: 'invalid', error: `account: ${q.problems[1]!.problem}` });
  });
});
