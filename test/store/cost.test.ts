/**
 * Issue 24, item 4: what a row cost, one module (src/store/cost.ts) with two named rules. SPENT
 * (results, summaries, progress, the console, /metrics) counts a completed order and a cancelled one
 * without a reported refund; CHARGED (the low-balance runway, reconciliation's balance check) adds
 * the placed orders not ended yet, whose price the supplier has already taken. The rule in SQL (a
 * batch's progress) gives, row by row, what the rule in code gives. Real store in a temp home.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/store.js';
import { ROW_STATES, type RowState } from '../../src/store/row-states.js';
import { SPENT_USD_SQL, chargedUsd, rowMoney, spentUsd } from '../../src/store/cost.js';
import type { Row } from '../../src/store/rows.js';

const homes: { dir: string; store: Store }[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) {
    h.store.db.close();
    rmSync(h.dir, { recursive: true, force: true });
  }
});

function store(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'cost-'));
  const s = openStore(join(dir, 'topup.db'));
  homes.push({ dir, store: s });
  s.batches.create({ id: 'b1', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b1/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, now: 1 });
  return s;
}

/** Every state, each with a charged amount, an expected price only, refunded, not refunded, unknown. */
function variants(): { state: RowState; amountUsd: number | null; expectedUsd: number | null; refunded: boolean | null }[] {
  return ROW_STATES.flatMap((state) => [
    { state, amountUsd: 1.25, expectedUsd: 0.92, refunded: null },
    { state, amountUsd: null, expectedUsd: 0.92, refunded: false },
    { state, amountUsd: 2.5, expectedUsd: 2.5, refunded: true },
  ]);
}

describe('what a row cost (store/cost.ts)', () => {
  it('SPENT: a completed order, and a cancelled one without a reported refund, at the price charged; nothing else', () => {
    for (const v of variants()) {
      const want = v.state === 'completed' || (v.state === 'cancelled' && v.refunded !== true) ? (v.amountUsd ?? v.expectedUsd!) : 0;
      expect(spentUsd(v), JSON.stringify(v)).toBe(want);
    }
    expect(rowMoney({ state: 'cancelled', amountUsd: 2.5, expectedUsd: null, refunded: true })).toEqual({ amountCents: 250, netCents: 0, refundedCents: 250 });
    expect(rowMoney({ state: 'review', amountUsd: 2.5, expectedUsd: 2.5, refunded: null })).toEqual({ amountCents: null, netCents: null, refundedCents: 0 });
  });

  it('CHARGED: SPENT, and the price of an order placed and not ended (processing, unseen)', () => {
    for (const v of variants()) {
      const placed = v.state === 'processing' || v.state === 'unseen';
      expect(chargedUsd(v), JSON.stringify(v)).toBe(placed ? (v.amountUsd ?? v.expectedUsd!) : spentUsd(v));
    }
  });

  it('the rule in SQL gives, row by row, what the rule in code gives', () => {
    const s = store();
    const vs = variants();
    s.rows.insertAll('b1', vs.map((_, i) => ({ idx: i, line: i + 2, cells: [], request: null, error: 'x' })), 1);
    const set = s.db.prepare('UPDATE rows SET state = ?, amount_usd = ?, expected_usd = ?, refunded = ? WHERE batch_id = ? AND idx = ?');
    vs.forEach((v, i) => set.run(v.state, v.amountUsd, v.expectedUsd, v.refunded === null ? null : v.refunded ? 1 : 0, 'b1', i));
    const bySql = s.db.prepare(`SELECT idx, ${SPENT_USD_SQL} AS usd FROM rows WHERE batch_id = 'b1' ORDER BY idx`).all() as { idx: number; usd: number }[];
    for (const r of bySql) {
      const row = s.rows.get('b1', r.idx)! as Row;
      expect(r.usd, `${row.state} ${row.amountUsd} ${row.refunded}`).toBeCloseTo(spentUsd(row), 9);
    }
    const total = vs.reduce((n, v) => n + Math.round(spentUsd(v) * 100), 0) / 100;
    expect(s.rows.progress('b1').spentUsd).toBeCloseTo(total, 9);
  });
});
