/**
 * Trial s34, defects 3 and 4, with the real CLI against two real sandboxes (two accounts that
 * number their orders alike, both from ORD1000001):
 *  - `topup history` read only the first account: no --account, no account column;
 *  - `topup order ORD1000001` showed the first account's order beside the row another account's
 *    batch placed under the same id (its "placed by batch …" and last answer).
 */
import { describe, expect, it } from 'vitest';
import { readResult, runCli, TEST_KEY } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ordersOf, twoAccounts } from '../accounts/two-sandboxes.js';

releaseAfterEach();

/** A second account's batch places ORD1000001 at `second`; the first account's own panel places its ORD1000001. */
async function sameIdAtTwoAccounts() {
  const w = await twoAccounts();
  w.home.drop('batch.csv', 'pid,userId,trxid\nB-PUBG-60,5123450101,BATCH-1\n');
  const run = await runCli(['daemon', '--once'], w.env);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  expect(readResult(w.home, 'batch').map((r) => r.status)).toEqual(['completed']);
  const res = await fetch(`${w.a.url}/orders`, {
    method: 'POST',
    headers: { 'X-API-Key': TEST_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ pid: 'PUBG-60', userId: '5199999999', trxid: 'PANEL-1' }),
  });
  expect(res.status).toBe(200);
  expect(ordersOf(w.a).map((o) => o.orderId)).toEqual(['ORD1000001']);
  expect(ordersOf(w.b).map((o) => o.orderId)).toEqual(['ORD1000001']);
  return w;
}

describe('topup history and topup order with two accounts (trial s34, 3 and 4)', () => {
  it('history lists every account, each order with its account; --account keeps one', async () => {
    const { env } = await sameIdAtTwoAccounts();
    const all = await runCli(['history', '--json'], env);
    expect(all.code, all.stderr).toBe(0);
    const h = JSON.parse(all.stdout);
    expect(h.orders.map((o: any) => [o.account, o.orderId, o.trxid]).sort()).toEqual([
      ['main', 'ORD1000001', 'PANEL-1'],
      ['second', 'ORD1000001', 'BATCH-1'],
    ]);
    expect(h.accounts.map((a: any) => [a.account, a.count])).toEqual([['main', 1], ['second', 1]]);
    const table = await runCli(['history'], env);
    expect(table.stdout).toMatch(/^account\s+created UTC/);
    expect(table.stdout).toMatch(/second\s+\S+ \S+\s+ORD1000001\s+BATCH-1/);
    const one = JSON.parse((await runCli(['history', '--account', 'second', '--json'], env)).stdout);
    expect(one.orders.map((o: any) => [o.account, o.trxid])).toEqual([['second', 'BATCH-1']]);
    const unknown = await runCli(['history', '--account', 'nope'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/account "nope" is not in this home's accounts \(main, second\)/);
  }, 400000);

  it('order: an id at two accounts is shown as two orders, each with its own row or none; --account picks one', async () => {
    const { env } = await sameIdAtTwoAccounts();
    const both = await runCli(['order', 'ORD1000001', '--json'], env);
    expect(both.code, both.stderr).toBe(0);
    const j = JSON.parse(both.stdout);
    expect(j.accounts).toEqual(['main', 'second']);
    expect(j.orders[0]).toMatchObject({ account: 'main', trxid: 'PANEL-1', userId: '5199999999', local: null });
    expect(j.orders[1]).toMatchObject({ account: 'second', trxid: 'BATCH-1', userId: '5123450101', local: { line: 2, state: 'completed' } });
    const text = await runCli(['order', 'ORD1000001'], env);
    expect(text.stdout).toMatch(/order id ORD1000001 is at 2 accounts \(main, second\)/);
    expect(text.stdout).toMatch(/^at second: placed by batch b\S+, line 2 \(completed/m);
    expect(text.stdout).not.toMatch(/at main: placed by/);
    const main = JSON.parse((await runCli(['order', 'ORD1000001', '--account', 'main', '--json'], env)).stdout);
    expect(main).toMatchObject({ account: 'main', trxid: 'PANEL-1', local: null });
    const second = JSON.parse((await runCli(['order', 'ORD1000001', '--account', 'second', '--json'], env)).stdout);
    expect(second).toMatchObject({ account: 'second', trxid: 'BATCH-1', local: { line: 2 } });
  }, 400000);
});
