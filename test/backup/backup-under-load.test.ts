/**
 * Issue 32, "done when": a backup taken under load (a daemon sending) restores to a home that passes
 * integrity_check and the reconcile-first start. One real sandbox; the real CLI. The daemon is
 * killed (SIGKILL: the disk is gone) after the backup, with more rows bought since; the backup is
 * restored into a NEW home (nothing of the old one survives but the backup) and started: every row is
 * bought exactly once across the ledger, the rows bought after the backup are settled from the
 * supplier, and the result has every row.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor, waitForResult, readResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids } from './world.js';

releaseAfterEach();

const N = 80;
const rows = Array.from({ length: N }, (_, i) => ['PUBG-60', String(5_223_456_000 + i)]);

describe('a backup taken under load', () => {
  it('is written 0600/0700 with the files of the running batch, and restores into a new home that reconciles first and buys nothing twice', async () => {
    const sb = await inProcessSandbox();
    const home = tempHome('backup-load-');
    const env = cliEnv(home, sb, { TOPUP_RATE_LIMITS: '4/1s,400/1m' });
    const daemon = startDaemon(env);
    home.drop('load.csv', csv([['pid', 'userId'], ...rows]));
    await waitFor('some rows bought', () => ledgerTrxids(sb).length >= 8, 60_000);
    const r = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const rec = JSON.parse(r.stdout);
    const atBackup = ledgerTrxids(sb).length;
    expect(atBackup).toBeLessThan(N); // taken while the daemon was still sending
    // 0700 folders, 0600 files (the copy holds codes); the running batch's file is in it.
    expect(statSync(rec.path).mode & 0o777).toBe(0o700);
    expect(statSync(join(rec.path, 'topup.db')).mode & 0o777).toBe(0o600);
    expect(rec.batches).toHaveLength(1);
    const jobFiles = readdirSync(join(rec.path, 'jobs', rec.batches[0]));
    expect(jobFiles).toContain('load.csv');
    for (const f of jobFiles) expect(statSync(join(rec.path, 'jobs', rec.batches[0], f)).mode & 0o777).toBe(0o600);
    const manifest = JSON.parse(readFileSync(join(rec.path, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 'topup-backup/1', integrity: 'ok', db: { file: 'topup.db' } });

    // More rows bought after the backup, then the machine is gone.
    await waitFor('more rows bought after the backup', () => ledgerTrxids(sb).length >= Math.min(atBackup + 10, N - 5), 60_000);
    await daemon.kill();
    const atKill = ledgerTrxids(sb).length;

    // A new home: the backup is all that is left.
    const fresh = tempHome('backup-load-restored-', { store: false }); // no store of its own, not even an empty one
    const env2 = cliEnv(fresh, sb, { TOPUP_RATE_LIMITS: '4/1s,400/1m' });
    const restored = await runCli(['restore', rec.path, '--json'], env2);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ integrity: 'ok', batchFoldersCopied: rec.batches });
    const doctor = await runCli(['doctor', '--json'], env2);
    const checks = JSON.parse(doctor.stdout).checks as { name: string; ok: boolean; detail: string }[];
    expect(checks.find((c) => c.name === 'database')).toMatchObject({ ok: true });
    expect(checks.find((c) => c.name === 'restore')?.detail).toMatch(/restored copy .* reconciles it with the suppliers before sending anything/);

    const again = startDaemon(env2);
    await waitForResult(fresh, 'load', 90_000).catch((err: Error) => {
      throw new Error(`${err.message}; the daemon said:\n${again.output().slice(-6000)}`);
    });
    await again.stop();

    // Every row bought exactly once across the ledger; the result has them all.
    const bought = ledgerTrxids(sb);
    expect(bought).toHaveLength(N);
    expect(new Set(bought).size).toBe(N);
    const result = readResult(fresh, 'load');
    expect(result.map((x) => x.status)).toEqual(Array(N).fill('completed'));
    expect(new Set(result.map((x) => x.orderId)).size).toBe(N);
    // The rows bought between the backup and the kill were settled from the supplier, before any send.
    const reports = readdirSync(join(fresh.outbox, 'reports')).filter((f) => f.startsWith('restore-'));
    const report = JSON.parse(readFileSync(join(fresh.outbox, 'reports', reports[0]!), 'utf8'));
    expect(atKill).toBeGreaterThan(atBackup);
    expect(report.settled.length).toBeGreaterThanOrEqual(atKill - atBackup - 4); // those in flight at the backup may be in doubt
    expect(report.settled.every((s: { how: string }) => s.how === 'own trxid')).toBe(true);
    expect(report.needsPerson).toEqual([]);
    const log = again.output();
    const reconciled = log.indexOf('reconciled after the restore');
    expect(reconciled).toBeGreaterThan(-1);
  }, 300_000);
});
