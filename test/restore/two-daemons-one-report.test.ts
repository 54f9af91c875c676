/**
 * Found by the simulator's `restore` operator action (seed 2 #58; replay in
 * test/sim/found/restore-two-daemons-report.json): a home run by two daemons. After the copy was
 * taken, a `topup submit --again` claimed a file (its trxids salted with its batch: they came from the
 * record that is now lost); it was killed with the home. The copy is restored and both daemons start
 * at once: each notes the `--again` folder (claim/orphans.ts, "new trxids": never ordered blind, a
 * person decides) and each runs the reconcile-first start. The first to finish reported the folder
 * as needing a person and cleared the note; the second, already past the marker, wrote its report
 * without it over the first's (the same file name, the same second) and its summary over
 * `restore.last`: `topup status` said 0 need a person, and the folder's purchases were reported nowhere.
 * The real CLI (`topup backup`, `topup submit --again`, `topup restore`), a real sandbox, and the
 * daemon's own start-up steps (daemon.ts: adoptOrphans, noteOrphansForRestore, the runner's
 * reconcileIfRestored) run by two runtimes of one home at once on its real SQLite file.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, releaseAll, runCli, startDaemon, tempHome, TEST_KEY, waitFor } from '../e2e/harness.js';
import { batchStates } from '../backup/world.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { adoptOrphans } from '../../src/claim/orphans.js';
import { noteOrphansForRestore, reconcileIfRestored, restoreStatus } from '../../src/ops/restore-reconcile.js';

const opened: Runtime[] = [];
afterEach(async () => {
  for (const rt of opened.splice(0)) await rt.close();
  await releaseAll();
});

describe('two daemons of one home start together on a restored copy', () => {
  it('one reconcile ends it, and its report keeps the --again folder that needs a person', async () => {
    const home = tempHome('two-daemons-report-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // After the copy: a `submit --again` whose rows wait (the supplier in maintenance), killed.
    sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const file = join(home.dir, 'again.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123458001'], ['PUBG-60', '5123458002']]));
    await expect(runCli(['submit', '--again', file], env, { timeoutMs: 8_000 })).rejects.toThrow(/timed out/);
    sb.admin.setFaults({ maintenance: null });
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);

    // Two daemons' start-up steps at once.
    const config = loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url });
    const rts = [1, 2].map(() => openRuntime(config, silentLogger(), sb.url));
    opened.push(...rts);
    const orphans = await Promise.all(rts.map((rt) => adoptOrphans(rt)));
    expect(orphans.map((os) => os.map((o) => o.verdict))).toEqual([['new trxids'], ['new trxids']]);
    const again = orphans[0]![0]!.id;
    for (const [i, rt] of rts.entries()) noteOrphansForRestore(rt.meta, orphans[i]!);
    await Promise.all(rts.map((rt) => reconcileIfRestored(rt)));

    // The operator's view: topup status, and the reports in outbox/reports/.
    const status = restoreStatus(rts[0]!.meta, Date.now())!;
    expect(status.pending).toBe(false);
    expect(status.needsPerson).toBe(1);
    expect(status.line).toContain(again);
    const reports = readdirSync(join(home.outbox, 'reports')).filter((f) => f.startsWith('restore-'));
    const named = reports.filter((f) => (JSON.parse(readFileSync(join(home.outbox, 'reports', f), 'utf8')) as { needsPerson: { batch: string }[] }).needsPerson.some((p) => p.batch === again));
    expect(named.length, `reports: ${reports.join(', ')}`).toBe(1);
    expect(reports).toHaveLength(1);
    await sb.close();
  }, 120_000);

  it('the daemon that waited for the other one\'s batches stops waiting once the other ended the reconcile', async () => {
    // Seed 2 (#15) of the simulator: the copy holds an unfinished batch; daemon 0 takes it and
    // reconciles; daemon 1 finds a live process holding the home's batches and tries again every
    // 15 s with the marker it read at its start: for ever, after daemon 0 had removed it. It never
    // sent anything (33 simulated minutes).
    const home = tempHome('two-daemons-wait-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const d = startDaemon(env);
    home.drop('wait.csv', csv([['pid', 'userId'], ['PUBG-60', '5123458101']]));
    await waitFor('the batch stored, its row waiting', () => batchStates(home).some((b) => b.state === 'open'), 60_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    await d.stop();
    sb.admin.setFaults({ maintenance: null });
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);

    const config = loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: sb.url });
    const rts = [1, 2].map(() => openRuntime(config, silentLogger(), sb.url));
    opened.push(...rts);
    // Each keeps the leases it holds, as a daemon's runner does (the first to take the batch keeps it).
    const keep = setInterval(() => { for (const rt of rts) rt.batches.renewAll(rt.owner, Date.now(), 15_000); }, 1_000);
    const t0 = Date.now();
    const ended = await Promise.race([
      Promise.all(rts.map((rt) => reconcileIfRestored(rt))).then(() => 'both ended'),
      new Promise<string>((r) => setTimeout(() => r('still waiting after 45 s'), 45_000)),
    ]);
    clearInterval(keep);
    expect(ended).toBe('both ended');
    // One reconcile (the first's retry interval, 15 s, at most one wait).
    expect(Date.now() - t0).toBeLessThan(40_000);
    expect(restoreStatus(rts[0]!.meta, Date.now())!.pending).toBe(false);
    await sb.close();
  }, 180_000);
});
