/**
 * Found by the simulator (seed 20261127 #1, `checks` with `restore`; test/sim/found/
 * restore-check-after-copy.json): a player check the supplier charged after the backup was taken
 * was recorded nowhere once the backup was restored. Orders made after a copy are found again at
 * the suppliers (their order history); no supplier lists the checks it ran, so the store being
 * replaced is the only record of what they cost, and of the answers kept for players (lost, a
 * player is checked, and paid for, again). `topup restore` now carries them into the restored
 * store (store/backup-checks.ts) and says so. Real sandbox, real daemon and CLI, real SQLite.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const PRICE = 0.03;

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

describe('a player check made after the backup, then the backup restored', () => {
  it('stays recorded, at what the supplier charged, with its answer kept', async () => {
    const home = tempHome('topup-restore-checks-');
    const sb = await inProcessSandbox({ balanceUsd: 100, players: { checkPriceUsd: PRICE } });
    const env = cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_PRICE_USD: String(PRICE) });
    const daemon = startDaemon(env);
    await waitFor('the daemon started', () => daemon.output().includes('topup daemon started'), 60_000, 20);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // After the copy: a file whose player is checked (charged) and bought.
    home.drop('after.csv', csv([['pid', 'userId'], ['PUBG-60', '5300000401']]));
    await waitForResult(home, 'after', 120_000);
    expect(sb.admin.ledger().entries.filter((e) => e.kind === 'check')).toHaveLength(1);
    expect(await daemon.stop()).toBe(0);
    const db = join(home.jobs, 'topup.db');
    expect(checksIn(db).calls).toEqual([{ outcome: 'found', charged: 'yes', price: PRICE }]);

    const restored = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/player checks made after the backup, carried over from the replaced store \(what they cost stays counted\): 1 check, 1 kept answer/);
    // The restored store still counts the check the supplier charged, and knows the player.
    expect(checksIn(db)).toEqual({ calls: [{ outcome: 'found', charged: 'yes', price: PRICE }], answers: [{ player: '5300000401', outcome: 'found' }] });
  }, 240_000);
});
