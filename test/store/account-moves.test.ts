/**
 * Invariant one-account-at-a-time (src/store/invariants.ts): a row changes account only where it
 * is proven that nothing was created on the one it leaves, never with an order, always with a new
 * trxid; the trigger rows_account_moves holds it whatever writes the row, and the intent commits
 * only for the trxid and account the sender read. Real SQLite store in a temp home.
 */
import { describe, expect, it } from 'vitest';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';
import type { Runtime } from '../../src/runtime.js';

const move = (rt: Runtime, fromState: 'pending' | 'sending', to = 'second', trxid = 'tu-row-0-second') => {
  const row = rt.rows.get('b1', 0)!;
  return rt.rows.move('b1', 0, { owner: rt.owner, now: Date.now() }, {
    fromState, from: row.account, fromTrxid: row.trxid!, to, trxid, request: JSON.stringify({ ...row.request, trxid }),
    productId: row.productId!, unitPriceUsd: 1, expectedUsd: 1, moves: JSON.stringify([{ from: row.account, trxid: row.trxid, code: 'X', why: 'x', at: 0 }]), note: 'moved',
  });
};

describe('a row is on one account at a time, and leaves one only on proof', () => {
  it('the trigger refuses a change of account from a state where an order may exist, with an order, or without a new trxid', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const raw = (sql: string) => () => rt.db.prepare(sql).run();
    for (const state of ['resending', 'searching', 'processing', 'unseen', 'review', 'completed', 'cancelled']) {
      rt.db.prepare(`UPDATE rows SET state = ? WHERE batch_id = 'b1'`).run(state);
      expect(raw(`UPDATE rows SET account = 'second', trxid = 'tu-new', state = 'pending' WHERE batch_id = 'b1'`), state).toThrow(/changes account only when nothing was created/);
    }
    rt.db.prepare(`UPDATE rows SET state = 'pending' WHERE batch_id = 'b1'`).run();
    expect(raw(`UPDATE rows SET account = 'second' WHERE batch_id = 'b1'`)).toThrow(/with a new trxid/);
    rt.db.prepare(`UPDATE rows SET state = 'sending', order_id = 'ORD-1' WHERE batch_id = 'b1'`).run();
    expect(raw(`UPDATE rows SET account = 'second', trxid = 'tu-new', state = 'pending' WHERE batch_id = 'b1'`)).toThrow(/changes account only/);
    expect(rt.rows.get('b1', 0)).toMatchObject({ account: 'default', trxid: 'tu-row-0' });
  });

  it('a row in doubt (resending, searching) leaves its account only while a restore lookup holds it (nothing of it can be sent), and only by that lookup\'s move', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const raw = () => rt.db.prepare(`UPDATE rows SET account = 'second', trxid = 'tu-row-0-second', state = 'pending' WHERE batch_id = 'b1'`).run();
    const restoredMove = (fromState: 'resending' | 'searching') => rt.rows.restoredMove('b1', 0, { owner: rt.owner, now: Date.now() }, {
      fromState, from: 'default', fromTrxid: 'tu-row-0', to: 'second', trxid: 'tu-row-0-second', request: '{}', productId: 'PUBG-60', unitPriceUsd: 1, expectedUsd: 1, moves: '[]', note: 'moved after a restore',
    });
    // Back on `default` in `state` (as pending first: the trigger holds the row in doubt itself).
    const reset = (state: string) => {
      rt.db.prepare('DELETE FROM left_trxids').run();
      rt.db.prepare(`UPDATE rows SET account = 'default', trxid = 'tu-row-0' WHERE batch_id = 'b1' AND account <> 'default'`).run();
      rt.db.prepare('DELETE FROM left_trxids').run();
      rt.db.prepare(`UPDATE rows SET state = ? WHERE batch_id = 'b1'`).run(state);
    };
    for (const state of ['resending', 'searching'] as const) {
      reset(state);
      // No lookup holds it: the sender's world, where a refusal is not proof.
      expect(raw, state).toThrow(/changes account only when nothing was created/);
      expect(() => restoredMove(state), state).toThrow(/changes account only when nothing was created/);
      // The restore marker, its batch's claim mark, its own order mark: each holds it.
      for (const key of ['restore.reconcile', 'restore.claim:b1', 'restore.order:b1:0']) {
        reset(state);
        rt.meta.set(key, '{}');
        expect(restoredMove(state), `${state} ${key}`).toBe(true);
        expect(rt.rows.get('b1', 0), `${state} ${key}`).toMatchObject({ state: 'pending', account: 'second', trxid: 'tu-row-0-second' });
        rt.meta.delete(key);
      }
      // Another row's order mark holds nothing of this one.
      reset(state);
      rt.meta.set('restore.order:b1:1', '{}');
      expect(() => restoredMove(state), state).toThrow(/changes account only when nothing was created/);
      rt.meta.delete('restore.order:b1:1');
    }
  });

  it('the store moves a pending row, or a sending one whose first send its sender saw refused, with a new trxid and the refusal recorded', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    expect(move(rt, 'pending')).toBe(true);
    expect(rt.rows.get('b1', 0)).toMatchObject({ state: 'pending', account: 'second', trxid: 'tu-row-0-second', moves: [{ from: 'default', trxid: 'tu-row-0' }] });
    rt.db.prepare(`UPDATE rows SET state = 'sending' WHERE batch_id = 'b1'`).run();
    expect(move(rt, 'pending', 'third', 'tu-row-0-third')).toBe(false); // a `pending` mover never takes a row another send took
    expect(move(rt, 'sending', 'third', 'tu-row-0-third')).toBe(true);
    expect(rt.rows.get('b1', 0)).toMatchObject({ state: 'pending', account: 'third' });
  });

  it('the intent of a send built for the account a row left is refused: the request never leaves', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0)]);
    const read = rt.rows.get('b1', 0)!;
    expect(move(rt, 'pending')).toBe(true);
    const now = Date.now();
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now }, now + 1_000, { trxid: read.trxid!, account: read.account, ...rt.identityOf(read.account) })).toBe(false);
    expect(rt.rows.get('b1', 0)!.state).toBe('pending');
    expect(rt.rows.markSending('b1', 0, { owner: rt.owner, now }, now + 1_000, { trxid: 'tu-row-0-second', account: 'second', origin: 'http://127.0.0.1:1', keyFp: '0000000000000000' })).toBe(true);
  });
});

