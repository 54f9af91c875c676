/**
 * The torture judge against a hand-made ledger: money is read from the ledger's entries, not from
 * an order's status, because a cancel is not always refunded (real-world answers); orders are
 * matched by either id form; the manual order no client placed is nobody's missing row.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { judge, type Ledger } from '../../torture/lib.js';

const dir = mkdtempSync(join(tmpdir(), 'judge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BIG = '1790000000008388613';
const ledger: Ledger = {
  rateLimited: 0,
  orders: [
    { orderId: 'ORD1000001', publicId: '1790000000004194307', source: 'manual', status: 'processing', amountUsd: 0.92, createdAt: '' } as never,
    { orderId: 'ORD1000002', publicId: BIG, source: 'api', trxid: 'T1', status: 'completed', amountUsd: 0.92, createdAt: '' },
    { orderId: 'ORD1000003', publicId: '1000003', source: 'api', trxid: 'T2', status: 'cancelled', amountUsd: 4.55, refunded: false, createdAt: '' },
    { orderId: 'ORD1000004', publicId: '1000004', source: 'api', trxid: 'T3', status: 'cancelled', amountUsd: 0.92, refunded: true, createdAt: '' },
  ],
  entries: [
    { time: 1, kind: 'charge', orderId: 'ORD1000001', trxid: null, amountUsd: -0.92 },
    { time: 2, kind: 'charge', orderId: 'ORD1000002', trxid: 'T1', amountUsd: -0.92 },
    { time: 3, kind: 'charge', orderId: 'ORD1000003', trxid: 'T2', amountUsd: -4.55 },
    { time: 4, kind: 'charge', orderId: 'ORD1000004', trxid: 'T3', amountUsd: -0.92 },
    { time: 5, kind: 'refund', orderId: 'ORD1000004', trxid: 'T3', amountUsd: 0.92 },
  ],
};

function batch(name: string, rows: string[][], spentUsd: number): string {
  const path = join(dir, `${name}.result.csv`);
  writeFileSync(path, ['trxid,orderId,status,amountUsd,codes,refunded,error', ...rows.map((r) => r.join(','))].join('\n') + '\n');
  writeFileSync(join(dir, `${name}.summary.json`), JSON.stringify({ spentUsd }));
  return path;
}

const good = [
  ['T1', BIG, 'completed', '0.92', '', '', ''],
  ['T2', '1000003', 'cancelled', '4.55', '', 'false', 'INVALID PLAYER'],
  ['T3', 'ORD1000004', 'cancelled', '0.92', '', 'true', 'INVALID PLAYER'],
  ['T4', '', 'rejected', '', '', '', 'UNKNOWN PID'],
];

describe('torture judge', () => {
  it('a truthful batch with an unrefunded cancel, a 19-digit id and a manual order in the ledger passes every check', () => {
    const v = judge(batch('good', good, 0.92 + 4.55), 4, ledger);
    expect(v).toMatchObject({ mismatches: 0, chargesWithoutResult: 0, wronglyNotCharged: 0, spendMismatches: 0, doubleCharges: 0, rowsWithoutResult: 0 });
    expect(v.matchedShare).toBe(1);
  });

  it('a summary that counts every cancel as refunded is a spend mismatch', () => {
    expect(judge(batch('spend', good, 0.92), 4, ledger).spendMismatches).toBe(1);
  });

  it('a result claiming a refund the ledger does not hold disagrees with the ledger', () => {
    const rows = good.map((r) => (r[0] === 'T2' ? ['T2', '1000003', 'cancelled', '4.55', '', 'true', 'INVALID PLAYER'] : r));
    expect(judge(batch('refund', rows, 0.92), 4, ledger).mismatches).toBe(1);
  });

  it('an unrefunded cancel reported as rejected is a row wrongly reported as not charged', () => {
    const rows = good.map((r) => (r[0] === 'T2' ? ['T2', '', 'rejected', '', '', '', 'INVALID PLAYER'] : r));
    expect(judge(batch('rejected', rows, 0.92), 4, ledger).wronglyNotCharged).toBe(1);
  });

  it('a rounded 19-digit id matches no order', () => {
    const rows = good.map((r) => (r[0] === 'T1' ? ['T1', '1790000000008388600', 'completed', '0.92', '', '', ''] : r));
    expect(judge(batch('rounded', rows, 0.92 + 4.55), 4, ledger).mismatches).toBe(1);
  });
});
