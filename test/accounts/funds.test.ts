/**
 * account/funds.ts directly (issue 24: it had no test of its own; the daemon tests reach it through
 * whole runs). judgeFunds over a real store: oldest batch first, what other batches of the home were
 * promised set aside, a batch the balance cannot cover waiting without holding back the ones it can.
 * FundsGate against a supplier answering the balance (a small HTTP server: fake-supplier.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { FundsGate, judgeFunds, waitDetail } from '../../src/account/funds.js';
import type { Batch } from '../../src/store/batches.js';
import type { ApiError } from '../../src/kernel/errors.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

type Answer = { status?: number; body: unknown };

/** b1 (leased to this runtime, from fake-supplier.ts) and the batches given, each with `rows` pending rows of 0.92 USD. */
async function world(batches: { id: string; rows: number; owner?: string | null }[], b1Rows = 1) {
  let script: () => Answer = () => ({ body: { success: true, balanceUsd: 100, currency: 'USD' } });
  const rt = await supplierWorld((_req: IncomingMessage, res: ServerResponse) => {
    const a = script();
    res.statusCode = a.status ?? 200;
    res.end(JSON.stringify(a.body));
  }, Array.from({ length: b1Rows }, (_, i) => pubgRow(i)));
  let seq = 100;
  for (const b of batches) {
    const now = Date.now() + seq++;
    rt.batches.create({ id: b.id, name: b.id, sourceName: `${b.id}.csv`, jobFile: `jobs/${b.id}/x.csv`, contentHash: b.id, origin: 'inbox', sandbox: false, owner: b.owner === undefined ? rt.owner : b.owner, leaseUntil: now + 60_000, now });
    rt.batches.open(b.id, ['pid', 'userId']);
    rt.rows.insertAll(b.id, Array.from({ length: b.rows }, (_, i) => ({ ...pubgRow(i), request: { ...pubgRow(i).request!, trxid: `${b.id}-${i}` } })), now);
  }
  return { rt, answer: (a: () => Answer) => void (script = a) };
}

const ids = (bs: readonly Batch[]): string[] => bs.map((b) => b.id);

describe('judgeFunds: which batches the balance covers', () => {
  it('oldest first; a batch it cannot cover waits, says what to top up, and does not hold back a later one it can cover', async () => {
    const { rt } = await world([{ id: 'b2', rows: 10 }, { id: 'b3', rows: 1 }]);
    // b1: 0.92, b2: 9.20, b3: 0.92; 5 USD covers b1 and b3, not b2.
    const v = judgeFunds(rt, 5, new Set(['b1', 'b2', 'b3']), Date.now());
    expect(ids(v.funded)).toEqual(['b1', 'b3']);
    expect(v.waiting).toHaveLength(1);
    expect(v.waiting[0]).toMatchObject({ needUsd: 9.2, availableUsd: 4.08, topUpUsd: 5.12, wentAhead: ['b3'] });
    expect(rt.batches.get('b2')).toMatchObject({ waitReason: 'balance', waitDetail: waitDetail(v.waiting[0]!), balanceBefore: null });
    expect(rt.batches.get('b3')).toMatchObject({ waitReason: null, balanceBefore: 5 });
  });

  it('what other batches of the home were promised is set aside; a cancelled or waiting batch promises nothing', async () => {
    const { rt } = await world([{ id: 'other', rows: 3, owner: 'another-process' }, { id: 'cancelled', rows: 5 }, { id: 'waits', rows: 5 }]);
    expect(rt.batches.requestCancel('cancelled')).toBe(true);
    rt.batches.setWait('waits', 'balance', 'waiting for balance');
    // 3.00 USD: the other process's batch (2.76) is set aside, so b1 (0.92) does not fit.
    const v = judgeFunds(rt, 3, new Set(['b1']), Date.now());
    expect(v.reservedUsd).toBe(2.76);
    expect(ids(v.funded)).toEqual([]);
    expect(v.waiting[0]).toMatchObject({ needUsd: 0.92, availableUsd: 0.24, topUpUsd: 0.68 });
    expect(ids(judgeFunds(rt, 3.68, new Set(['b1']), Date.now()).funded)).toEqual(['b1']);
  });

  it('a batch waiting since an earlier check learns which later batches went ahead of it', async () => {
    const { rt } = await world([{ id: 'b2', rows: 10 }, { id: 'b3', rows: 1 }]);
    judgeFunds(rt, 1, new Set(['b1', 'b2']), Date.now()); // b2 waits
    judgeFunds(rt, 1, new Set(['b3']), Date.now());
    expect(rt.batches.get('b2')!.waitDetail).toMatch(/; went ahead meanwhile: b3$/);
  });
});

