/**
 * The shipped alert rules on the last good backup, in the one rules file (group topup-backup of
 * deploy/prometheus/topup-alerts.yml, so a reseller loading docs/metrics.md's one file gets them):
 * promtool checks the file and runs their unit tests (each alert silent before its condition, firing
 * after its `for:`). Without promtool on the machine the test is skipped, and says so.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/harness.js';

const DIR = join(ROOT, 'deploy', 'prometheus');
const promtool = spawnSync('promtool', ['--version']).status === 0;

/** The topup-backup group of the one rules file. */
export function backupGroup(rules: string): string {
  const from = rules.indexOf('  - name: topup-backup');
  const to = rules.indexOf('\n  - name: ', from + 1);
  return from < 0 ? '' : rules.slice(from, to < 0 ? undefined : to);
}

describe.skipIf(!promtool)('the backup alerts of deploy/prometheus/topup-alerts.yml', () => {
  it('are in the one rules file (no second file to load), valid, and their unit tests pass', async () => {
    const { existsSync, readFileSync } = await import('node:fs');
    expect(existsSync(join(DIR, 'backup-alerts.yml'))).toBe(false);
    const group = backupGroup(readFileSync(join(DIR, 'topup-alerts.yml'), 'utf8'));
    expect(group).toContain('alert: TopupBackupOld');
    expect(group).toContain('alert: TopupNoBackup');
    expect(execFileSync('promtool', ['check', 'rules', 'topup-alerts.yml'], { cwd: DIR, encoding: 'utf8' })).toMatch(/SUCCESS: \d+ rules found/);
    const t = spawnSync('promtool', ['test', 'rules', 'backup-alerts.test.yml'], { cwd: DIR, encoding: 'utf8' });
    expect(t.status, `${t.stdout}${t.stderr}`).toBe(0);
  });

  it('names the metric the daemon exports', async () => {
    const { readFileSync } = await import('node:fs');
    const src = readFileSync(join(ROOT, 'src', 'metrics', 'store-gauges.ts'), 'utf8');
    const rules = backupGroup(readFileSync(join(DIR, 'topup-alerts.yml'), 'utf8'));
    expect(rules).not.toBe('');
    for (const m of rules.match(/topup_[a-z_]+/g) ?? []) expect(src, m).toContain(`'${m}'`);
  });
});
