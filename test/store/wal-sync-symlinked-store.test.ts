/**
 * Review of wal36 (issue 34): WalSync opens the log by the path `${dbPath}-wal`, while SQLite
 * resolves a symlinked database file and keeps its log beside the file linked to. A home whose
 * jobs/topup.db is a symlink (the store moved to another disk, linked back) has no jobs/topup.db-wal:
 * every intent's durable() fails (ENOENT), no request ever leaves, the daemon says the store is
 * down; and if a stale jobs/topup.db-wal is there, the wrong file is synced and intents leave
 * without being on disk. main (FULL commits: SQLite syncs its own log) sends them. Real CLI daemon
 * (dist/cli.js), real sandbox on 127.0.0.1, temp home.
 */
import { existsSync, mkdtempSync, renameSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('a store whose file is a symlink', () => {
  it('the daemon sends its rows (the log synced is the one SQLite writes)', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ fulfilment: { processingShare: 0, processingMs: [0, 0], failShare: 0 } });
    const env = cliEnv(home, sb);
    const made = await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 });
    expect(made.code, made.stderr).toBe(0);
    const db = join(home.jobs, 'topup.db');
    expect(existsSync(db)).toBe(true);
    const elsewhere = mkdtempSync(join(tmpdir(), 'store-elsewhere-'));
    renameSync(db, join(elsewhere, 'topup.db'));
    symlinkSync(join(elsewhere, 'topup.db'), db);
    home.drop('sl.csv', csv([['pid', 'userId'], ['PUBG-60', '5123400001'], ['PUBG-60', '5123400002']]));
    const run = await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 });
    expect({ orders: sb.admin.ledger().orders.length, code: run.code }, run.stderr.slice(-2000)).toEqual({ orders: 2, code: 0 });
  }, 240_000);
});
