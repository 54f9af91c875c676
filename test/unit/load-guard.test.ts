/**
 * The store stage writes a batch's rows (in chunks) and opens it only while the batch is still
 * `claimed` and leased to this process: a process that stalled mid-load past its lease must not
 * wipe rows that another process took over and may already be sending. A refused file keeps no
 * rows; rows a killed load left are replaced.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { purchaseFingerprint } from '../../src/claim/repeats.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
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

it('a big file refused after its rows were read keeps none of them (chunks written while claimed go with the refusal)', async () => {
  home = tempHome();
  sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  const file = join(home.dir, 'orders.csv');
  // No userId column for 5,000 top-up rows: one file-level problem, known only after the last row.
  writeFileSync(file, csv([['pid', 'note'], ...Array.from({ length: 5_000 }, (_, i) => ['PUBG-60', `n${i}`])]));
  const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
  expect(await loadBatch(rt, batch)).toMatchObject({ loaded: false, reason: 'file-error' });
  expect(rt.batches.get(batch.id)!.state).toBe('failed');
  expect(rt.db.prepare('SELECT count(*) FROM rows WHERE batch_id = ?').pluck().get(batch.id)).toBe(0);
  expect(rt.db.prepare('SELECT count(*) FROM batch_counts WHERE batch_id = ? AND n > 0').pluck().get(batch.id)).toBe(0);
});

it('rows a killed load left in a claimed batch are replaced, not doubled, and are never an earlier purchase to repeat', async () => {
  home = tempHome();
  sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  const a = join(home.dir, 'a.csv');
  writeFileSync(a, csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-60', '5123456780']]));
  const first = await claimFile(rt, a, { origin: 'submit', own: true, move: false });
  // What a load killed after its first chunk leaves: a row of the still-claimed batch.
  const request = { pid: 'PUBG-60', userId: '5123456789', trxid: 'left-over' };
  rt.rows.insertAll(first.id, [{ idx: 0, line: 2, cells: ['PUBG-60', '5123456789'], request, error: null, fingerprint: purchaseFingerprint(request) }], Date.now());

  // A later file buying the same is not a repeat of that row: it was never sendable.
  const b = join(home.dir, 'b.csv');
  writeFileSync(b, csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
  const second = await claimFile(rt, b, { origin: 'submit', own: true, move: false });
  expect(await loadBatch(rt, second)).toMatchObject({ loaded: true, rows: 1 });
  expect(rt.rows.counts(second.id)).toMatchObject({ pending: 1, skipped: 0 });

  // The first batch's next load replaces what was left: two rows, not three (the one the later
  // file has bought since is skipped as its repeat: whichever is stored first buys).
  expect(await loadBatch(rt, first)).toMatchObject({ loaded: true, rows: 2 });
  expect(rt.rows.counts(first.id)).toMatchObject({ pending: 1, skipped: 1 });
  expect(rt.rows.byTrxid('left-over')).toBeUndefined();
});

it('a file stored after its edited re-drop does not buy the rows the re-drop bought (whichever is stored first buys)', async () => {
  home = tempHome();
  sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  // The first file is claimed, then waits (for the catalog, say); its edited copy is stored first.
  const a = join(home.dir, 'a.csv');
  writeFileSync(a, csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
  const first = await claimFile(rt, a, { origin: 'submit', own: true, move: false });
  const b = join(home.dir, 'b.csv');
  writeFileSync(b, csv([['pid', 'userId', 'note'], ['PUBG-60', '5123456789', 'added column'], ['PUBG-60', '5123456780', 'added row']]));
  const second = await claimFile(rt, b, { origin: 'submit', own: true, move: false });
  expect(await loadBatch(rt, second)).toMatchObject({ loaded: true, rows: 2 });
  expect(rt.rows.counts(second.id)).toMatchObject({ pending: 2, skipped: 0 });

  expect(await loadBatch(rt, first)).toMatchObject({ loaded: true, rows: 1 });
  expect(rt.rows.counts(first.id)).toMatchObject({ pending: 0, skipped: 1 });
  expect(rt.rows.get(first.id, 0)!.error).toMatch(new RegExp(`repeats line 2 of batch ${second.id}`));
});
