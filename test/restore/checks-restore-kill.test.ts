/**
 * Stop 37's review of store/backup-checks.ts (issue 32), two defects:
 *  (a) a player check the copy has as `sent` that the replaced store dropped (store/player-checks.ts
 *      unsent: recorded, then held by the gate at a stop; it never left and cost nothing) was kept
 *      by the restore, and became `in-doubt`, "may have been charged": money counted that was never
 *      spent, and the player held back from checks (mayAsk). It stays so: stop 38's review showed a
 *      store id and a generation do not prove the replaced store descends from the copy
 *      (checks-restore-fork.test.ts), and a check that may have been charged is never read as free.
 *  (b) `topup restore` run again after a kill part-way carried no checks: the home's store had been
 *      moved aside (or replaced by the copy) and the second run found none (or the copy). Now a
 *      record beside the store (topup.db.restore-pending) names the stores moved aside until the
 *      restore is done. The real CLI as a child process, SIGKILLed at two chosen points
 *      (TOPUP_CRASH_AT restore-store-kept, restore-copy-in-place), a real sandbox and daemon.
 */
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { carryOverChecks } from '../../src/store/backup-checks.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { registerIdentity } from '../../src/kernel/identity.js';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const PRICE = 0.03;

/** A store at the current schema, its lineage as given, with two checks in flight (`sent`). */
function storeWithFlyingChecks(file: string, id: string, generation: number): void {
  const db = new Database(file);
  registerIdentity(db);
  for (const m of MIGRATIONS) db.exec(m);
  db.pragma(`user_version = ${MIGRATIONS.length}`);
  const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  meta.run('store.id', id);
  meta.run('store.generation', String(generation));
  const call = db.prepare(`INSERT INTO player_check_calls (trxid, kind, player, account, batch_id, outcome, said, at, price_usd) VALUES (?, 'pubg', ?, 'default', NULL, 'sent', NULL, ?, ${PRICE})`);
  call.run('-CHK-1', '5300000001', Date.now() - 60_000);
  call.run('-CHK-2', '5300000002', Date.now() - 60_000);
  db.close();
}

function calls(file: string): { trxid: string; outcome: string }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT trxid, outcome FROM player_check_calls ORDER BY trxid').all() as { trxid: string; outcome: string }[];
  } finally {
    db.close();
  }
}

function checksIn(dbFile: string): { calls: { outcome: string; charged: string; price: number }[]; answers: { player: string; outcome: string }[] } {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return {
      calls: db.prepare('SELECT outcome, charged, price_usd AS price FROM player_check_calls ORDER BY at').all() as { outcome: string; charged: string; price: number }[],
      answers: db.prepare('SELECT player, outcome FROM player_checks ORDER BY player').all() as { player: string; outcome: string }[],
    };
  } finally {
    db.close();
  }
}

describe('player checks carried by a restore', () => {
  for (const lineage of ['the copy\'s own store', 'a store of another lineage'] as const) {
    it(`a check the copy has in flight and the replaced store no longer has is kept, ${lineage}`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'checks-dropped-'));
      const live = join(dir, 'topup.db');
      storeWithFlyingChecks(live, 'S-1', 3);
      const copyFile = join(dir, 'copy.db');
      copyFileSync(live, copyFile);
      // After the copy: -CHK-1 never left (dropped at a stop), -CHK-2 was answered.
      const db = new Database(live);
      registerIdentity(db);
      db.prepare(`DELETE FROM player_check_calls WHERE trxid = '-CHK-1'`).run();
      db.prepare(`UPDATE player_check_calls SET outcome = 'found', charged = 'yes' WHERE trxid = '-CHK-2'`).run();
      if (lineage !== 'the copy\'s own store') db.prepare(`UPDATE meta SET value = 'S-other' WHERE key = 'store.id'`).run();
      else db.prepare(`UPDATE meta SET value = '4' WHERE key = 'store.generation'`).run();
      db.close();
      const copy = new Database(copyFile);
      registerIdentity(copy);
      const carried = carryOverChecks(copy, live);
      copy.close();
      // Nothing proves the copy's -CHK-1 never left, whatever the lineage: kept (it may have been
      // charged); -CHK-2 takes the answer the replaced store recorded.
      expect(carried).toMatchObject({ calls: 1, problem: null });
      expect(calls(copyFile)).toEqual([{ trxid: '-CHK-1', outcome: 'sent' }, { trxid: '-CHK-2', outcome: 'found' }]);
    });
  }

  it('topup restore killed part-way, twice, then run again: the checks made after the backup are carried', async () => {
    const home = tempHome('topup-restore-kill-');
    const sb = await inProcessSandbox({ balanceUsd: 100, players: { checkPriceUsd: PRICE } });
    const env = cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_PRICE_USD: String(PRICE) });
    const daemon = startDaemon(env);
    await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 60_000, 20);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    home.drop('after.csv', csv([['pid', 'userId'], ['PUBG-60', '5300000401']]));
    await waitForResult(home, 'after', 120_000);
    expect(await daemon.stop()).toBe(0);
    const db = join(home.jobs, 'topup.db');
    expect(checksIn(db).calls).toEqual([{ outcome: 'found', charged: 'yes', price: PRICE }]);
    const path = JSON.parse(bk.stdout).path as string;

    // Killed with the home's store moved aside, the copy not in place yet.
    const k1 = await runCli(['restore', path], { ...env, TOPUP_CRASH_AT: 'restore-store-kept:1' });
    expect(k1.signal, k1.stdout + k1.stderr).toBe('SIGKILL');
    expect(existsSync(db)).toBe(false);
    // Run again, killed with the copy in place, the restore not done.
    const k2 = await runCli(['restore', path], { ...env, TOPUP_CRASH_AT: 'restore-copy-in-place:1' });
    expect(k2.signal, k2.stdout + k2.stderr).toBe('SIGKILL');
    // And again, to its end.
    const done = await runCli(['restore', path], env);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/carried over from the replaced store \(what they cost stays counted\): 1 check, 1 kept answer/);
    expect(checksIn(db)).toEqual({ calls: [{ outcome: 'found', charged: 'yes', price: PRICE }], answers: [{ player: '5300000401', outcome: 'found' }] });
    expect(existsSync(`${db}.restore-pending`)).toBe(false);
  }, 300_000);
});
