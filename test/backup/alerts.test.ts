/**
 * The shipped alert rule on the age of the last good backup (deploy/prometheus/backup-alerts.yml):
 * promtool checks the file and runs its unit tests (each alert silent before its condition, firing
 * after its `for:`). Without promtool on the machine the test is skipped, and says so.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../e2e/harness.js';

const DIR = join(ROOT, 'deploy', 'prometheus');
const promtool = spawnSync('promtool', ['--version']).status === 0;

describe.skipIf(!promtool)('deploy/prometheus/backup-alerts.yml', () => {
  it('is a valid rules file whose unit tests pass', () => {
    expect(execFileSync('promtool', ['check', 'rules', 'backup-alerts.yml'], { cwd: DIR, encoding: 'utf8' })).toMatch(/SUCCESS: 2 rules found/);
    const t = spawnSync('promtool', ['test', 'rules', 'backup-alerts.test.yml'], { cwd: DIR, encoding: 'utf8' });
    expect(t.status, `${t.stdout}${t.stderr}`).toBe(0);
  });

  it('names the metric the daemon exports', async () => {
    const { readFileSync } = await import('node:fs');
    const src = readFileSync(join(ROOT, 'src', 'metrics', 'store-gauges.ts'), 'utf8');
    const rules = readFileSync(join(DIR, 'backup-alerts.yml'), 'utf8');
    for (const m of rules.match(/topup_[a-z_]+/g) ?? []) expect(src, m).toContain(`'${m}'`);
  });
});
