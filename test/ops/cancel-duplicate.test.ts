/**
 * `topup cancel` (and the console's cancel) of a copy of a file already taken: the copy orders
 * nothing itself, so the refusal names the batch that does (found by the simulator: an operator
 * cancelling the newest batch of a file got an internal error, "cannot be cancelled in state
 * duplicate"). Real store in a temp home.
 */
import { describe, expect, it } from 'vitest';
import { requestCancel } from '../../src/ops/cancel.js';
import { ErrorCode, TopupError } from '../../src/kernel/errors.js';
import { pubgRow, supplierWorld } from '../unit/fake-supplier.js';

describe('cancel of a duplicate batch', () => {
  it('is refused as a usage error naming the original, and changes nothing', async () => {
    const rt = await supplierWorld((_req, res) => void res.end('{}'), [pubgRow(0)]);
    const now = Date.now();
    rt.batches.create({ id: 'b2', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b2/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, owner: rt.owner, leaseUntil: now + 60_000, now, duplicateOf: 'b1' });
    rt.batches.markDuplicate('b2', null);
    expect(rt.batches.get('b2')).toMatchObject({ state: 'duplicate', finishedAt: null });
    let err: unknown;
    try {
      requestCancel(rt, 'b2');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TopupError);
    expect((err as TopupError).code).toBe(ErrorCode.Usage);
    expect((err as Error).message).toMatch(/copy of batch b1 .*cancel b1/);
    expect(rt.batches.get('b2')!.cancelRequested).toBe(false);
    // The original is cancelled as usual.
    expect(requestCancel(rt, 'b1').kind).toBe('requested');
  });
});