describe('FundsGate: what may send now', () => {
  it('reads the balance before a batch\'s first order; a batch not covered sends only the resends of rows in doubt', async () => {
    const { rt, answer } = await world([{ id: 'b2', rows: 10 }]);
    answer(() => ({ body: { success: true, balanceUsd: 1, currency: 'USD' } }));
    const waits: string[] = [];
    const gate = new FundsGate(rt, 60_000, (b) => void waits.push(b.id));
    const scope = await gate.sendable([rt.batches.get('b1')!, rt.batches.get('b2')!], () => true);
    expect(scope).toEqual({ newOrders: ['b1'], resendsOnly: ['b2'] });
    expect(waits).toEqual(['b2']);
    expect(gate.lastBalance?.usd).toBe(1);
    expect(gate.untilNextCheck()).toBeGreaterThan(50_000); // the waiting batch is checked again after recheckMs
  });

  it('a balance that cannot be read is tried again at the usual cadence; a 401 is an account problem', async () => {
    const { rt, answer } = await world([]);
    const problems: ApiError[] = [];
    const gate = new FundsGate(rt, 200, () => {}, (e) => void problems.push(e));
    answer(() => ({ status: 502, body: 'Bad gateway' }));
    expect(await gate.sendable([rt.batches.get('b1')!], () => true)).toEqual({ newOrders: [], resendsOnly: ['b1'] });
    expect(gate.untilNextCheck()).toBeLessThanOrEqual(200);
    expect(problems).toEqual([]);
    answer(() => ({ status: 401, body: { success: false, error: 'INVALID API KEY' } }));
    await new Promise((r) => setTimeout(r, 250));
    await gate.sendable([rt.batches.get('b1')!], () => true);
    expect(problems.map((e) => e.classification)).toEqual(['account']);
  });

  it('a batch cancelled after a failed read is owed no check: nothing stays due (found by the simulator: the runner woke every 5 ms)', async () => {
    const { rt, answer } = await world([]);
    const gate = new FundsGate(rt, 200, () => {});
    answer(() => ({ status: 502, body: 'Bad gateway' }));
    await gate.sendable([rt.batches.get('b1')!], () => true);
    expect(gate.untilNextCheck()).toBeDefined();
    rt.batches.requestCancel('b1');
    await gate.sendable([rt.batches.get('b1')!], () => true);
    expect(gate.untilNextCheck()).toBeUndefined();
  });
});

describe('judgeFunds: the part the balance covers, on the operator\'s word (run_covered)', () => {
  it('runs the rows that fit in file order, first fit, skips the others in the same judgement, and funds the batch', async () => {
    // b2: 10 rows of 0.92; 5 USD less b1's 0.92 leaves 4.08: four rows of b2 fit.
    const { rt } = await world([{ id: 'b2', rows: 10 }]);
    expect(ids(judgeFunds(rt, 5, new Set(['b1', 'b2']), Date.now()).funded)).toEqual(['b1']);
    expect(rt.batches.requestRunCovered('b2')).toBe(true);
    const v = judgeFunds(rt, 5, new Set(['b2']), Date.now());
    expect(ids(v.funded)).toEqual(['b2']);
    expect(rt.batches.get('b2')).toMatchObject({ waitReason: null, balanceBefore: 5 });
    const states = [...rt.rows.iterate('b2')].map((r) => r.state);
    expect(states).toEqual([...Array(4).fill('pending'), ...Array(6).fill('skipped')]);
    const skipped = [...rt.rows.iterate('b2')].filter((r) => r.state === 'skipped');
    expect(skipped.every((r) => r.rejectCode === 'TOPUP_NOT_COVERED' && r.trxid === null && /topup retry b2/.test(r.error ?? ''))).toBe(true);
    // What it kept is promised: nothing is left for another batch.
    expect(rt.rows.unsentTotal('b2')).toBe(3.68);
  });

  it('skips nothing when not even one row fits: the batch waits whole', async () => {
    const { rt } = await world([{ id: 'b2', rows: 3 }]);
    rt.batches.requestRunCovered('b2');
    const v = judgeFunds(rt, 1.5, new Set(['b1', 'b2']), Date.now()); // b1 takes 0.92, 0.58 left
    expect(ids(v.funded)).toEqual(['b1']);
    expect(v.waiting.map((w) => w.batch.id)).toEqual(['b2']);
    expect([...rt.rows.iterate('b2')].every((r) => r.state === 'pending')).toBe(true);
  });

  it('a row is skipped only with the operator\'s word on its batch (the store refuses otherwise)', async () => {
    const { rt } = await world([{ id: 'b2', rows: 2 }]);
    expect(rt.rows.skipUncovered('b2', 0, Date.now(), 'x')).toBe(false);
    expect(rt.rows.get('b2', 0)!.state).toBe('pending');
  });
});
