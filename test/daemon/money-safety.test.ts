/**
 * Issue 20, with real processes where the defect needs two or a signal: the real CLI (dist/) as
 * child processes on one home, the real sandbox and its ledger.
 *  - defect 1: two `topup submit` runs started together, an edited copy of one file each, bought
 *    every purchase twice: the repeats check ran while each file was read, before either batch
 *    opened. Now it runs in the transaction that opens the batch.
 *  - defect 4: a daemon stopped (SIGTERM) while a row's request waited out a Retry-After hold left
 *    that row `sending` and the batch released; the next daemon took the batch without taking the
 *    row over, and `daemon --once` never ended. (The stop itself: test/unit/money-defects.test.ts.)
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime } from '../../src/runtime.js';
import { TEST_KEY } from '../e2e/harness.js';

releaseAfterEach();

describe('money safety with two processes and a stop', () => {
  it('two submits of edited copies of one file, started together, buy each purchase once', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const buys = [['PUBG-60', '5123456701'], ['PUBG-60', '5123456702'], ['PUBG-325', '5123456703'], ['PUBG-60', '5123456704'], ['PUBG-60', '5123456705']];
    // 60,000 invalid rows after the purchases keep both processes reading at the same time.
    const filler = Array.from({ length: 60_000 }, (_, i) => ['NOPE-1', String(7_000_000_000 + i)]);
    const a = join(home.dir, 'a.csv');
    const b = join(home.dir, 'b.csv');
    writeFileSync(a, csv([['pid', 'userId'], ...buys, ...filler]));
    writeFileSync(b, csv([['pid', 'userId', 'note'], ...buys.map((r) => [...r, 'edited']), ...filler.map((r) => [...r, ''])]));
    const [ra, rb] = await Promise.all([runCli(['submit', a, '--json'], env, { timeoutMs: 120_000 }), runCli(['submit', b, '--json'], env, { timeoutMs: 120_000 })]);
    // Both submits answer with their counts; when one does not, its own words say why.
    expect(ra.stdout, `a.csv: exit ${ra.code}: ${ra.stderr.slice(-2000)}`).not.toBe("");
    expect(rb.stdout, `b.csv: exit ${rb.code}: ${rb.stderr.slice(-2000)}`).not.toBe("");
    const counts = [JSON.parse(ra.stdout).counts, JSON.parse(rb.stdout).counts];
    expect(sb.admin.ledger().orders).toHaveLength(5);
    expect(counts.map((c) => c.completed).sort()).toEqual([0, 5]);
    expect(counts.map((c) => c.skipped).sort()).toEqual([0, 5]);
  }, 180_000); // two CLI processes and a sandbox: past 60 s once on a loaded CI machine

  it('a batch released with a row left `sending` (as a stop during a Retry-After hold left it) is finished by the next daemon, bought once', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    // The state the stop left: the batch stored and released (owner NULL), row 0's intent committed
    // and its request never sent. Made with the real store; the next daemon is the real CLI.
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url }), silentLogger(), sb.url);
    const file = join(home.dir, 'hold.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-60', '5123456780']]));
    const batch = await claimFile(rt, file, { origin: 'submit', own: true, move: false });
    await loadBatch(rt, batch);
    const t = Date.now() - 5_000;
    rt.db.prepare(`UPDATE rows SET state = 'sending', attempts = 1, first_sent_at = ?, last_sent_at = ?, next_try_at = ? WHERE batch_id = ? AND idx = 0`).run(t, t, t + 15_000, batch.id);
    rt.batches.releaseAll(rt.owner);
    await rt.close();

    const once = await runCli(['daemon', '--once'], env, { timeoutMs: 60_000 });
    expect(once.code, once.stderr).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);
  });
});
