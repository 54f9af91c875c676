/**
 * In the store itself: an API order accepted in the window after a restore is marked in the
 * acceptance's transaction (store/backup.ts markOrderInRestoreWindow), and the store refuses that
 * row's send intent while the mark is there, whatever process asks; the batch's other rows are not
 * held (per order, not per batch: the day's API batch takes orders all day). Without a window, or
 * with one account known, nothing is marked. A real SQLite store (test/unit/fake-supplier.ts).
 */
import { describe, expect, it } from 'vitest';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';
import { reconcileAccounts } from '../../src/store/account-identity.js';
import { ORDER_LOOKUP_PREFIX, RESTORE_WINDOW_KEY, markClaimInRestoreWindow, markOrderInRestoreWindow, orderLookups } from '../../src/store/backup.js';
import { closeRestoreWindow } from '../../src/ops/restore-window.js';

const SECOND = { name: 'second', origin: 'https://second.example', keyFp: '0123456789abcdef' };

describe('the mark of an API order accepted after a restore', () => {
  it('holds that row\'s send in the store until it is removed; the batch\'s other rows go on', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0), pubgRow(1)]);
    const me = { name: 'default', ...rt.identityOf('default') };
    const t0 = Date.now();
    reconcileAccounts(rt.db, [me, SECOND], t0 - 60_000, 'test');
    rt.meta.setJson(RESTORE_WINDOW_KEY, { since: t0 - 30_000, until: t0 + 86_400_000, detail: 'a test restore' });
    const marked = rt.db.transaction(() => markOrderInRestoreWindow(rt.db, ['default', 'second'], { batchId: 'b1', idx: 0, trxid: 'SHOP-X', now: t0 }))();
    expect(marked).toBe(true);
    expect(orderLookups(rt.db)).toEqual([{ batchId: 'b1', idx: 0, trxid: 'SHOP-X', at: t0, since: t0 - 30_000, accounts: ['default', 'second'] }]);
    const a = { owner: rt.owner, now: t0 };
    expect(rt.rows.markSending('b1', 0, a, t0 + 1_000)).toBe(false);
    expect(rt.rows.markSending('b1', 1, a, t0 + 1_000)).toBe(true);
    rt.meta.delete(`${ORDER_LOOKUP_PREFIX}b1:0`);
    expect(rt.rows.markSending('b1', 0, a, t0 + 1_000)).toBe(true);
  });

  it('is not written without an open window, nor with one account known', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const me = { name: 'default', ...rt.identityOf('default') };
    const t0 = Date.now();
    reconcileAccounts(rt.db, [me], t0 - 60_000, 'test');
    expect(markOrderInRestoreWindow(rt.db, ['default'], { batchId: 'b1', idx: 0, trxid: 'SHOP-X', now: t0 })).toBe(false);
    rt.meta.setJson(RESTORE_WINDOW_KEY, { since: t0 - 30_000, until: t0 + 86_400_000, detail: 'a test restore' });
    expect(markOrderInRestoreWindow(rt.db, ['default'], { batchId: 'b1', idx: 0, trxid: 'SHOP-X', now: t0 })).toBe(false);
    // The window closed: nothing either, even with two accounts.
    reconcileAccounts(rt.db, [me, SECOND], t0, 'test');
    rt.meta.setJson(RESTORE_WINDOW_KEY, { since: t0 - 30_000, until: t0 - 1, detail: 'a test restore' });
    expect(markOrderInRestoreWindow(rt.db, ['default', 'second'], { batchId: 'b1', idx: 0, trxid: 'SHOP-X', now: t0 })).toBe(false);
    expect(orderLookups(rt.db)).toEqual([]);
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now: t0 }, t0 + 1_000)).toBe(true);
  });

  it('closed early by the operator: files are no longer looked up, API orders still are until the window ends (an adversarial review)', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const me = { name: 'default', ...rt.identityOf('default') };
    const t0 = Date.now();
    reconcileAccounts(rt.db, [me, SECOND], t0 - 60_000, 'test');
    rt.meta.setJson(RESTORE_WINDOW_KEY, { since: t0 - 30_000, until: t0 + 86_400_000, detail: 'a test restore' });
    closeRestoreWindow(rt.db, ['default', 'second'], t0, { force: false, actor: 'test' });
    expect(rt.db.transaction(() => markClaimInRestoreWindow(rt.db, ['default', 'second'], { batchId: 'b2', sourceName: 'f.csv', now: t0 + 1 }))()).toBe(false);
    expect(rt.db.transaction(() => markOrderInRestoreWindow(rt.db, ['default', 'second'], { batchId: 'b1', idx: 0, trxid: 'SHOP-Y', now: t0 + 1 }))()).toBe(true);
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now: t0 }, t0 + 1_000)).toBe(false);
  });
});
