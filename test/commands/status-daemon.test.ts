/**
 * Issue 30 (7): `topup status` said "no process is running it: start the daemon" for a new retry
 * batch while the daemon ran (it takes new batches up at its next look). Now it says the daemon
 * running on the home takes it up; with no daemon it still says to start one.
 *
 * Real parts: a temp home's store, a batch claimed as `topup retry`/`submit` leave it (no process
 * holds it yet), the daemon's presence record as a running daemon writes it (store/presence.ts),
 * and the real CLI as a child process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { claimFile } from '../../src/claim/claim.js';
import { announceDaemon } from '../../src/store/presence.js';
import { cliEnv, csv, releaseAll, runCli, tempHome } from '../e2e/harness.js';

const opened: Runtime[] = [];
afterEach(async () => {
  for (const rt of opened.splice(0)) await rt.close();
  await releaseAll();
});

async function homeWithQueuedBatch() {
  const home = tempHome('topup-status-daemon-');
  const env = cliEnv(home, { url: 'http://127.0.0.1:9' });
  const rt = openRuntime(loadConfig({}, env as never), silentLogger(), 'http://127.0.0.1:9');
  opened.push(rt);
  const file = join(home.dir, 'again.csv');
  writeFileSync(file, csv([['trxid', 'pid', 'userId'], ['R-1', 'PUBG-60', '5123456701']]));
  const batch = await claimFile(rt, file, { origin: 'submit', move: false });
  return { home, env, rt, batch };
}

describe('topup status of a batch no process holds yet', () => {
  it('says the running daemon takes it up, not "start the daemon"', async () => {
    const { env, rt, batch } = await homeWithQueuedBatch();
    // This test process stands in for the daemon: it writes the presence record a daemon writes.
    const stop = announceDaemon(rt.meta, rt.owner, { once: false });
    try {
      const r = await runCli(['status', batch.id, '--json'], env);
      expect(r.code, r.stderr).toBe(0);
      const why = JSON.parse(r.stdout).batch.why as string;
      expect(why).toContain(`the daemon running on this home (pid ${process.pid}) takes it up at its next look`);
      expect(why).not.toContain('no process is running it');
      const list = await runCli(['status', '--json'], env);
      expect(JSON.parse(list.stdout).batches[0].why).not.toContain('start the daemon');
    } finally {
      stop();
    }
  }, 60_000);

  it('with no daemon running, still says to start one', async () => {
    const { env, batch } = await homeWithQueuedBatch();
    const r = await runCli(['status', batch.id, '--json'], env);
    expect(JSON.parse(r.stdout).batch.why).toContain('no process is running it: start the daemon');
  }, 60_000);
});
