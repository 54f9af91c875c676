/**
 * In the store itself: a file claimed in the window after a restore is marked, in the claim's
 * transaction, with every account that may have bought its rows (store/backup.ts
 * markClaimInRestoreWindow), read from account_identities: one taken out of accounts.toml after
 * the window's start counts although only one account is configured; one taken out before it does
 * not. The start records when an account went (store/account-identity.ts): now in a copy or within
 * the window, its last send on record in a live store. A real SQLite store (test/unit/fake-supplier.ts).
 */
import { describe, expect, it } from 'vitest';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';
import { reconcileAccounts } from '../../src/store/account-identity.js';
import { CLAIM_LOOKUP_PREFIX, RESTORE_WINDOW_KEY, claimLookups, markClaimInRestoreWindow } from '../../src/store/backup.js';

const SECOND = { name: 'second', origin: 'https://second.example', keyFp: '0123456789abcdef' };

describe('the claim mark after a restore names every account that may have bought the rows', () => {
  it('one account configured, another taken out after the window began: marked with both, and the store refuses the batch\'s sends', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const me = { name: 'default', ...rt.identityOf('default') };
    const t0 = Date.now();
    reconcileAccounts(rt.db, [me, SECOND], t0 - 60_000, 'test');
    rt.meta.setJson(RESTORE_WINDOW_KEY, { since: t0 - 30_000, until: t0 + 86_400_000, detail: 'a test restore' });
    // A start without second, within the window: it went now.
    reconcileAccounts(rt.db, [me], t0, 'test');
    expect(rt.db.prepare('SELECT removed_at AS at FROM account_identities WHERE name = ?').get('second')).toEqual({ at: t0 });
    const marked = rt.db.transaction(() => markClaimInRestoreWindow(rt.db, ['default'], { batchId: 'b1', sourceName: 'rd.csv', now: t0 }))();
    expect(marked).toBe(true);
    expect(claimLookups(rt.db)[0]!.accounts).toEqual(['default', 'second']);
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now: t0 }, t0 + 1_000)).toBe(false);
    rt.meta.delete(CLAIM_LOOKUP_PREFIX + 'b1');
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now: t0 }, t0 + 1_000)).toBe(true);
  });

  it('an account taken out before the window began is not named, and with one account left nothing is marked', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const me = { name: 'default', ...rt.identityOf('default') };
    const t0 = Date.now();
    reconcileAccounts(rt.db, [me, SECOND], t0 - 86_400_000, 'test');
    // A live store (no restore yet): second never sent anything, so it bought nothing after its first start.
    reconcileAccounts(rt.db, [me], t0 - 3_600_000, 'test');
    expect(rt.db.prepare('SELECT removed_at AS at FROM account_identities WHERE name = ?').get('second')).toEqual({ at: t0 - 86_400_000 });
    rt.meta.setJson(RESTORE_WINDOW_KEY, { since: t0 - 60_000, until: t0 + 86_400_000, detail: 'a test restore' });
    reconcileAccounts(rt.db, [me], t0, 'test');
    const marked = rt.db.transaction(() => markClaimInRestoreWindow(rt.db, ['default'], { batchId: 'b1', sourceName: 'rd.csv', now: t0 }))();
    expect(marked).toBe(false);
    expect(claimLookups(rt.db)).toEqual([]);
  });

  it('in a live store an account that went is dated by its last send on record', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const me = { name: 'default', ...rt.identityOf('default') };
    const t0 = Date.now();
    reconcileAccounts(rt.db, [me, SECOND], t0 - 86_400_000, 'test');
    rt.db.prepare(`UPDATE rows SET account = 'second', trxid = 'tu-row-0-second', last_sent_at = ? WHERE batch_id = 'b1'`).run(t0 - 7_200_000);
    reconcileAccounts(rt.db, [me], t0, 'test');
    expect(rt.db.prepare('SELECT removed_at AS at FROM account_identities WHERE name = ?').get('second')).toEqual({ at: t0 - 7_200_000 });
  });
});
