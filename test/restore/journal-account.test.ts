/**
 * Issue 32 (lead's note s35, still open): the order API's journal did not record the account an
 * order was routed to. An order accepted on `second` (the cheapest then) and bought there under
 * its own trxid, the store lost, `second` dearer since: recovered from the journal, the order was
 * placed by today's routing on `main`, and the restore lookup found its trxid "bought already on
 * another account" and sent it to a person, for an order that was simply bought where it was sent.
 *
 * Now each journal line names the account (`account`), and a recovered order goes back there when
 * that account is still configured and sells the pack: the lookup finds its purchase as its own and
 * settles it (completed, the shop's GET shows it), nothing bought again, nobody asked.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const TOKEN = 'restore-journal-account-token-0123456789';

describe('the order API journal records the account', () => {
  it('a recovered order is placed on the account it was bought on and settled from it', async () => {
    // routing cheapest (the default): second is 10 % cheaper.
    const { home, a, b, env: base } = await twoAccounts('max_queue_delay = "2s"');
    const env: NodeJS.ProcessEnv = { ...base, TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' };
    const first = await start(env);
    expect((await first.call('POST', '/api/v1/orders', { body: { trxid: 'SHOP-J1', pid: 'PUBG-60', userId: '5123462001', queue: true } })).status).toBe(202);
    await waitFor('bought on second', () => ledgerTrxids(b).includes('SHOP-J1'), 60_000, 100);
    await waitFor('completed', () => storedRows(home).some((r) => r.trxid === 'SHOP-J1' && r.state === 'completed'), 60_000, 100);
    await first.daemon.stop();

    // second dearer now: today's routing would send the order to main.
    b.admin.setProduct({ id: 'B-PUBG-60', price: 50 });
    for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
    const second = await start(env);
    try {
      await waitFor('reconciled', () => /sending starts now/i.test(second.daemon.output()), 90_000, 100);
      await waitFor('the recovered order at an end', () => storedRows(home).some((r) => r.trxid === 'SHOP-J1' && ['completed', 'review', 'processing'].includes(r.state)), 60_000, 100);
      await new Promise((r) => setTimeout(r, 2000));
    } finally {
      await second.daemon.stop();
    }
    const row = storedRows(home).filter((r) => r.trxid === 'SHOP-J1');
    expect(row.map((r) => [r.account, r.state])).toEqual([['second', 'completed']]);
    expect(ledgerTrxids(a)).toEqual([]);
    expect(ledgerTrxids(b).filter((t) => t.startsWith('SHOP-J1'))).toEqual(['SHOP-J1']);
    const lines = readdirSync(join(home.jobs, 'api-journal')).flatMap((f) => readFileSync(join(home.jobs, 'api-journal', f), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { trxid: string; account?: string }));
    expect(lines.filter((l) => l.trxid === 'SHOP-J1')[0]?.account).toBe('second');
  }, 240_000);
});
