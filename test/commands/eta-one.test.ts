/**
 * Issue 30 (7): the console and `topup status` showed different ETAs at the same moment (the
 * console had its own pace over the last two minutes, and none for its first five seconds). Both
 * now show ops/batch-view.ts etaSeconds: the pace of the rows ended through the API since the
 * batch started sending.
 *
 * Real parts: the in-process sandbox (the catalog), a temp home's store with a batch claimed and loaded by the real intake, ten of its
 * twenty rows ended (written as the engine's end state), the console's LiveFeed on that store,
 * and `topup status --json` from the real CLI on the same home.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { Listing } from '../../src/store/listing.js';
import { FiguresCache } from '../../src/console/figures.js';
import { LiveFeed } from '../../src/console/live.js';
import { etaSeconds, snapshot } from '../../src/ops/batch-view.js';
import { cliEnv, csv, inProcessSandbox, releaseAll, runCli, tempHome } from '../e2e/harness.js';

const opened: Runtime[] = [];
afterEach(async () => {
  for (const rt of opened.splice(0)) await rt.close();
  await releaseAll();
});

describe('one ETA for the console and topup status', () => {
  it('the console shows the ETA status shows, from the first look', async () => {
    const home = tempHome('topup-eta-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const rt = openRuntime(loadConfig({}, env as never), silentLogger(), sb.url);
    opened.push(rt);
    const file = join(home.dir, 'twenty.csv');
    writeFileSync(file, csv([['pid', 'userId'], ...Array.from({ length: 20 }, (_, i) => ['PUBG-60', `51234567${String(i).padStart(2, '0')}`])]));
    const batch = await claimFile(rt, file, { origin: 'submit', move: false, own: true });
    expect((await loadBatch(rt as never, rt.batches.get(batch.id)!)).loaded).toBe(true);
    const now = Date.now();
    // Half the rows ended through the API; the batch started sending 100 s ago and is held by a live process.
    rt.db.prepare(`UPDATE rows SET state = 'completed' WHERE batch_id = ? AND idx < 10`).run(batch.id);
    rt.db.prepare(`UPDATE batches SET started_at = ?, owner = ?, lease_until = ?, state = 'open' WHERE id = ?`).run(now - 100_000, rt.owner, now + 600_000, batch.id);
    const b = rt.batches.get(batch.id)!;
    const s = snapshot(rt.rows, b.id);
    expect(s.counts.completed).toBe(10);
    const live = new LiveFeed(rt, new Listing(rt.db, rt.batches), new FiguresCache(rt)).compute(now);
    const shown = live.batches.find((x) => x.id === b.id)!;
    expect(shown.etaSec).toBe(100);
    expect(shown.etaSec).toBe(etaSeconds(b, s, null, now));
    const r = await runCli(['status', '--json'], env);
    const st = JSON.parse(r.stdout).batches.find((x: { id: string }) => x.id === b.id);
    // Same function, a few seconds later: the pace since the start is the same, the elapsed time a little longer.
    const later = Math.round((Date.now() - (now - 100_000)) / 1000);
    expect(st.etaSec).toBeGreaterThanOrEqual(100);
    expect(st.etaSec).toBeLessThanOrEqual(later + 1);
  }, 60_000);
});
