/**
 * An account is its endpoint and key; its name is how accounts.toml calls it now (issue 29,
 * "every identity declared once"). A rename (the same URL and key under a new name) takes the
 * account's rows to the new name at the next start (store/account-identity.ts). A row that moved
 * off an account (failover, nothing created there) records that account in its moves and in
 * left_trxids: those are references to the account too. Left under the old name, failover
 * (dispatch/failover.ts excludes `row.moves[].from`) no longer sees that the renamed account
 * already refused the row and may send it back there, and the result file names one supplier
 * account by two names (`account` the new one, `refusedBy` the old one). So a rename renames every
 * stored reference, in the start's one transaction. A real SQLite store in a temp home.
 */
import { describe, expect, it } from 'vitest';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';
import { reconcileAccounts } from '../../src/store/account-identity.js';
import { batchLayout, resultCells } from '../../src/outbox/results.js';
import type { Runtime } from '../../src/runtime.js';

const OTHER = { origin: 'https://other.example', keyFp: '0123456789abcdef' };

/** Row 0 moved off `default` (its trxid there tu-row-0, refused with nothing created) to `main` as tu-row-0-main. */
async function movedOffDefault(): Promise<Runtime> {
  const rt = await supplierWorld(() => {}, [pubgRow(0)]);
  const row = rt.rows.get('b1', 0)!;
  const moved = rt.rows.move('b1', 0, { owner: rt.owner, now: Date.now() }, {
    fromState: 'pending', from: 'default', fromTrxid: row.trxid!, to: 'main', trxid: 'tu-row-0-main',
    request: JSON.stringify({ ...row.request, trxid: 'tu-row-0-main' }), productId: row.productId!, unitPriceUsd: 1, expectedUsd: 1,
    moves: JSON.stringify([{ from: 'default', trxid: row.trxid, code: 'PRODUCT_DISABLED', why: 'pack withdrawn', at: 0 }]),
    note: 'moved from account default to main',
  });
  expect(moved).toBe(true);
  return rt;
}

describe('a renamed account keeps every reference to it, not only its rows', () => {
  it('a row that left the account before the rename names it by its new name: in its moves, in left_trxids and in the result file', async () => {
    const rt = await movedOffDefault();
    // The next start: `default` (this endpoint and key) is called `backup` now; `main` is another supplier.
    const { renamed, conflicts } = reconcileAccounts(rt.db, [{ name: 'backup', ...rt.identityOf('default') }, { name: 'main', ...OTHER }], Date.now(), 'test');
    expect(conflicts).toEqual([]);
    expect(renamed).toEqual([expect.objectContaining({ from: 'default', to: 'backup' })]);
    const row = rt.rows.get('b1', 0)!;
    expect(row.account).toBe('main');
    // What failover reads to never send a row back to an account that refused it.
    expect(row.moves.map((m) => m.from)).toEqual(['backup']);
    expect(rt.db.prepare('SELECT trxid, account FROM left_trxids').all()).toEqual([{ trxid: 'tu-row-0', account: 'backup' }]);
    // The result file names each supplier account by one name: the one accounts.toml gives it now.
    const layout = batchLayout(rt.batches.get('b1')!, true);
    const cells = resultCells(row, layout, true);
    expect(cells[layout.header.indexOf('account')]).toBe('main');
    expect(cells[layout.header.indexOf('refusedBy')]).toBe('backup (trxid tu-row-0): pack withdrawn');
  });

  it('a rename that a conflict refuses changes no reference', async () => {
    const rt = await movedOffDefault();
    // `main` holds an unsettled row sent to another endpoint: the whole start is refused, the rename too.
    rt.db.prepare(`UPDATE rows SET state = 'resending', sent_origin = ?, sent_key_fp = ? WHERE batch_id = 'b1'`).run('https://third.example', 'ffffffffffffffff');
    const { conflicts } = reconcileAccounts(rt.db, [{ name: 'backup', ...rt.identityOf('default') }, { name: 'main', ...OTHER }], Date.now(), 'test');
    expect(conflicts).toHaveLength(1);
    expect(rt.rows.get('b1', 0)!.moves.map((m) => m.from)).toEqual(['default']);
    expect(rt.db.prepare('SELECT account FROM left_trxids').all()).toEqual([{ account: 'default' }]);
  });
});
