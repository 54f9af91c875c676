/**
 * review38 (adversarial review of 9daac04, store/backup-checks.ts continuationOf): "the replaced
 * store is the copy's own continuation" is decided by the same store id and a generation not
 * below the copy's. A generation says WHEN a store last started, not that it DESCENDS from the
 * copy: a home restored first from an OLDER copy (its store lost or unreadable, so nothing was
 * carried: the restore warns) runs on with the home's mark (outside jobs/), so markGeneration
 * raises it above every copy taken before. Restoring then the NEWER copy (found later on another
 * disk) over it, every check that newer copy had in flight (`sent`: it may have been charged) is
 * absent from the replaced store only because that store forked before the check was made, and
 * 9daac04 drops it as "never left, cost nothing". Before 9daac04 it was kept (`in-doubt`).
 *
 * Money rule broken: a call that may have been charged is read as not charged (its cost leaves the
 * summaries and the console's check money; mayAsk no longer holds the player back).
 *
 * Stores built as test/restore/checks-restore-kill.test.ts builds them (real SQLite files at the
 * current schema); the generations are what store/backup.ts markGeneration writes.
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { carryOverChecks } from '../../src/store/backup-checks.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { registerIdentity } from '../../src/kernel/identity.js';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

function store(file: string, id: string, generation: number, flying: string[]): void {
  const db = new Database(file);
  registerIdentity(db);
  for (const m of MIGRATIONS) db.exec(m);
  db.pragma(`user_version = ${MIGRATIONS.length}`);
  const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  meta.run('store.id', id);
  meta.run('store.generation', String(generation));
  const call = db.prepare(`INSERT INTO player_check_calls (trxid, kind, player, account, batch_id, outcome, said, at, price_usd) VALUES (?, 'pubg', ?, 'default', NULL, 'sent', NULL, ?, 0.03)`);
  flying.forEach((t, i) => call.run(t, `530000000${i + 1}`, Date.now() - 60_000));
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

describe('review38: a restore over a store of the same id that forked before the copy', () => {
  it('keeps the checks the copy had in flight (they may have been charged)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'checks-fork-'));
    // The home's store S-1 at generation 3 with a check in flight: the copy B is taken then.
    const newer = join(dir, 'copy-B.db');
    store(newer, 'S-1', 3, ['-CHK-1']);
    // The home's store went on (generation 4 in the mark, -CHK-1 answered and charged), then was
    // lost. The operator restored an OLDER copy C0 (generation 2, before -CHK-1): nothing to carry
    // from (the restore warns), and the daemon started on it: markGeneration wrote
    // max(2, the mark's 4) + 1 = 5. That store never knew -CHK-1.
    const live = join(dir, 'topup.db');
    store(live, 'S-1', 5, []);
    // Now the newer copy B is found and restored over it.
    const copy = join(dir, 'restoring.db');
    copyFileSync(newer, copy);
    const db = new Database(copy);
    registerIdentity(db);
    const carried = carryOverChecks(db, live);
    db.close();
    // The replaced store is not B's continuation (it descends from C0): nothing proves -CHK-1
    // never left. Main: dropped 1, and -CHK-1 is gone from the restored store.
    expect(carried).not.toHaveProperty('dropped');
    expect(calls(copy)).toEqual([{ trxid: '-CHK-1', outcome: 'sent' }]);
  });
});

/**
 * review38, second gap of 9daac04 (store/backup.ts restoreBackup, backup-checks.ts isCopyUnchanged):
 * a run of `topup restore` after a kill skips a store moved aside whose store id and generation are
 * the copy's ("the copy a killed run put in place, nothing ran on it since"). But only the daemon
 * raises the generation (ops/backup-job.ts startStoreMark): `topup validate --check-players` writes
 * paid checks into that same store and leaves the generation as it was. Killed at
 * restore-copy-in-place, then a validate that checks a player (charged 0.03 USD, recorded
 * found/charged in jobs/topup.db), then the same restore run to its end: the check is in no store
 * (main: calls [], the supplier's ledger holds the charge).
 */
describe('review38: a check made on the copy a killed restore put in place', () => {
  it('is carried by the restore run again', async () => {
    const home = tempHome('topup-restore-fork-');
    const sb = await inProcessSandbox({ balanceUsd: 100, players: { checkPriceUsd: 0.03 } });
    const env = cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_PRICE_USD: '0.03' });
    const daemon = startDaemon(env);
    await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 60_000, 20);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    expect(await daemon.stop()).toBe(0);
    const path = JSON.parse(bk.stdout).path as string;
    const db = join(home.jobs, 'topup.db');

    const k = await runCli(['restore', path], { ...env, TOPUP_CRASH_AT: 'restore-copy-in-place:1' });
    expect(k.signal, k.stdout + k.stderr).toBe('SIGKILL');
    // On the copy in place: a paid check, from the CLI (no daemon: the generation stays).
    const file = join(home.dir, 'check.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5300000901']]));
    const v = await runCli(['validate', '--check-players', '--json', file], env);
    expect(v.code, v.stderr).toBeLessThanOrEqual(1);
    expect(sb.admin.ledger().entries.filter((e) => e.kind === 'check')).toHaveLength(1);
    expect(calls(db).map((c) => c.outcome)).toEqual(['found']);

    const done = await runCli(['restore', path], env);
    expect(done.code, done.stderr).toBe(0);
    // The supplier charged it: the restored store must still count it.
    expect(calls(db).map((c) => c.outcome), done.stdout).toEqual(['found']);
  }, 300_000);
});
