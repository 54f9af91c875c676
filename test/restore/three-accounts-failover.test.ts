/**
 * Issue 32 finding 1 with three accounts (adversarial review): a file's rows wait on `main` and
 * `second` (both in maintenance), an online copy is taken, the rows fail over and are bought on
 * `third` as `<trxid>-third`. The copy restored, every supplier back: the first start finds them on
 * `third` under the trxid a move gives and buys nothing on `main` or `second`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, TEST_KEY, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { batchStates, ledgerTrxids, storedRows } from '../backup/world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123459001', 'TA-1'], ['PUBG-60', '5123459002', 'TA-2']]);

describe('a restore after a failover across three accounts', () => {
  it('the rows bought on third are settled from it: nothing bought on main or second', async () => {
    const home = tempHome('restore-three-');
    const [a, b, c] = [await inProcessSandbox(), await inProcessSandbox(), await inProcessSandbox()];
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    let toml = 'routing = "priority"\nmax_queue_delay = "8s"\n';
    for (const [name, sb] of [['main', a], ['second', b], ['third', c]] as const) {
      writeFileSync(join(home.dir, 'keys', `${name}.key`), TEST_KEY, { mode: 0o600 });
      toml += `\n[[account]]\nname = "${name}"\nurl = "${sb.url}"\nkey_file = "keys/${name}.key"\n`;
    }
    writeFileSync(join(home.dir, 'accounts.toml'), toml);
    const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const first = startDaemon(env);
    home.drop('ta.csv', FILE);
    await waitFor('the rows stored, waiting on main', () => {
      const rows = storedRows(home);
      return rows.length === 2 && rows.every((r) => r.state === 'pending' && r.account === 'main');
    }, 30_000);
    const r = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const backupDir = JSON.parse(r.stdout).path;
    await waitForResult(home, 'ta', 90_000);
    await first.stop();
    expect([...ledgerTrxids(a), ...ledgerTrxids(b)]).toEqual([]);
    const bought = ledgerTrxids(c).sort();
    expect(bought).toHaveLength(2);
    a.admin.setFaults({ maintenance: null });
    b.admin.setFaults({ maintenance: null });

    const rs = await runCli(['restore', backupDir], env);
    expect(rs.code, rs.stderr).toBe(0);
    const second = startDaemon(env);
    await waitFor('the restored batch done', () => batchStates(home).length === 1 && batchStates(home).every((x) => x.state === 'done'), 90_000);
    await second.stop();
    expect([...ledgerTrxids(a), ...ledgerTrxids(b)]).toEqual([]);
    expect(ledgerTrxids(c).sort()).toEqual(bought);
    expect(storedRows(home).map((x) => [x.state, x.account])).toEqual([['completed', 'third'], ['completed', 'third']]);
  }, 240_000);
});
