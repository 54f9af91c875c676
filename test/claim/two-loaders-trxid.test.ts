/**
 * Two processes storing edited copies of one file whose rows carry their OWN trxids (the repeat
 * check does not look at them; the trxid rule must hold): each trxid stored once across both, and
 * every input row of both files has its row (no crash, no stall).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { csv, inProcessSandbox, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';

const homes: TempHome[] = [];
const sandboxes: RunningSandbox[] = [];
const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
  for (const sb of sandboxes.splice(0)) await sb.close();
  for (const h of homes.splice(0)) h.remove();
});

it('given trxids, two loaders at once: one stores them, the other refuses those rows (never an uncaught constraint error)', async () => {
  const home = tempHome();
  homes.push(home);
  const sb = await inProcessSandbox();
  sandboxes.push(sb);
  const mk = (): Runtime => {
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
    runtimes.push(rt);
    return rt;
  };
  const a = mk();
  const b = mk();
  const buys = [1, 2, 3, 4, 5].map((i) => ['PUBG-60', `512345670${i}`, `SHOP-${i}`]);
  const filler = Array.from({ length: 6_000 }, (_, i) => ['NOPE-1', String(7_000_000_000 + i), '']);
  const fileA = join(home.dir, 'a.csv');
  const fileB = join(home.dir, 'b.csv');
  writeFileSync(fileA, csv([['pid', 'userId', 'trxid'], ...filler, ...buys]));
  writeFileSync(fileB, csv([['pid', 'userId', 'trxid', 'note'], ...filler.map((r) => [...r, '']), ...buys.map((r) => [...r, 'edited'])]));
  const batchA = await claimFile(a, fileA, { origin: 'submit', own: true, move: false });
  const batchB = await claimFile(b, fileB, { origin: 'submit', own: true, move: false });
  const [la, lb] = await Promise.allSettled([loadBatch(a, batchA), loadBatch(b, batchB)]);
  const summary = { a: la.status === 'fulfilled' ? la.value : String(la.reason), b: lb.status === 'fulfilled' ? lb.value : String(lb.reason) };
  expect(summary).toMatchObject({ a: { loaded: true }, b: { loaded: true } });
  // Each given trxid is stored once, in one of the two batches (which one may differ row by row: the
  // loaders' chunks interleave as the machine schedules them; a CI run under load stored SHOP-1 in one
  // batch and SHOP-2..5 in the other), and every input row of both files has its row.
  const holders = (t: string) => (a.db.prepare(`SELECT count(*) AS n FROM rows WHERE batch_id IN (?, ?) AND trxid = ?`).get(batchA.id, batchB.id, t) as { n: number }).n;
  expect([1, 2, 3, 4, 5].map((i) => holders(`SHOP-${i}`))).toEqual([1, 1, 1, 1, 1]);
  const rowsOf = (id: string) => (a.db.prepare(`SELECT count(*) AS n FROM rows WHERE batch_id = ?`).get(id) as { n: number }).n;
  expect([rowsOf(batchA.id), rowsOf(batchB.id)]).toEqual([6_005, 6_005]);
});
