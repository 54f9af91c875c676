/**
 * Trial s36 D7: after a kill -9 the new daemon took ~38 s (load 15) to start, and meanwhile
 * `topup status` said the batch had "no process is running it: start the daemon" while that
 * daemon's process existed. Now the daemon marks itself starting as the process's first act
 * (before its ~450 modules load and the store opens), and status says a daemon is starting (pid).
 * Real CLI, real daemon, in-process sandbox; the new daemon is frozen (SIGSTOP) once it has the
 * store open, still starting: its presence in the store is written later, after the start's checks.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

/** Whether the process has the store's file open (it is then past loading its modules). */
function hasStoreOpen(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith('/jobs/topup.db');
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

describe.skipIf(process.platform !== 'linux')('status while a daemon starts', () => {
  it('after a kill -9, a daemon still starting is named by status (pid), not "no process is running it"', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ fulfilment: { processingShare: 0.5, processingMs: [200, 500], failShare: 0 } });
    home.drop('crash.csv', csv([['pid', 'userId'], ...Array.from({ length: 8 }, (_, i) => ['PUBG-60', `5${String(100000 + i)}`])]));
    const env = cliEnv(home, sb);
    const killed = await runCli(['daemon', '--once'], { ...env, TOPUP_CRASH_AT: 'intent-committed:3' });
    expect(killed.signal).toBe('SIGKILL');
    // Once the dead daemon's lease has run out (15 s), the batch is queued and nobody runs it.
    await waitFor('the lease of the killed daemon ran out', async () => ((await runCli(['status'], env)).stdout.includes('no process is running it') ? true : undefined), 60_000, 1_000);

    const daemon = startDaemon(env);
    const pid = daemon.child.pid!;
    await waitFor('the new daemon opened the store', () => hasStoreOpen(pid), 120_000, 2);
    process.kill(pid, 'SIGSTOP');
    let status;
    try {
      status = await runCli(['status'], env);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    console.log(`status while the daemon starts: ${status.stdout.trim()}`);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).not.toContain('no process is running it');
    expect(status.stdout).toContain(`a daemon is starting on this home (pid ${pid})`);

    // Once started it takes the batch up and finishes it; its start line says where the time went.
    await waitFor('the daemon started', () => (daemon.output().includes('topup daemon started') ? true : undefined), 120_000, 100);
    console.log(`start phases (ms): ${/"startMs":(\{[^}]*\})/.exec(daemon.output())?.[1] ?? '(not logged)'}`);
    await waitFor('the batch done', async () => ((await runCli(['status'], env)).stdout.includes('done') ? true : undefined), 120_000, 500);
    expect(await daemon.stop()).toBe(0);
    // Stopped: no stale "starting" left behind.
    const after = await runCli(['status'], env);
    expect(after.stdout).not.toContain('is starting');
  }, 300_000);
});
