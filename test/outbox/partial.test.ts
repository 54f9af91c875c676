/**
 * Partial results while a batch runs (src/outbox/partial.ts): when they are written, what they
 * hold, and that they never take another batch's file. Real runtime and store; the clock is the
 * `now` the runner passes. The daemon-level test (appears before the end, gone after) is in
 * daemon.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { PartialResults } from '../../src/outbox/partial.js';
import { outboxPaths } from '../../src/outbox/paths.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { Batch } from '../../src/store/batches.js';
import { inProcessSandbox, parseResult, releaseAll, tempHome, TEST_KEY } from '../e2e/harness.js';

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

async function world(): Promise<Runtime> {
  const home = tempHome('topup-partial-');
  const sb = await inProcessSandbox();
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
  return rt;
}

function complete(rt: Runtime, batchId: string, idx: number, now: number): void {
  rt.rows.markSending(batchId, idx, { owner: rt.owner, now: now }, now);
  rt.rows.placed(batchId, idx, { orderId: `O-${batchId}-${idx}`, status: 'completed', amountUsd: 0.92, codes: [] }, now, now);
}

it('written once rows have finished and the interval has passed, one row per input row, rewritten only when more finished, removed by the final result', async () => {
  const rt = await world();
  const b = await batchOf('pid,userId\nPUBG-60,5123456789\nPUBG-60,5123456790\nPUBG-60,5123456791\n', 'orders.csv');
  const paths = outboxPaths(rt, b);
  const partials = new PartialResults();
  const every = rt.config.partialResultMs;
  expect(every).toBe(30_000);
  const t0 = b.createdAt;

  // Nothing finished yet: nothing to show, however long it has been.
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + 5 * every);
  expect(existsSync(paths.partialFile)).toBe(false);

  complete(rt, b.id, 0, Date.now());
  rt.rows.markSending(b.id, 1, { owner: rt.owner, now: Date.now() }, Date.now());
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + every - 1);
  expect(existsSync(paths.partialFile)).toBe(false);
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + every);
  expect(statSync(paths.partialFile).mode & 0o777).toBe(0o600);
  const rows = parseResult(readFileSync(paths.partialFile, 'utf8'));
  expect(rows.map((r) => [r.userId, r.status, r.orderId !== ''])).toEqual([
    ['5123456789', 'completed', true],
    ['5123456790', 'in progress', false],
    ['5123456791', 'pending', false],
  ]);
  expect(rows[1]).toMatchObject({ packName: '60 UC', netUsd: '', finishedAt: '', error: '' });
  expect(rows[2]!.trxid).toBe(rt.rows.get(b.id, 2)!.trxid);

  // Nothing more finished: not rewritten, however long it has been.
  unlinkSync(paths.partialFile);
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + 10 * every);
  expect(existsSync(paths.partialFile)).toBe(false);
  // More finished, but within the interval of the last write: not yet.
  complete(rt, b.id, 1, Date.now());
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + 2 * every - 1);
  expect(existsSync(paths.partialFile)).toBe(false);
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + 2 * every);
  expect(parseResult(readFileSync(paths.partialFile, 'utf8')).map((r) => r.status)).toEqual(['completed', 'completed', 'pending']);

  rt.rows.cancelPending(b.id, Date.now());
  await finishBatch(rt, rt.batches.get(b.id)!);
  expect(existsSync(paths.partialFile)).toBe(false);
  expect(parseResult(readFileSync(paths.resultFile, 'utf8')).map((r) => r.status)).toEqual(['completed', 'completed', 'skipped']);
});

it("never writes over, nor removes, another batch's result that owns the partial file's name", async () => {
  const rt = await world();
  // A file named orders.partial.csv, processed first, owns outbox/orders.partial.result.csv.
  const other = await batchOf('pid,userId\nPUBG-60,5123456700\n', 'orders.partial.csv');
  complete(rt, other.id, 0, Date.now());
  await finishBatch(rt, rt.batches.get(other.id)!);
  const owned = outboxPaths(rt, rt.batches.get(other.id)!).resultFile;
  expect(owned.endsWith('orders.partial.result.csv')).toBe(true);
  const before = readFileSync(owned, 'utf8');

  const b = await batchOf('pid,userId\nPUBG-60,5123456789\nPUBG-60,5123456790\n', 'orders.csv');
  expect(outboxPaths(rt, b).partialFile).toBe(owned);
  complete(rt, b.id, 0, Date.now());
  await new PartialResults().update(rt, b, rt.rows.counts(b.id), b.createdAt + 10 * rt.config.partialResultMs);
  expect(readFileSync(owned, 'utf8')).toBe(before);
  complete(rt, b.id, 1, Date.now());
  await finishBatch(rt, rt.batches.get(b.id)!);
  expect(readFileSync(owned, 'utf8')).toBe(before);
});

it('a write that takes long spaces the next ones out to ten times its duration', async () => {
  const rt = await world();
  const b = await batchOf('pid,userId\nPUBG-60,5123456789\nPUBG-60,5123456790\nPUBG-60,5123456791\n', 'big.csv');
  const paths = outboxPaths(rt, b);
  // Every write appears to take 4 s: the next one is due 40 s after it, not 30 s.
  let clock = 0;
  const partials = new PartialResults(() => (clock += 4_000));
  const t0 = b.createdAt + rt.config.partialResultMs;
  complete(rt, b.id, 0, Date.now());
  await partials.update(rt, b, rt.rows.counts(b.id), t0);
  expect(parseResult(readFileSync(paths.partialFile, 'utf8'))[1]!.status).toBe('pending');
  complete(rt, b.id, 1, Date.now());
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + 40_000 - 1);
  expect(parseResult(readFileSync(paths.partialFile, 'utf8'))[1]!.status).toBe('pending');
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + 40_000);
  expect(parseResult(readFileSync(paths.partialFile, 'utf8'))[1]!.status).toBe('completed');
});

it('a failed write is tried again at the next interval, even when nothing more finished', async () => {
  const rt = await world();
  const b = await batchOf('pid,userId\nPUBG-60,5123456789\nPUBG-60,5123456790\n', 'orders.csv');
  const paths = outboxPaths(rt, b);
  const partials = new PartialResults();
  const t0 = b.createdAt + rt.config.partialResultMs;
  complete(rt, b.id, 0, Date.now());
  // A folder where the file should go: the rename fails; the batch goes on.
  mkdirSync(paths.partialFile);
  await partials.update(rt, b, rt.rows.counts(b.id), t0);
  expect(statSync(paths.partialFile).isDirectory()).toBe(true);
  rmdirSync(paths.partialFile);
  await partials.update(rt, b, rt.rows.counts(b.id), t0 + rt.config.partialResultMs);
  expect(parseResult(readFileSync(paths.partialFile, 'utf8')).map((r) => r.status)).toEqual(['completed', 'pending']);
  expect(readdirSync(rt.config.outboxDir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
});
