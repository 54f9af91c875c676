/**
 * Issue 32, adversarial review of the restore: a copy taken BEFORE a file was claimed. The file's
 * rows wait on `main` (in maintenance), fail over and are bought on `second` as `<trxid>-second`;
 * the batch finishes. The operator restores the older copy (or the store is lost) and drops the
 * day's file again, as docs/backup.md and docs/standby.md tell them ("the same bytes give the same
 * trxids, so rows already bought are met as replays"). The copy never knew the batch, so the
 * reconcile had nothing to look up; the re-dropped file is a new batch whose rows go to `main`
 * under their first trxids, which `main` has never seen: bought a second time.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';
import { batchStates, ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'RD-1'], ['PUBG-60', '5123456002', 'RD-2'], ['PUBG-60', '5123456003', 'RD-3']]);

async function scenario(beforeClaim: (home: TempHome, env: NodeJS.ProcessEnv) => Promise<void>, lose: (home: TempHome, env: NodeJS.ProcessEnv) => Promise<void>, how: 'drop' | 'submit' = 'drop') {
  const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
  a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
  const first = startDaemon(env);
  // The home's store mark (store/backup.ts MARK_FILE), written once the daemon has opened its
  // store: temp homes start with jobs/topup.db already there (harness.ts tempHome).
  await waitFor('the store opened by the daemon', () => existsSync(join(home.dir, '.topup-store-mark')), 30_000);
  await beforeClaim(home, env);
  home.drop('rd.csv', FILE);
  await waitForResult(home, 'rd', 60_000);
  await first.stop();
  expect(ledgerTrxids(a)).toEqual([]);
  expect(ledgerTrxids(b).sort()).toEqual(['RD-1-second', 'RD-2-second', 'RD-3-second']);
  a.admin.setFaults({ maintenance: null });

  await lose(home, env);
  const second = startDaemon(env);
  // The reconcile-first start done (nothing of this batch in the store), then the file again.
  await waitFor('the daemon sending again', () => /sending starts now|idle|watching/i.test(second.output()), 60_000).catch(() => undefined);
  if (how === 'drop') home.drop('rd.csv', FILE);
  else {
    // A foreground `topup submit` of the same file beside the running daemon: its batch is looked
    // up by the submit's own process; neither waits for the other.
    const file = join(home.dir, 'rd.csv');
    writeFileSync(file, FILE);
    const r = await runCli(['submit', file], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
  }
  await waitFor('the re-dropped batch ended', () => {
    const bs = batchStates(home);
    return bs.length >= 1 && bs.every((x) => ['done', 'failed', 'duplicate', 'cancelled'].includes(x.state)) && storedRows(home).every((r) => !['pending', 'sending', 'resending', 'verifying', 'searching'].includes(r.state));
  }, 90_000);
  await second.stop();
  // 0 bought twice: nothing on main; each row once on second.
  expect(ledgerTrxids(a)).toEqual([]);
  expect(ledgerTrxids(b).sort()).toEqual(['RD-1-second', 'RD-2-second', 'RD-3-second']);
  // The re-dropped file's rows name the orders second has (settled from it, never sent).
  const orders = new Map(b.admin.ledger().orders.map((o) => [String(o.trxid), String(o.orderId)]));
  const again = storedRows(home).filter((r) => r.state !== 'duplicate');
  expect(again.map((r) => [r.state, r.account, r.trxid, r.order_id])).toEqual(
    ['RD-1', 'RD-2', 'RD-3'].map((t) => ['completed', 'second', `${t}-second`, orders.get(`${t}-second`)]),
  );
  return { home, env };
}

describe.concurrent('a file dropped again after a restore of a copy older than its claim, whose rows had failed over', () => {
  it('topup backup before the claim, topup restore, the same file dropped again: nothing bought on main', released(async () => {
    let backupDir = '';
    await scenario(
      async (home, env) => {
        const r = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
        expect(r.code, r.stderr).toBe(0);
        backupDir = JSON.parse(r.stdout).path;
      },
      async (_home, env) => {
        const r = await runCli(['restore', backupDir], env);
        expect(r.code, r.stderr).toBe(0);
      },
    );
  }), 240_000);

  it('topup restore, then topup submit of the same file while the daemon runs: nothing bought on main, neither waits for the other', released(async () => {
    let backupDir = '';
    await scenario(
      async (home, env) => {
        const r = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
        expect(r.code, r.stderr).toBe(0);
        backupDir = JSON.parse(r.stdout).path;
      },
      async (_home, env) => {
        const r = await runCli(['restore', backupDir], env);
        expect(r.code, r.stderr).toBe(0);
      },
      'submit',
    );
  }), 240_000);

  it('the store deleted, the same file dropped again: nothing bought on main', released(async () => {
    await scenario(
      async () => undefined,
      async (home) => {
        for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
      },
    );
  }), 240_000);
});
