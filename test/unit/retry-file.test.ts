/**
 * The file `topup retry` writes (ops/retry.ts), in-process: its header and cells as a reseller's
 * earlier file had them, each row's first line kept through a retry of a retry, new trxids that
 * differ between batches, its name, its mode, its lease, and the refusals that explain themselves.
 * retry-rules.test.ts holds which rows are taken; this file holds what is written for them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { NotFoundError, UsageError } from '../../src/kernel/errors.js';
import { createRetryBatch, notRetryable, retryPlan } from '../../src/ops/retry.js';
import { REPEAT_CODE } from '../../src/claim/repeats.js';
import type { NewRow } from '../../src/store/rows.js';
import type { Runtime } from '../../src/runtime.js';
import { supplierWorld } from './fake-supplier.js';

interface Case {
  cells: string[];
  state: string;
  refunded?: number;
  rejectCode?: string;
  error?: string;
}

/** A finished batch as the loader and the engine would have left it: header as read, one row per case. */
function finishedBatch(rt: Runtime, id: string, sourceName: string, header: string[], cases: Case[]): void {
  const now = Date.now();
  rt.batches.create({ id, name: sourceName.replace(/\.csv$/, ''), sourceName, jobFile: `jobs/${id}/${sourceName}`, contentHash: `h-${id}`, origin: 'inbox', sandbox: false, now });
  rt.batches.open(id, header);
  const rows: NewRow[] = cases.map((c, idx) => ({
    idx,
    line: idx + 2,
    cells: c.cells,
    request: { pid: 'PUBG-60', trxid: `tu-old-${id}-${idx}`, userId: '5123456789' },
    error: null,
    productId: 'PUBG-60',
    slug: 'pubg',
    packName: '60 UC',
    quantity: 1,
    unitPriceUsd: 0.92,
    expectedUsd: 0.92,
  }));
  rt.rows.insertAll(id, rows, now);
  const set = rt.db.prepare(`UPDATE rows SET state = ?, refunded = ?, reject_code = ?, error = ? WHERE batch_id = ? AND idx = ?`);
  cases.forEach((c, idx) => set.run(c.state, c.refunded ?? null, c.rejectCode ?? null, c.error ?? null, id, idx));
  rt.batches.finish(id, null, join(rt.config.home, 'outbox', `${id}.result.csv`), now);
}

const refused = (cells: string[]): Case => ({ cells, state: 'rejected', rejectCode: 'PRODUCT_UNAVAILABLE', error: 'out of stock' });

function written(rt: Runtime, jobFile: string): string[][] {
  return parse(readFileSync(join(rt.config.home, jobFile), 'utf8')) as string[][];
}

/** Real batch ids (claim.ts newBatchId): b<yymmdd>-<6 hex>. */
const FIRST = 'b261120-0a1b2c';
const SECOND = 'b261121-1f2e3d';

