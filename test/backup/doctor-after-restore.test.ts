/**
 * A new-user trial: right after `topup restore` from a backup, `topup doctor` said "no backup of
 * this store was ever taken". The record of a backup is written into the live store after the copy
 * is made, so the copy (now the store) never holds it. Doctor now counts the backup the store was
 * restored from, and says so.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';

interface DoctorJson { checks: { name: string; ok: boolean; detail: string }[] }

describe('topup doctor after topup restore', () => {
  it('counts the backup the store was restored from, not "no backup ever taken"', async () => {
    const home = tempHome('doctor-restore-');
    const sb = await inProcessSandbox();
    try {
      const env = cliEnv(home, sb);
      const file = join(home.dir, 'one.csv');
      writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456001']]));
      const sub = await runCli(['submit', file], env, { timeoutMs: 60_000 });
      expect(sub.code, sub.stderr.slice(-2000)).toBe(0);
      const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
      expect(bk.code, bk.stderr).toBe(0);
      const backupDir = JSON.parse(bk.stdout).path as string;
      const before = JSON.parse((await runCli(['doctor', '--json'], env)).stdout) as DoctorJson;
      expect(before.checks.find((c) => c.name === 'backup')!.detail).toMatch(/^last good backup/);

      const r = await runCli(['restore', backupDir], env);
      expect(r.code, r.stderr).toBe(0);
      const after = JSON.parse((await runCli(['doctor', '--json'], env)).stdout) as DoctorJson;
      const backup = after.checks.find((c) => c.name === 'backup')!;
      expect(backup.detail).not.toMatch(/no backup of this store was ever taken/);
      expect(backup.detail).toContain(backupDir);
      expect(backup.detail).toMatch(/which this store was restored from at \d{4}-\d\d-\d\dT.*; no backup taken since/);
      expect(backup.ok).toBe(true);
    } finally {
      await sb.close();
      home.remove();
    }
  }, 120_000);
});
