/**
 * Trial s35, defect 4: in the window after a restore, batches that ended without their lookup (a file
 * refused for its header, a duplicate of an earlier file) kept their "restore lookup" marks: `topup
 * status` listed each as waiting ("nothing of it is sent") for the 8-day window. A batch that can no
 * longer send a row holds nothing: it is not listed, and the daemon removes its mark. Two real
 * sandboxes as two accounts, a real backup and restore, the real daemon and CLI.
 */
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { batchStates, twoAccounts } from '../backup/world.js';

releaseAfterEach();

function marks(dbFile: string): string[] {
  const db = new Database(dbFile, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT key FROM meta WHERE key LIKE 'restore.claim:%'").all() as { key: string }[]).map((r) => r.key);
  } finally {
    db.close();
  }
}

describe('restore lookup marks of batches that ended without sending', () => {
  it('a refused file and a duplicate are not listed as waiting, and their marks go', async () => {
    const { home, env } = await twoAccounts('routing = "priority"');
    const first = startDaemon(env);
    await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
    const good = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5200000001', 'G-1']]);
    home.drop('good.csv', good);
    await waitForResult(home, 'good', 60_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    await first.stop();
    expect((await runCli(['restore', JSON.parse(bk.stdout).path], env)).code).toBe(0);
    // Reconciled (the window opens), then two files that end without sending anything.
    expect((await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 })).code).toBe(0);
    // The same bytes again (a duplicate) and a file without a pid column (refused).
    home.drop('good2.csv', good);
    home.drop('bad.csv', csv([['product', 'player'], ['x', 'y']]));
    const d = startDaemon(env);
    await waitFor('both ended', () => {
      const st = batchStates(home).map((b) => b.state);
      return st.filter((s) => s === 'failed' || s === 'duplicate').length >= 2;
    }, 90_000);
    // Read as status reads it: no line says a batch of these waits.
    const status = await runCli(['status'], env);
    expect(status.stdout).not.toMatch(/restore lookup: batch/);
    await waitFor('marks gone', () => marks(join(home.jobs, 'topup.db')).length === 0, 30_000);
    await d.stop();
  }, 300_000);
});
