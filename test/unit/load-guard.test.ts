/**
 * The store stage replaces a batch's rows in one transaction, and only while the batch is still
 * `claimed` and leased to this process: a process that stalled mid-load past its lease must not
 * wipe rows that another process took over and may already be sending.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { csv, inProcessSandbox, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';

let home: TempHome | undefined;
let sb: RunningSandbox | undefined;
let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  await sb?.close();
  home?.remove();
});

it('stores rows only while the batch is claimed and leased to this process', async () => {
  home = tempHome();
  sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  const file = join(home.dir, 'orders.csv');
  writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
  const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });

  // Taken over by another process while this one stalled.
  rt.db.prepare(`UPDATE batches SET owner = 'someone-else' WHERE id = ?`).run(batch.id);
  expect(await loadBatch(rt, batch)).toMatchObject({ loaded: false, reason: 'not-ours' });
  expect(rt.rows.counts(batch.id).pending).toBe(0);

  rt.db.prepare(`UPDATE batches SET owner = ? WHERE id = ?`).run(rt.owner, batch.id);
  expect(await loadBatch(rt, batch)).toMatchObject({ loaded: true, rows: 1 });
  expect(rt.rows.counts(batch.id).pending).toBe(1);
  // Stored once: a second load of the now-open batch changes nothing.
  expect(await loadBatch(rt, rt.batches.get(batch.id)!)).toMatchObject({ loaded: false, reason: 'not-ours' });
  expect(rt.rows.counts(batch.id).pending).toBe(1);
});