describe('topup retry: the file it writes', () => {
  it('a retry of a retry keeps the trxid and retryOfLine columns where they are, each row\'s first line, and the first file\'s name', async () => {
    const rt = await supplierWorld(() => {}, []);
    // The first retry's file, as claim.ts named it (june.retry-<first batch>.csv), read back.
    finishedBatch(rt, SECOND, `june.retry-${FIRST}.csv`, ['pid', 'userId', 'trxid', 'retryOfLine'], [
      refused(['PUBG-60', '5123456789', 'tu-old-0', '7']), // came from line 7 of june.csv
      refused(['PUBG-60', '5123456790', 'tu-old-1', '']), // a row the reseller added by hand
      refused(['PUBG-60', '5123456791', 'tu-old-2', ' ']), // ... with a blank that is only a space
    ]);
    const made = await createRetryBatch(rt, SECOND);
    expect(made).toMatchObject({ rows: 3, lines: [2, 3, 4], left: [] });
    expect(made.batch).toMatchObject({ name: `june.retry-${SECOND}`, retryOf: SECOND, duplicateOf: null });
    expect(basename(made.batch.jobFile)).toBe(`june.retry-${SECOND}.csv`);
    const [header, ...body] = written(rt, made.batch.jobFile);
    expect(header).toEqual(['pid', 'userId', 'trxid', 'retryOfLine']);
    expect(body.map((r) => r.length)).toEqual([4, 4, 4]);
    expect(body.map((r) => r.slice(0, 2))).toEqual([['PUBG-60', '5123456789'], ['PUBG-60', '5123456790'], ['PUBG-60', '5123456791']]);
    expect(body.map((r) => r[3])).toEqual(['7', '3', '4']);
    const trxids = body.map((r) => r[2]!);
    expect(trxids.every((t) => /^tu[0-9a-f]{30}$/.test(t))).toBe(true);
    expect(new Set(trxids).size).toBe(3);
  });

  it('a file of the reseller\'s own whose name only looks like a retry\'s keeps its whole name', async () => {
    const rt = await supplierWorld(() => {}, []);
    finishedBatch(rt, FIRST, 'june.retry-bad-ids.csv', ['pid', 'userId'], [refused(['PUBG-60', '5123456789'])]);
    const made = await createRetryBatch(rt, FIRST);
    expect(basename(made.batch.jobFile)).toBe(`june.retry-bad-ids.retry-${FIRST}.csv`);
  });

  it('finds a retryOfLine column wherever it stands, spaces around its name and all; extra cells past the header are dropped', async () => {
    const rt = await supplierWorld(() => {}, []);
    finishedBatch(rt, FIRST, 'june.csv', [' retryOfLine', 'pid', 'userId'], [
      refused(['', 'PUBG-60', '5123456789']),
      refused(['9', 'PUBG-60', '5123456790']),
    ]);
    const made = await createRetryBatch(rt, FIRST);
    const [header, ...body] = written(rt, made.batch.jobFile);
    expect(header).toEqual([' retryOfLine', 'pid', 'userId', 'trxid']);
    expect(body.map((r) => [r[0], r[1], r[2]])).toEqual([['2', 'PUBG-60', '5123456789'], ['9', 'PUBG-60', '5123456790']]);

    // A ragged row (notes typed in unnamed columns): only the header's cells are carried over, so
    // nothing of the notes lands in the trxid or retryOfLine column.
    finishedBatch(rt, SECOND, 'july.csv', ['pid', 'userId'], [refused(['PUBG-60', '5123456789', 'call him', 'paid cash'])]);
    const ragged = await createRetryBatch(rt, SECOND);
    const [h2, row] = written(rt, ragged.batch.jobFile);
    expect(h2).toEqual(['pid', 'userId', 'trxid', 'retryOfLine']);
    expect(row).toHaveLength(4);
    expect(row!.slice(0, 2)).toEqual(['PUBG-60', '5123456789']);
    expect(row![2]).toMatch(/^tu[0-9a-f]{30}$/);
    expect(row![3]).toBe('2');
  });

  it('row N of two different batches gets two different trxids (each is a new purchase of its own)', async () => {
    const rt = await supplierWorld(() => {}, []);
    finishedBatch(rt, FIRST, 'june.csv', ['pid', 'userId'], [refused(['PUBG-60', '5123456789'])]);
    finishedBatch(rt, SECOND, 'june.csv', ['pid', 'userId'], [refused(['PUBG-60', '5123456789'])]);
    const a = written(rt, (await createRetryBatch(rt, FIRST)).batch.jobFile)[1]![2];
    const b = written(rt, (await createRetryBatch(rt, SECOND)).batch.jobFile)[1]![2];
    expect(a).toMatch(/^tu[0-9a-f]{30}$/);
    expect(b).toMatch(/^tu[0-9a-f]{30}$/);
    expect(a).not.toBe(b);
  });

  it('the file is mode 0600 in its batch folder, no staging folder is left in jobs/, and the lease is released unless kept', async () => {
    const rt = await supplierWorld(() => {}, []);
    finishedBatch(rt, FIRST, 'june.csv', ['pid', 'userId'], [refused(['PUBG-60', '5123456789'])]);
    finishedBatch(rt, SECOND, 'july.csv', ['pid', 'userId'], [refused(['PUBG-60', '5123456789'])]);
    const released = await createRetryBatch(rt, FIRST);
    expect(statSync(join(rt.config.home, released.batch.jobFile)).mode & 0o777).toBe(0o600);
    expect(readdirSync(rt.config.jobsDir).filter((f) => f.startsWith('.'))).toEqual([]);
    // Any daemon may take it now.
    expect(released.batch).toMatchObject({ state: 'claimed', owner: null });

    // `topup retry --run` runs the batch itself: no daemon may take it first.
    const kept = await createRetryBatch(rt, SECOND, { keepLease: true });
    expect(kept.batch.owner).toBe(rt.owner);
    expect(kept.batch.leaseUntil).toBeGreaterThan(Date.now());
  });

  it('--repeats made twice writes the same file both times (same trxids, so the second buys nothing twice), each a batch of its own', async () => {
    const rt = await supplierWorld(() => {}, []);
    finishedBatch(rt, FIRST, 'june.csv', ['pid', 'userId'], [
      { cells: ['PUBG-60', '5123456789'], state: 'skipped', rejectCode: REPEAT_CODE, error: 'repeats line 2 of batch b0' },
      refused(['PUBG-60', '5123456790']),
    ]);
    const plan = retryPlan(rt, FIRST, { repeats: true });
    expect(plan.rows.map((r) => r.line)).toEqual([2]);
    // Only the repeats are looked at: the refused row is neither taken nor "left out".
    expect(plan.left).toEqual([]);
    const one = await createRetryBatch(rt, FIRST, { repeats: true });
    const two = await createRetryBatch(rt, FIRST, { repeats: true });
    expect(one.batch).toMatchObject({ duplicateOf: null, retryOf: null });
    expect(two.batch).toMatchObject({ duplicateOf: null, retryOf: null });
    expect(written(rt, two.batch.jobFile)).toEqual(written(rt, one.batch.jobFile));
  });
});

