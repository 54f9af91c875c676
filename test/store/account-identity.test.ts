/**
 * Invariant an-account-is-its-endpoint-and-key (src/store/invariants.ts), in the store itself: the
 * intent to send refuses a row not pending whose send record names another endpoint or key; a row
 * `pending` (nothing created) may go anywhere; the start's reconcile counts every unsettled state
 * (review included) and no ended row; a move to another account forgets the record. A real SQLite
 * store in a temp home (test/unit/fake-supplier.ts).
 */
import { describe, expect, it } from 'vitest';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';
import { reconcileAccounts, UNSETTLED_STATES } from '../../src/store/account-identity.js';
import { ROW_STATES } from '../../src/store/row-states.js';
import { ACCOUNT_META_KEYS, holdKey, learnedKey, lowBalanceFlag, pauseKey } from '../../src/store/account-keys.js';

const OTHER = { origin: 'https://other.example', keyFp: '0123456789abcdef' };

describe('the store holds a row to the account identity it was sent to', () => {
  it('the intent refuses a resend to another endpoint or key, allows the same one, and a pending row anywhere', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const me = rt.identityOf('default');
    const send = () => rt.rows.markSending('b1', 0, { owner: rt.owner, now: Date.now() }, Date.now() + 1_000, { trxid: 'tu-row-0', account: 'default', ...me });
    rt.db.prepare(`UPDATE rows SET state = 'resending', sent_origin = ?, sent_key_fp = ? WHERE batch_id = 'b1'`).run(OTHER.origin, OTHER.keyFp);
    expect(send()).toBe(false);
    rt.db.prepare(`UPDATE rows SET sent_origin = ?, sent_key_fp = ? WHERE batch_id = 'b1'`).run(me.origin, 'ffffffffffffffff');
    expect(send()).toBe(false); // the same host, another key
    rt.db.prepare(`UPDATE rows SET sent_origin = ?, sent_key_fp = ? WHERE batch_id = 'b1'`).run(me.origin, me.keyFp);
    expect(send()).toBe(true);
    rt.db.prepare(`UPDATE rows SET state = 'pending', sent_origin = ?, sent_key_fp = ? WHERE batch_id = 'b1'`).run(OTHER.origin, OTHER.keyFp);
    expect(send()).toBe(true);
    expect(rt.db.prepare(`SELECT sent_origin AS origin, sent_key_fp AS keyFp FROM rows`).get()).toEqual(me);
  });

  it('the start finds every unsettled state sent elsewhere (review too), never an ended or unsent row; a conflict changes nothing', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const me = { name: 'default', ...rt.identityOf('default') };
    for (const state of ROW_STATES) {
      rt.db.prepare(`UPDATE rows SET state = ?, sent_origin = ?, sent_key_fp = ? WHERE batch_id = 'b1'`).run(state, OTHER.origin, OTHER.keyFp);
      const { conflicts } = reconcileAccounts(rt.db, [me], Date.now(), 'test');
      expect(conflicts.length, state).toBe(UNSETTLED_STATES.includes(state) ? 1 : 0);
      if (conflicts.length > 0) expect(conflicts[0]).toMatchObject({ account: 'default', rows: 1, trxids: ['tu-row-0'], sentTo: [OTHER] });
    }
    expect(UNSETTLED_STATES).toEqual(expect.arrayContaining(['sending', 'resending', 'verifying', 'searching', 'processing', 'unseen', 'review']));
  });

  it('a move to another account (nothing created) forgets where the row was sent', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    rt.db.prepare(`UPDATE rows SET sent_origin = ?, sent_key_fp = ? WHERE batch_id = 'b1'`).run(OTHER.origin, OTHER.keyFp);
    rt.db.prepare(`UPDATE rows SET account = 'second', trxid = 'tu-row-0-second' WHERE batch_id = 'b1'`).run();
    expect(rt.db.prepare(`SELECT account, sent_origin, sent_key_fp FROM rows`).get()).toEqual({ account: 'second', sent_origin: null, sent_key_fp: null });
    // A change of account keeping the trxid is no move: only a recorded rename may do it.
    expect(() => rt.db.prepare(`UPDATE rows SET account = 'third' WHERE batch_id = 'b1'`).run()).toThrow(/recorded rename/);
  });
});

describe('a rename carries every per-account record (store/account-keys.ts)', () => {
  it('`default` renamed `main` (a home gaining accounts.toml, same URL and key): its bare keys become main\'s, the tables follow, and what `main` held before is replaced or merged', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const me = rt.identityOf('default');
    reconcileAccounts(rt.db, [{ name: 'default', ...me }], Date.now(), 'test');
    const set = rt.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
    const pause = { kind: 'maintenance', code: 'MAINTENANCE', detail: 'x', since: 1_000 };
    set.run(pauseKey('default'), JSON.stringify(pause));
    set.run(holdKey('default'), '123');
    set.run(lowBalanceFlag('default'), '2026-11-28T00:00:00.000Z');
    // Left by an earlier account called `main` (another endpoint, removed since): not this account's.
    set.run(learnedKey('main'), '{"stale":true}');
    set.run(pauseKey('main'), '{"stale":true}');
    rt.db.prepare('INSERT INTO api_calls (t, account) VALUES (1, ?), (2, ?)').run('default', 'default');
    const minute = rt.db.prepare('INSERT INTO rate_minutes (account, minute, calls, orders, order_wait_ms, order_wait_max_ms) VALUES (?, 7, ?, 1, 10, ?)');
    minute.run('default', 3, 10);
    minute.run('main', 2, 40);
    rt.db.prepare('INSERT INTO balance_readings (account, at, usd, rise) VALUES (?, 5, 10, NULL)').run('default');

    const { renamed, conflicts } = reconcileAccounts(rt.db, [{ name: 'main', ...me }], Date.now(), 'test');
    expect(conflicts).toEqual([]);
    expect(renamed).toEqual([{ from: 'default', to: 'main', rows: 1 }]);
    const meta = (key: string) => (rt.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
    expect(JSON.parse(meta(pauseKey('main'))!)).toEqual(pause);
    expect(meta(holdKey('main'))).toBe('123');
    expect(meta(lowBalanceFlag('main'))).toBe('2026-11-28T00:00:00.000Z');
    expect(meta(learnedKey('main'))).toBeUndefined(); // `default` had learned nothing: the stale record is not kept
    for (const keyOf of ACCOUNT_META_KEYS) expect(meta(keyOf('default')), keyOf('default')).toBeUndefined();
    expect(rt.db.prepare("SELECT count(*) AS n FROM api_calls WHERE account = 'main'").get()).toEqual({ n: 2 });
    expect(rt.db.prepare('SELECT account, calls, orders, order_wait_ms AS w, order_wait_max_ms AS m FROM rate_minutes').all()).toEqual([{ account: 'main', calls: 5, orders: 2, w: 20, m: 40 }]);
    expect(rt.db.prepare('SELECT account FROM balance_readings').all()).toEqual([{ account: 'main' }]);
    expect(rt.db.prepare('SELECT account FROM rows').all()).toEqual([{ account: 'main' }]);
  });
});
