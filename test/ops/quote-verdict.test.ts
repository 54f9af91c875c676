/**
 * Issue 24, item 4 (a defect in the seams): the dry run judges every row as the load does.
 * quoteFile (topup validate, the console's upload check) re-implemented the load's verdicts and
 * checked only a trxid the file gave, not the one the load derives from the file's bytes: a file
 * dropped again after its first batch was cancelled (so it is not a duplicate) with a row that
 * had been sent and refused (so it is not a repeat) passed the dry run, and the load refused that
 * row ("generated trxid … was already used"). Both now use claim/row-verdict.ts judgeRow.
 * Real store, catalog and balance from the in-process sandbox, real claim, load and quote.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { requestCancel } from '../../src/ops/cancel.js';
import { quoteFile } from '../../src/ops/quote.js';
import { csv, inProcessSandbox, releaseAll, tempHome, TEST_KEY } from '../e2e/harness.js';

const opened: Runtime[] = [];
afterEach(async () => {
  for (const rt of opened.splice(0)) await rt.close();
  await releaseAll();
});

describe('the dry run and the load give every row the same verdict', () => {
  it('a row whose derived trxid a cancelled batch still holds is refused by both', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
    opened.push(rt);
    const file = join(home.dir, 'shop.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-60', '5123456780']]));

    // The first batch of the file: line 2 was sent and refused (nothing bought), then the batch
    // was cancelled, which skipped line 3 before it was sent (giving up its trxid).
    const first = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    expect(await loadBatch(rt, first)).toMatchObject({ loaded: true, rows: 2 });
    rt.db.prepare(`UPDATE rows SET state = 'rejected', error = 'OUT OF STOCK', attempts = 1, first_sent_at = ? WHERE batch_id = ? AND idx = 0`).run(Date.now(), first.id);
    expect(requestCancel(rt, first.id).kind).toBe('requested');
    expect(rt.rows.cancelPending(first.id, Date.now())).toBe(1);
    const usedTrxid = rt.rows.byLine(first.id, 2)!.trxid!;

    // The reseller drops the file again to buy the refused row: not a duplicate (its first batch was
    // cancelled), not a repeat (nothing was bought). The dry run says what the load will do.
    const q = await quoteFile(rt, file, false);
    expect(q.duplicateOf).toBeNull();
    expect(q.problems).toEqual([{ line: 2, column: 'trxid', problem: `generated trxid ${usedTrxid} was already used by batch ${first.id}; a new purchase needs a new trxid` }]);
    expect(q).toMatchObject({ rows: 2, validRows: 1, invalidRows: 1, ok: false });

    const again = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    expect(again.duplicateOf).toBeNull();
    expect(await loadBatch(rt, again)).toMatchObject({ loaded: true, rows: 2 });
    expect(rt.rows.byLine(again.id, 2)).toMatchObject({ state: 'invalid', error: `trxid: generated trxid ${usedTrxid} was already used by batch ${first.id}; a new purchase needs a new trxid` });
    expect(rt.rows.byLine(again.id, 3)!.state).toBe('pending');
  });

  it('with --again the trxids are salted with the new batch, so none is in use: both let the rows through', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
    opened.push(rt);
    const file = join(home.dir, 'shop.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    const first = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    await loadBatch(rt, first);
    const q = await quoteFile(rt, file, true);
    expect(q).toMatchObject({ rows: 1, validRows: 1, problems: [] });
    const again = await claimFile(rt, file, { origin: 'submit', own: true, move: false, again: true });
    await loadBatch(rt, again);
    expect(rt.rows.byLine(again.id, 2)!.state).toBe('pending');
  });

  it('a file identical to an earlier batch is a duplicate, said once: its rows are not each reported as a used trxid', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url, TOPUP_REPEAT_WINDOW: '0' }), silentLogger(), sb.url);
    opened.push(rt);
    const file = join(home.dir, 'shop.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    const first = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    await loadBatch(rt, first);
    const q = await quoteFile(rt, file, false);
    expect(q).toMatchObject({ duplicateOf: first.id, problems: [], ok: false });
    const again = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    await loadBatch(rt, again);
    expect(rt.rows.byLine(again.id, 2)).toMatchObject({ state: 'skipped', error: expect.stringMatching(/^duplicate of batch /) });
  });
});
