/**
 * The mirror of rename-under-daemon.test.ts, found by the simulator (seed 101, `--workers 1`,
 * schedule 29: STALL, "not finished after 360 simulated minutes … owner sim:10:submit, wait
 * account"; test/sim/found/rename-under-submit.json). A `topup submit` runs on accounts.toml as it
 * was; the daemon is started on an edited accounts.toml that renames `second` to `backup` (the same
 * URL and key) and applies the rename at its start, as it must: the submit's rows go to `backup`,
 * a name the submit never read. The submit could not send them ("accounts.toml no longer names"
 * it: untrue), and the daemon never takes a batch a live process holds: the rows waited for ever.
 * Now the submit sees the rename made under it, says so, and hands the batch back (its runner
 * stops, its lease is released); the daemon buys the row on `backup`, once.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, startCli, startDaemon, tempHome, TEST_KEY, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

function accounts(home: TempHome, main: RunningSandbox, second: RunningSandbox, secondName: string): void {
  mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
  writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${main.url}"\nkey_file = "keys/k"\n\n[[account]]\nname = "${secondName}"\nurl = "${second.url}"\nkey_file = "keys/k"\n`);
}

describe('an account renamed by a daemon started while a topup submit runs on the old name', () => {
  it('the submit hands its batch back, saying why; the daemon buys the row once, on the renamed account', async () => {
    const home = tempHome('rename-submit-');
    const a = await inProcessSandbox();
    const b = await inProcessSandbox();
    accounts(home, a, b, 'second');
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    // `second` in maintenance: the submit's row, pinned there, waits unsent.
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const file = join(home.dir, 'shop.csv');
    writeFileSync(file, csv([['pid', 'userId', 'trxid', 'account'], ['PUBG-60', '5123456789', 'RS-1', 'second']]));
    const submit = startCli(['submit', file], env);
    const exited = new Promise<number | null>((resolve) => submit.on('exit', (code) => resolve(code)));
    let daemon: ReturnType<typeof startDaemon> | undefined;
    try {
      await waitFor('the submit met the maintenance', () => b.admin.calls().some((c) => c.route === 'POST /orders'), 60_000, 50);
      // The operator renames `second` to `backup` (the same URL and key) and starts the daemon on it.
      accounts(home, a, b, 'backup');
      daemon = startDaemon(env);
      await waitFor('the daemon started', () => daemon!.output().includes('topup daemon started'), 60_000, 20);
      b.admin.setFaults({ maintenance: null });
      // The submit lets go (within its 30 s look at rows on accounts it does not have) and says why.
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 90_000))]);
      expect(code, submit.output().slice(-3000)).toBe(1);
      expect(submit.output()).toMatch(/renamed in accounts\.toml by a process started after this one/);
      expect(submit.output()).toMatch(/is not finished; the daemon running on this home \(pid \d+\) carries it on/);
      // The daemon buys it, once, on `backup`.
      await waitForResult(home, 'shop', 60_000);
      const rows = readResult(home, 'shop');
      expect(rows.map((r) => [r.trxid, r.status])).toEqual([['RS-1', 'completed']]);
      expect(b.admin.ledger().orders.map((o) => o.trxid)).toEqual(['RS-1']);
      expect(a.admin.ledger().orders).toEqual([]);
    } finally {
      if (submit.exitCode === null && submit.signalCode === null) submit.kill('SIGKILL');
      if (daemon) expect(await daemon.stop()).toBe(0);
    }
  }, 300_000);
});
