/**
 * Issue 32, defect 1 (money): a restore after a failover bought twice. Two accounts with two real
 * sandboxes; a file's rows wait on `main` (its supplier in maintenance); an online copy of the store
 * is taken; the rows fail over and are bought on `second` as `<trxid>-second`; the batch finishes.
 * The copy is put back and the daemon started: the rows are `pending` on `main` again. Before the
 * fix they were bought there too (two charges per row). Now the first start looks each row up at
 * every account under the trxids a move gives, settles them from what `second` says, and sends
 * nothing: 0 bought twice across both ledgers.
 *
 * Twice: with a copy made by hand (SQLite's online backup from another process, then the file put
 * back over jobs/topup.db: recognised by the home's store generation mark), and with
 * `topup backup` / `topup restore` (recognised by the marker inside the copy).
 */
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';
import { batchStates, ledgerTrxids, storedRows, twoAccounts } from './world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'MV-1'], ['PUBG-60', '5123456002', 'MV-2'], ['PUBG-60', '5123456003', 'MV-3']]);

async function scenario(copy: (home: TempHome, env: NodeJS.ProcessEnv) => Promise<void>, restore: (home: TempHome, env: NodeJS.ProcessEnv) => Promise<void>) {
  // Priority routing: every row goes to `main` first; 12 s in its queue (room for the copy to be
  // taken by a CLI starting on a loaded machine), then they move.
  const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "12s"');
  a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
  const first = startDaemon(env);
  home.drop('mv.csv', FILE);
  await waitFor('the rows stored, waiting on main', () => {
    const rows = storedRows(home);
    return rows.length === 3 && rows.every((r) => r.state === 'pending' && r.account === 'main');
  }, 30_000);
  await copy(home, env);
  await waitForResult(home, 'mv', 60_000);
  await first.stop();
  // Bought once each, on `second`, under the moved trxids.
  expect(ledgerTrxids(a)).toEqual([]);
  expect(ledgerTrxids(b).sort()).toEqual(['MV-1-second', 'MV-2-second', 'MV-3-second']);
  a.admin.setFaults({ maintenance: null });

  await restore(home, env);
  // On main again, not sent there. A copy taken by hand may catch the row the daemon probes a
  // paused account with (one order, answered MAINTENANCE) while it is on its way: `sending`, in
  // doubt, the harder case (resent on main under its own trxid, it would be a second purchase).
  expect(storedRows(home).map((r) => [r.state === 'sending' ? 'pending' : r.state, r.account, r.trxid])).toEqual([
    ['pending', 'main', 'MV-1'], ['pending', 'main', 'MV-2'], ['pending', 'main', 'MV-3'],
  ]);
  const second = startDaemon(env);
  await waitFor('the restored batch done', () => batchStates(home).every((x) => x.state === 'done') && batchStates(home).length === 1, 60_000);
  await second.stop();

  // 0 bought twice: nothing on main, each row once on second.
  expect(ledgerTrxids(a)).toEqual([]);
  expect(ledgerTrxids(b).sort()).toEqual(['MV-1-second', 'MV-2-second', 'MV-3-second']);
  // The store names the orders second has.
  const orders = new Map(b.admin.ledger().orders.map((o) => [String(o.trxid), String(o.orderId)]));
  expect(storedRows(home).map((r) => [r.state, r.account, r.trxid, r.order_id])).toEqual(
    ['MV-1', 'MV-2', 'MV-3'].map((t) => ['completed', 'second', `${t}-second`, orders.get(`${t}-second`)]),
  );
  // The report says what was settled from the suppliers.
  const reports = readdirSync(join(home.outbox, 'reports')).filter((f) => f.startsWith('restore-'));
  expect(reports).toHaveLength(1);
  const report = JSON.parse(readFileSync(join(home.outbox, 'reports', reports[0]!), 'utf8'));
  expect(report.settled.map((s: { trxid: string; how: string }) => [s.trxid, s.how]).sort()).toEqual(
    [['MV-1-second', 'moved trxid'], ['MV-2-second', 'moved trxid'], ['MV-3-second', 'moved trxid']],
  );
  const status = await runCli(['status'], env);
  expect(status.stdout).toMatch(/restore: reconciled .*3 settled from the suppliers, 0 need a person/);
  return { home };
}

describe.concurrent('a restore after a failover', () => {
  it('a copy taken by hand and put back over jobs/topup.db: the first start settles the rows from second, nothing bought on main', released(async () => {
    let copyPath = '';
    await scenario(
      async (home) => {
        copyPath = join(home.dir, 'hand-copy.db');
        const live = new Database(join(home.jobs, 'topup.db'), { readonly: true });
        await live.backup(copyPath);
        live.close();
      },
      async (home) => {
        for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
        copyFileSync(copyPath, join(home.jobs, 'topup.db'));
      },
    );
  }), 180_000);

  it('topup backup while the daemon runs, topup restore into the stopped home: the same', released(async () => {
    let backupDir = '';
    const { home } = await scenario(
      async (home, env) => {
        const r = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
        expect(r.code, r.stderr).toBe(0);
        backupDir = JSON.parse(r.stdout).path;
      },
      async (_home, env) => {
        const r = await runCli(['restore', backupDir], env);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/integrity ok/);
      },
    );
    expect(existsSync(backupDir)).toBe(true);
    expect(readdirSync(home.jobs).some((f) => f.startsWith('topup.db.replaced-'))).toBe(true);
  }), 180_000);
});
