/**
 * The repeat check's window is measured from the earlier BATCH's creation, not from its purchase:
 * a batch that waited (for balance over a weekend, for the catalog) past TOPUP_REPEAT_WINDOW is not
 * seen by an edited re-drop of the same file, and both buy. Real stores, the real loader; the
 * waiting is simulated by moving the first batch's created_at back 30 hours (nothing else changes).
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

for (const first of ['still pending (waiting for balance)', 'bought an hour ago'] as const) {
  it(`an edited re-drop 30 h after the first file was claimed, whose rows are ${first}: skipped as repeats`, async () => {
    const home = tempHome();
    homes.push(home);
    const sb = await inProcessSandbox();
    sandboxes.push(sb);
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
    runtimes.push(rt);
    const buys = [['PUBG-60', '5123456701'], ['PUBG-60', '5123456702']];
    const fileA = join(home.dir, 'a.csv');
    writeFileSync(fileA, csv([['pid', 'userId'], ...buys]));
    const a = await claimFile(rt, fileA, { origin: 'submit', own: true, move: false });
    expect(await loadBatch(rt, a)).toMatchObject({ loaded: true });
    const now = Date.now();
    rt.db.prepare('UPDATE batches SET created_at = ? WHERE id = ?').run(now - 30 * 3_600_000, a.id);
    if (first === 'bought an hour ago') {
      rt.db.prepare(`UPDATE rows SET state = 'completed', order_id = 'ORD-' || idx, first_sent_at = ?, last_sent_at = ? WHERE batch_id = ?`).run(now - 3_600_000, now - 3_600_000, a.id);
    }
    const fileB = join(home.dir, 'b.csv');
    writeFileSync(fileB, csv([['pid', 'userId', 'note'], ...buys.map((r) => [...r, 'edited'])]));
    const b = await claimFile(rt, fileB, { origin: 'submit', own: true, move: false });
    expect(await loadBatch(rt, b)).toMatchObject({ loaded: true });
    expect(rt.rows.counts(b.id)).toMatchObject({ skipped: 2, pending: 0 });
  });
}
