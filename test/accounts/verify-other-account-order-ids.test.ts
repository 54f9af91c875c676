/**
 * Issue 22 adversarial review: order ids are each account's own numbering (both sandboxes, like
 * two independent suppliers, number ORD1000001, ORD1000002 …). The history check of a row whose
 * resend was refused after a lost answer (poll/verify.ts) may read "nothing was charged" only when
 * the page of history certainly reaches back before the row's first send; one proof it takes is
 * "an order of ours on the page that we placed before the first attempt" (reachesBack, through
 * RowStore.firstSentAtOf(orderId)). That lookup ignores the account: an order of `second`'s
 * history is taken for the row of `main` that holds the same id, placed earlier. So a page that
 * does NOT reach back is read as if it did, and a row that WAS charged is reported rejected
 * ("order history checked: no order was placed"): a charge read as no charge, which a reseller
 * then buys again. Real CLI (`topup submit`), two real sandboxes, real SQLite.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli, startCli, TEST_KEY, waitFor } from '../e2e/harness.js';
import { ordersOf, twoAccounts } from './two-sandboxes.js';

describe('history check with order ids that collide across accounts', () => {
  // The control (no rows on `main`) passes on the code under review: the check goes to review.
  for (const mainRows of [true, false]) {
    it(`a row charged on \`second\` whose order is deeper than one page of history is never reported "not charged" (${mainRows ? 'main holds ORD1000001..3 from earlier rows' : 'control: no rows on main'})`, async () => {
      const { home, b, env } = await twoAccounts({ b: { rateLimits: [{ limit: 100_000, windowMs: 1_000 }] } });
      // 1. Three Mobile Legends rows (only `main` sells it): main's ORD1000001..ORD1000003, placed first.
      if (mainRows) {
        const early = join(home.dir, 'early.csv');
        writeFileSync(early, csv([['pid', 'userId', 'zoneId'], ['ML-86', '123456789', '1234'], ['ML-86', '123456790', '1234'], ['ML-86', '123456791', '1234']]));
        const r1 = await runCli(['submit', early, '--json'], env, { timeoutMs: 120_000 });
        expect(r1.code, r1.stderr.slice(-2000)).toBe(0);
        expect(readResult(home, 'early').every((x) => x.account === 'main' && /^ORD100000[123]$/.test(x.orderId ?? x.order_id ?? ''))).toBe(true);
      }

      // 2. One PUBG row, placed on `second` (cheaper). Its first send creates the order, the answer is lost.
      b.admin.setFaults({ lostResponseShare: 1 });
      const late = join(home.dir, 'late.csv');
      writeFileSync(late, csv([['pid', 'userId'], ['PUBG-60', '5123456704']]));
      const submit = startCli(['submit', late, '--json'], { ...env, TOPUP_REQUEST_TIMEOUT_MS: '15000' });
      try {
        await waitFor('the order on second', () => ordersOf(b).length === 1, 30_000, 5);
        // The supplier now validates before it looks at the trxid, and the pack is disabled: the
        // resend is refused (400), so the row goes to the history check (verifying).
        b.admin.setFaults({ lostResponseShare: 0, validateBeforeIdempotency: true });
        b.admin.setProduct({ id: 'B-PUBG-60', status: 'inactive' });
        // Other clients of the same account (its panel, another tool) place 200 orders meanwhile:
        // the row's order is now deeper than the one page (200) the history check reads.
        for (let i = 0; i < 200; i++) {
          const res = await fetch(`${b.url}/orders`, {
            method: 'POST',
            headers: { 'X-API-Key': TEST_KEY, 'content-type': 'application/json' },
            body: JSON.stringify({ pid: 'B-PUBG-325', userId: String(5_200_000_000 + i), trxid: `panel-${i}` }),
          });
          expect(res.status).toBe(200);
        }
        await new Promise<void>((resolve) => submit.once('exit', () => resolve()));
      } finally {
        if (submit.exitCode === null) submit.kill('SIGKILL');
      }
      const charged = ordersOf(b).filter((o) => String(o.userId) === '5123456704');
      expect(charged).toHaveLength(1);
      const [row] = readResult(home, 'late');
      // The order exists (charged); history does not reach back to it: review, or found, never rejected.
      expect(row!.status, `${row!.status}: ${row!.error}`).not.toBe('rejected');
    }, 120_000);
  }
});
