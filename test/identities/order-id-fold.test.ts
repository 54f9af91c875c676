/**
 * "The same order id" is one definition (issue 29, "every identity declared once";
 * src/kernel/identity.ts foldOrderId, and in SQL orderIdFoldSql(x), the registered order_id_fold()).
 *
 * Before it, the store's look-up of an order another row may hold (store/row-lookups.ts placedBy)
 * compared lower(trim(order_id)): ASCII letters only, the ASCII space only; the client's check that
 * an answer to GET /orders/:id is about the order asked for compared trim().toLowerCase(): every
 * letter, every space. So `ord-ä7` (or `ORD-77` followed by an ideographic space) was the same order
 * to the supplier and the client, another to the store: `topup review resolve --charged ord-ä7
 * --force`, with the API not confirming it, recorded on a review row the order another row held as
 * `ORD-Ä7` — one charge, two rows completed, the review row's customer never served.
 *
 * Fails on main: the resolve is not refused (placedBy finds no holder); the SQL/TS agreement test
 * fails at once (no order_id_fold on the connection).
 */
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { foldOrderId, orderIdFoldSql, sameOrderId } from '../../src/kernel/identity.js';
import { resolveReview } from '../../src/ops/review.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { openDb, type Db } from '../../src/store/db.js';
import { Listing } from '../../src/store/listing.js';
import { tempHome, type TempHome } from '../e2e/harness.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

let homes: TempHome[] = [];
let dbs: Db[] = [];
afterEach(() => {
  for (const d of dbs.splice(0)) d.close();
  for (const h of homes.splice(0)) h.remove();
});

function db(): Db {
  const h = tempHome('order-id-fold-');
  homes.push(h);
  const d = openDb(join(h.dir, 'topup.db'));
  dbs.push(d);
  return d;
}

const sqlFold = (d: Db, s: string): string => (d.prepare(`SELECT ${orderIdFoldSql('?')} AS f`).get(s) as { f: string }).f;

/** Odd ids: letter case in every script, spaces of every kind around them, full-width forms, digits with leading zeros. */
const ODD = [
  'ORD-Ä7', 'ord-ä7', 'ORD-77', 'ord-77 ', ' ORD-77', 'ORD-77\u00a0', 'ORD-77\u3000', '\tORD-77', 'ORD-77\u2007',
  'ＯＲＤ-７７', 'ΣΊΣΥΦΟΣ-1', 'σίσυφος-1', 'STRASSE-9', 'straße-9', 'İD-1', 'i̇d-1', 'e\u0301-5', 'é-5',
  '00123', '0123', '123', '٠١٢٣', '０１２３', 'ORD 77', 'ORD77', '',
];

describe('the order id fold: the TypeScript function and its SQL expression', () => {
  it('agree on odd ids (case, spaces, unicode, digits with leading zeros), on a connection the store opens', () => {
    const d = db();
    for (const id of ODD) expect({ id, sql: sqlFold(d, id) }).toEqual({ id, sql: foldOrderId(id) });
    // And compare the same: every pair the one calls the same, the other does too.
    for (const a of ODD) for (const b of ODD) {
      const inSql = (d.prepare(`SELECT ${orderIdFoldSql('?')} = ${orderIdFoldSql('?')} AS same`).get(a, b) as { same: number }).same === 1;
      expect({ a, b, same: inSql }).toEqual({ a, b, same: sameOrderId(a, b) });
    }
    expect(sqlFold(d, null as unknown as string)).toBeNull();
  });

  it('agree on arbitrary text (fast-check: every script, graphemes, full-width forms, spaces)', () => {
    const d = db();
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 10 }),
      fc.string({ unit: fc.constantFrom('A', 'a', 'Ä', 'ä', 'ß', 'İ', 'ı', 'Σ', 'ς', '0', '7', '\u00a0', '\u3000', ' ', '\t', 'Ｏ', '-', '\u0301'), maxLength: 10 }),
    );
    fc.assert(fc.property(text, (s) => sqlFold(d, s) === foldOrderId(s)), { numRuns: 500 });
  });

  it('calls the same what a person may type for one order, and keeps apart what are two orders', () => {
    expect(sameOrderId('ORD-Ä7', 'ord-ä7')).toBe(true);
    expect(sameOrderId('ORD-77', 'ORD-77\u3000')).toBe(true);
    expect(sameOrderId('ORD-77', '\u00a0ord-77\t')).toBe(true);
    expect(sameOrderId('ORD-77', 'ＯＲＤ-７７')).toBe(true);
    // Leading zeros and spaces inside an id are the supplier's numbering: two orders.
    expect(sameOrderId('00123', '123')).toBe(false);
    expect(sameOrderId('0123', '00123')).toBe(false);
    expect(sameOrderId('ORD 77', 'ORD77')).toBe(false);
  });
});

describe('the store asks the one fold: an order another row holds, looked up in another spelling', () => {
  type Answer = { status?: number; body: unknown };
  // The supplier knows ORD-Ä7 exactly; any other spelling is not found (as a supplier with case-sensitive look-ups, or one that is down, leaves it).
  const supplier = (req: IncomingMessage): Answer =>
    req.url?.startsWith('/orders/')
      ? { status: 404, body: { success: false, message: 'order not found' } }
      : { body: { success: true, balanceUsd: 100, currency: 'USD' } };

  async function twoRows() {
    const first = pubgRow(0);
    const second = { ...pubgRow(0), idx: 1, line: 3, request: { ...first.request!, trxid: 'tu-row-1' } };
    const rt = await supplierWorld((req, res) => {
      const a = supplier(req);
      res.statusCode = a.status ?? 200;
      res.end(JSON.stringify(a.body));
    }, [first, second]);
    rt.db.prepare(`UPDATE rows SET state = 'completed', order_id = 'ORD-Ä7', amount_usd = 0.92, attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 0`).run();
    rt.db.prepare(`UPDATE rows SET state = 'review', error = 'REVIEW: no answer for a day', attempts = 1, first_sent_at = 1 WHERE batch_id = 'b1' AND idx = 1`).run();
    await finishBatch(rt, rt.batches.get('b1')!);
    return rt;
  }

  for (const typed of ['ord-ä7', 'ORD-Ä7\u3000', 'ｏｒｄ-ä７']) {
    it(`review resolve --charged ${JSON.stringify(typed)} --force: refused, naming the row that holds ORD-Ä7`, async () => {
      const rt = await twoRows();
      await expect(resolveReview(rt, { batchId: 'b1', line: 3, chargedOrderId: typed, by: 'ana', force: true })).rejects.toThrow(/already belongs to batch b1, line 2/);
      expect(rt.rows.get('b1', 1)!.state).toBe('review');
      expect(rt.rows.placedBy(typed, 'default')).toMatchObject({ batchId: 'b1', idx: 0, line: 2 });
    });
  }

  it('an id that is another order (leading zero, another letter) is not taken for the held one', async () => {
    const rt = await twoRows();
    expect(rt.rows.placedBy('ORD-Ä70', 'default')).toBeUndefined();
    expect(rt.rows.placedBy('ORD-A7', 'default')).toBeUndefined();
    // The console's search of a batch finds the order in any spelling too (store/listing.ts).
    expect(new Listing(rt.db, rt.batches).rows('b1', { q: 'ord-ä7', limit: 10 }).rows.map((r) => r.idx)).toEqual([0]);
  });
});
