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
