/**
 * Issue 22 adversarial review: `topup review resolve BATCH:LINE --charged ORDER_ID` for a row of
 * the account `second`. Order ids are each account's own numbering (both suppliers have an
 * ORD1000001), but the resolve (ops/review.ts chargedFacts) checks "held by another row" with
 * RowStore.placedBy(orderId), over every account, and asks the API about the id through
 * rt.account, the FIRST account. So the operator who names the row's real order on `second` is
 * refused because a row of `main` holds the same id (and were it not held, main's order of that id
 * would be read and recorded as this row's: another account's order, its codes). Real CLI.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli, TEST_KEY } from '../e2e/harness.js';
import { ordersOf, twoAccounts } from '../accounts/two-sandboxes.js';

describe('review resolve --charged for a row of the second account', () => {
  it('records the order of `second` named by the operator, whatever main numbers the same', async () => {
    const { home, a, b, env } = await twoAccounts({ env: { TOPUP_REVIEW_AFTER_MS: '1500', TOPUP_REQUEST_TIMEOUT_MS: '1000' } });
    // main's ORD1000001, held by a Mobile Legends row (only main sells it).
    const early = join(home.dir, 'early.csv');
    writeFileSync(early, csv([['pid', 'userId', 'zoneId'], ['ML-86', '123456789', '1234']]));
    expect((await runCli(['submit', early, '--json'], env, { timeoutMs: 120_000 })).code).toBe(0);
    expect(ordersOf(a).map((o) => o.orderId)).toEqual(['ORD1000001']);

    // A PUBG row on `second` whose sends all fail (500): no answer, history shows nothing: review.
    b.admin.setFaults({ error5xxBeforeShare: 1 });
    const late = join(home.dir, 'late.csv');
    writeFileSync(late, csv([['pid', 'userId'], ['PUBG-60', '5123456705']]));
    await runCli(['submit', late, '--json'], env, { timeoutMs: 120_000 });
    const [row] = readResult(home, 'late');
    expect(row!.status).toBe('review');
    expect(row!.account).toBe('second');

    // The second supplier's support: "it went through after all, order ORD1000001" (its own first order).
    b.admin.setFaults({ error5xxBeforeShare: 0 });
    const res = await fetch(`${b.url}/orders`, {
      method: 'POST',
      headers: { 'X-API-Key': TEST_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ pid: 'B-PUBG-60', userId: '5123456705', trxid: row!.trxid }),
    });
    const order = (await res.json()) as { orderId: string };
    expect(order.orderId).toBe('ORD1000001');

    const list = await runCli(['review', '--json'], env);
    const item = (JSON.parse(list.stdout) as { batchId: string; line: number }[])[0]!;
    const r = await runCli(['review', 'resolve', `${item.batchId}:${item.line}`, '--charged', 'ORD1000001', '--by', 'ops'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/now (processing|completed) \(order ORD1000001\)/);
  }, 120_000);
});
