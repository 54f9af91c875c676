/**
 * A retry batch reads the cells of the batch it retries, a few of its rows only. An `Amount`
 * column is read as the quantity only when the rows show it (intake/column-report.ts); decided
 * again from the rows left, a retry could buy 3 codes where the batch it retries bought 1 (its
 * Amount read as money because of a row the retry no longer has). The retry keeps the reading of
 * the batch it retries. In-process: a real runtime and store, the real loader and retry file,
 * against the in-process sandbox's catalog.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { createRetryBatch } from '../../src/ops/retry.js';
import { loadBatch } from '../../src/claim/load.js';
import { keepColumnReport } from '../../src/outbox/summary.js';
import type { ColumnReport } from '../../src/intake/column-report.js';
import type { NewRow } from '../../src/store/rows.js';
import { inProcessSandbox, tempHome, TEST_KEY } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const OLD = 'b261120-0a1b2c';

/** A finished batch of `pid,Amount` whose key row (Amount 3) was refused and whose card row (Amount 5, "Steam $5") completed. */
async function finishedWithAmount(amountRead: boolean): Promise<Runtime> {
  const home = tempHome();
  const sb = await inProcessSandbox();
  const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_URL: sb.url, TOPUP_API_KEY: TEST_KEY }), silentLogger(), sb.url);
  const now = Date.now();
  rt.batches.create({ id: OLD, name: 'cards', sourceName: 'cards.csv', jobFile: `jobs/${OLD}/cards.csv`, contentHash: 'h-old', origin: 'inbox', sandbox: false, now });
  rt.batches.open(OLD, ['pid', 'Amount']);
  const q = amountRead ? 3 : 1;
  const rows: NewRow[] = [
    { idx: 0, line: 2, cells: ['KEY-PUBG-60', '3'], request: { pid: 'KEY-PUBG-60', trxid: 'tu-old-0', quantity: q }, error: null, productId: 'KEY-PUBG-60', slug: 'gamekeypubg', packName: '60 UC code', quantity: q, unitPriceUsd: 0.9, expectedUsd: 0.9 * q },
    { idx: 1, line: 3, cells: ['STEAM-5', '5'], request: { pid: 'STEAM-5', trxid: 'tu-old-1', quantity: 1 }, error: null, productId: 'STEAM-5', slug: 'steamgiftcard', packName: 'Steam $5', quantity: 1, unitPriceUsd: 5.15, expectedUsd: 5.15 },
  ];
  rt.rows.insertAll(OLD, rows, now);
  rt.db.prepare(`UPDATE rows SET state = 'rejected', reject_code = 'PRODUCT_UNAVAILABLE', error = 'out of stock' WHERE batch_id = ? AND idx = 0`).run(OLD);
  rt.db.prepare(`UPDATE rows SET state = 'completed' WHERE batch_id = ? AND idx = 1`).run(OLD);
  rt.batches.finish(OLD, null, join(home.outbox, 'cards.result.csv'), now);
  mkdirSync(join(home.jobs, OLD), { recursive: true });
  const report: ColumnReport = {
    columns: [
      { column: 'pid', position: 1, read: [{ field: 'pid' }], note: 'read as pid' },
      amountRead
        ? { column: 'Amount', position: 2, read: [{ field: 'quantity' }], note: 'read as quantity (every value a whole number, on key/card rows)' }
        : { column: 'Amount', position: 2, read: [], note: 'holds 5 on line 3, the value shown in "Steam $5", so it may be money and is not read as a quantity: carried through, not read' },
    ],
    warnings: [],
    hints: [],
  };
  keepColumnReport(rt, rt.batches.get(OLD)!, report);
  return rt;
}

async function retriedQuantities(rt: Runtime): Promise<(number | null)[]> {
  const retry = await createRetryBatch(rt, OLD, { keepLease: true });
  expect(await loadBatch(rt, retry.batch)).toEqual({ loaded: true, rows: 1 });
  const out = [...rt.rows.iterate(retry.batch.id)].map((r) => r.quantity);
  await rt.close();
  return out;
}

describe('a retry reads an Amount column as the batch it retries did', () => {
  it('read as money there (so 1 code was bought): 1 code again, though the row left alone would read as 3', async () => {
    expect(await retriedQuantities(await finishedWithAmount(false))).toEqual([1]);
  });

  it('read as the quantity there: 3 codes again', async () => {
    expect(await retriedQuantities(await finishedWithAmount(true))).toEqual([3]);
  });
});
