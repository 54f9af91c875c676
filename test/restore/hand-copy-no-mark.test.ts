/**
 * adv9: a copy of the database put back by hand is recognised only by the home's mark file
 * (.topup-store-mark, a dotfile at the home's root). A person who moves or restores a home with
 * `cp -r home/* new/`, a sync tool skipping dotfiles, or who copies jobs/topup.db into a fresh home,
 * has no mark: storeIsBehindMark() answers null, nothing is reconciled, and rows that failed over
 * and were bought on `second` after the copy are sent again on `main` (bought twice). As
 * test/backup/restore-after-failover.test.ts, with the mark gone.
 */
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { batchStates, ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'MV-1'], ['PUBG-60', '5123456002', 'MV-2']]);

describe('adv9: a hand copy put back into a home without its mark file', () => {
  it('is still reconciled first: nothing bought on main', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "12s"');
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const first = startDaemon(env);
    home.drop('mv.csv', FILE);
    await waitFor('the rows stored, waiting on main', () => {
      const rows = storedRows(home);
      return rows.length === 2 && rows.every((r) => r.state === 'pending' && r.account === 'main');
    }, 90_000);
    const copyPath = join(home.dir, 'hand-copy.db');
    // The daemon held still while the copy is taken (as test/backup/restore-after-failover.test.ts):
    // at load 15+ the rows' 12 s could otherwise run out between the wait and the copy.
    first.child.kill('SIGSTOP');
    try {
      const live = new Database(join(home.jobs, 'topup.db'), { readonly: true });
      await live.backup(copyPath);
      live.close();
    } finally {
      first.child.kill('SIGCONT');
    }
    // What the copy holds: both rows on main, not yet bought anywhere (pending, or `sending` when
    // it fell during the paused account's probe).
    const copied = new Database(copyPath, { readonly: true });
    expect(copied.prepare('SELECT state, account FROM rows ORDER BY idx').all()).toEqual(
      [0, 1].map(() => expect.objectContaining({ state: expect.stringMatching(/^(pending|sending)$/), account: 'main' })),
    );
    copied.close();
    // Generous: the rows wait out their queue delay, then are bought on `second` (load 20+ on CI).
    await waitForResult(home, 'mv', 180_000);
    await first.stop();
    expect(ledgerTrxids(b).sort()).toEqual(['MV-1-second', 'MV-2-second']);
    a.admin.setFaults({ maintenance: null });

    // The database put back; the home's dotfile mark did not come along.
    for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
    copyFileSync(copyPath, join(home.jobs, 'topup.db'));
    expect(existsSync(join(home.dir, '.topup-store-mark'))).toBe(true);
    rmSync(join(home.dir, '.topup-store-mark'));

    const second = startDaemon(env);
    await waitFor('the restored batch done', () => batchStates(home).length === 1 && batchStates(home).every((x) => x.state === 'done'), 120_000);
    await second.stop();
    expect(ledgerTrxids(a)).toEqual([]);
  }, 480_000);
});