describe('topup retry: refusals say why', () => {
  it('an unknown batch, a batch whose file could not be read, --repeats without repeats', async () => {
    const rt = await supplierWorld(() => {}, []);
    expect(() => retryPlan(rt, 'b261120-ffffff')).toThrow(NotFoundError);
    expect(() => retryPlan(rt, 'b261120-ffffff')).toThrow(/no batch b261120-ffffff/);

    const now = Date.now();
    rt.batches.create({ id: FIRST, name: 'broken', sourceName: 'broken.csv', jobFile: `jobs/${FIRST}/broken.csv`, contentHash: 'h', origin: 'inbox', sandbox: false, now });
    rt.batches.fail(FIRST, 'not a CSV', now);
    expect(() => retryPlan(rt, FIRST)).toThrow(UsageError);
    expect(() => retryPlan(rt, FIRST)).toThrow(/has no rows to retry \(its file could not be read\)/);

    finishedBatch(rt, SECOND, 'june.csv', ['pid', 'userId'], [refused(['PUBG-60', '5123456789'])]);
    expect(() => retryPlan(rt, SECOND, { repeats: true })).toThrow(/has no rows skipped as repeats/);
  });

  it('nothing to buy again: lists every row left out, one after another; with nothing left out either, says only that', async () => {
    const rt = await supplierWorld(() => {}, []);
    finishedBatch(rt, FIRST, 'june.csv', ['pid', 'userId'], [
      { cells: ['PUBG-60', '5123456789'], state: 'review', error: 'no answer' },
      { cells: ['PUBG-60', '5123456790'], state: 'cancelled', refunded: 0, error: 'supplier failed' },
    ]);
    expect(() => retryPlan(rt, FIRST)).toThrow(/safely; left out: line 2: in review[^;]*; line 3: cancelled WITHOUT a refund/);

    finishedBatch(rt, SECOND, 'july.csv', ['pid', 'userId'], [{ cells: ['PUBG-60', '5123456789'], state: 'completed' }]);
    expect(() => retryPlan(rt, SECOND)).toThrow(new UsageError(`batch ${SECOND} has no rows that can be bought again safely`));
  });

  it('a row that is not a candidate is named by its state, even when its error blames the player id', async () => {
    const rt = await supplierWorld(() => {}, []);
    finishedBatch(rt, FIRST, 'june.csv', ['pid', 'userId'], [refused(['PUBG-60', '5123456789'])]);
    const row = rt.rows.get(FIRST, 0)!;
    for (const state of ['completed', 'skipped', 'invalid', 'processing'] as const) {
      expect(notRetryable({ ...row, state, error: 'INVALID PLAYER ID' }, false), state).toBe(`ended ${state}`);
    }
  });
});
