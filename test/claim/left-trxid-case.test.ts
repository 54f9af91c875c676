/**
 * Issue 22, adversarial review round 2: a trxid a row left on an account stays used
 * (left_trxids), but only in the exact letter case. The loader itself treats trxids as
 * case-insensitive inside one file (intake/validate.ts folds them: "shop-1001" on line 3 is
 * "already used on line 2" when line 2 has "SHOP-1001"), while across batches RowReads.byTrxid and
 * left_trxids compare them case-sensitively. So an edited re-drop that writes the moved row's trxid
 * in lower case is accepted, placed on the account the row left (the cheaper one, back from
 * maintenance) and bought there again. Real CLI, two real sandboxes.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli } from '../e2e/harness.js';
import { ordersOf, twoAccounts } from '../accounts/two-sandboxes.js';

describe('left trxids and letter case', () => {
  it('a re-drop writing a moved row\'s trxid in another case is not bought again (reported as that purchase)', async () => {
    const { home, a, b, env } = await twoAccounts({ extra: 'max_queue_delay = "1s"' });
    // second (the cheaper) is in maintenance: the row placed there moves to main with SHOP-1001-main.
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const f1 = join(home.dir, 'shop.csv');
    writeFileSync(f1, csv([['trxid', 'pid', 'userId'], ['SHOP-1001', 'PUBG-60', '5123456721']]));
    const r1 = await runCli(['submit', f1, '--json'], env, { timeoutMs: 60_000 });
    expect(r1.code, r1.stderr.slice(-1500)).toBe(0);
    expect(readResult(home, 'shop').map((x) => [x.status, x.account])).toEqual([['completed', 'main']]);
    expect(ordersOf(a).map((o) => o.trxid)).toEqual(['SHOP-1001-main']);

    // Maintenance over; the shop system exports the same order again, its id in lower case.
    b.admin.setFaults({ maintenance: null });
    const f2 = join(home.dir, 'shop-again.csv');
    writeFileSync(f2, csv([['trxid', 'pid', 'userId'], ['shop-1001', 'PUBG-60', '5123456721']]));
    await runCli(['submit', f2, '--json'], env, { timeoutMs: 60_000 });
    const [row] = readResult(home, 'shop-again');
    // Not bought again: reported as the purchase it is (skipped, TOPUP_BOUGHT_BEFORE, since issue 29),
    // or refused as a used trxid where its holder bought nothing.
    expect(`${row!.status}: ${row!.error}`).toMatch(/^skipped: already bought under trxid shop-1001: .* bought it as order \S+ \(completed\)|^invalid: .*already used/);
    expect([...ordersOf(a), ...ordersOf(b)]).toHaveLength(1);
  }, 150_000);
});