describe('what a move leaves behind', () => {
  it('a row pinned to its account by the file never changes account, whatever writes it', async () => {
    const rt = await supplierWorld(() => {}, [{ ...pubgRow(0), pinned: true }]);
    expect(() => move(rt, 'pending')).toThrow(/never a row pinned/);
    expect(rt.rows.get('b1', 0)).toMatchObject({ account: 'default', trxid: 'tu-row-0', pinned: true });
  });

  it('the trxid a row left on an account stays used: a new row with it is refused as used, and no move may take it', async () => {
    const rt = await supplierWorld(() => {}, [pubgRow(0), pubgRow(1)]);
    expect(move(rt, 'pending')).toBe(true);
    expect(rt.rows.byTrxid('tu-row-0')).toEqual({ batchId: 'b1', idx: 0 });
    rt.rows.insertAll('b1', [{ ...pubgRow(2), request: { ...pubgRow(2).request!, trxid: 'tu-row-0' } }], Date.now());
    expect(rt.rows.get('b1', 2)).toMatchObject({ state: 'invalid', trxid: null });
    expect(rt.rows.get('b1', 2)!.error).toMatch(/tu-row-0 was already used by batch b1/);
    // Row 1 moving onto row 0's old trxid: refused by the store.
    const r1 = rt.rows.get('b1', 1)!;
    expect(() => rt.rows.move('b1', 1, { owner: rt.owner, now: Date.now() }, {
      fromState: 'pending', from: r1.account, fromTrxid: r1.trxid!, to: 'second', trxid: 'tu-row-0', request: '{}', productId: 'p', unitPriceUsd: 1, expectedUsd: 1, moves: '[]', note: 'n',
    })).toThrow(/rows.trxid/);
  });
});
