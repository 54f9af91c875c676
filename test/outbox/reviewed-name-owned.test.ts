/**
 * rev37 (adversarial review of ops37), data finding: the reviewed result
 * (<name>.reviewed.result.csv, outbox/paths.ts) is written without asking whether another batch
 * owns that name. claim.ts now keeps a file named x.reviewed.csv off it, but a home upgraded from
 * an earlier release has such batches already: `x.reviewed.csv` claimed then got
 * outbox/x.reviewed.result.csv (the plain name). The first review decision on batch `x` then
 * writes over that other batch's handed-out result. (The partial file has this guard:
 * outbox/partial.ts asks batches.resultFileTaken; test/outbox/partial.test.ts.)
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { outboxPaths } from '../../src/outbox/paths.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { Batch } from '../../src/store/batches.js';
import { inProcessSandbox, releaseAll, tempHome, TEST_KEY } from '../e2e/harness.js';

let rt: Runtime | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await releaseAll();
});

async function batchOf(content: string, name: string): Promise<Batch> {
  const file = join(rt!.config.home, name);
  writeFileSync(file, content);
  const claimed = await claimFile(rt!, file, { origin: 'submit', own: true, move: false });
  expect(await loadBatch(rt!, claimed)).toMatchObject({ loaded: true });
  return rt!.batches.get(claimed.id)!;
}

function complete(rt: Runtime, batchId: string, idx: number, now: number): void {
  rt.rows.markSending(batchId, idx, { owner: rt.owner, now }, now);
  rt.rows.placed(batchId, idx, { orderId: `O-${batchId}-${idx}`, status: 'completed', amountUsd: 0.92, codes: [] }, now, now);
}

it("a review decision on batch x never writes over the result batch x.reviewed owns (a home upgraded from an earlier release)", async () => {
  const home = tempHome('topup-rev37-');
  const sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);

  // The earlier release: x.reviewed.csv claimed the plain name outbox/x.reviewed.result.csv.
  const other = await batchOf('pid,userId\nPUBG-60,5123456700\n', 'x.reviewed.csv');
  complete(rt, other.id, 0, Date.now());
  await finishBatch(rt, rt.batches.get(other.id)!);
  const newName = outboxPaths(rt, rt.batches.get(other.id)!).resultFile;
  const owned = join(rt.config.outboxDir, 'x.reviewed.result.csv');
  renameSync(newName, owned);
  rt.db.prepare('UPDATE batches SET result_file = ? WHERE id = ?').run(owned, other.id);
  const before = readFileSync(owned, 'utf8');
  expect(before).toContain('5123456700');

  // Batch x ends, then a row of it is decided later: the batch is reopened and written again.
  const b = await batchOf('pid,userId\nPUBG-60,5123456789\n', 'x.csv');
  complete(rt, b.id, 0, Date.now());
  await finishBatch(rt, rt.batches.get(b.id)!);
  expect(rt.batches.reopen(b.id)).toBe(true);
  await finishBatch(rt, rt.batches.get(b.id)!);

  expect(readFileSync(owned, 'utf8')).toBe(before);
});

// The same finding as test/outbox/reviewed-path-after-finish.test.ts, on a real store: after one
// later version the console's Result link and the order API's GET result name a file that is not there.
it('after one review decision, the done batch names the reviewed file it wrote (console link, order API result)', async () => {
  const home = tempHome('topup-rev37-');
  const sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  const b = await batchOf('pid,userId\nPUBG-60,5123456789\n', 'x.csv');
  complete(rt, b.id, 0, Date.now());
  await finishBatch(rt, rt.batches.get(b.id)!);
  expect(rt.batches.reopen(b.id)).toBe(true);
  const summary = await finishBatch(rt, rt.batches.get(b.id)!);
  expect(summary?.resultFile).toBe(join(rt.config.outboxDir, 'x.reviewed.result.csv'));
  expect(existsSync(summary!.resultFile)).toBe(true);
  const done = rt.batches.get(b.id)!;
  expect(done.finishedAt).not.toBeNull();
  expect(outboxPaths(rt, done).resultFile).toBe(summary!.resultFile);
});
