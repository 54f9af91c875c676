/**
 * Prometheus: the daemon's /metrics passes `promtool check metrics` (three prom-client gauges ended
 * in `_total`, which the format keeps for counters: exit 3), and the shipped alert rules
 * (deploy/prometheus/topup-alerts.yml) pass `promtool check rules` and their unit tests
 * (`promtool test rules`), and name only metrics the daemon serves. promtool is Debian's
 * `prometheus` package (.ci/run installs it); without it these tests skip and say so.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, csv, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { startConsoleDaemon } from '../console/helpers.js';

releaseAfterEach();

const DIR = join(ROOT, 'deploy', 'prometheus');
const RULES = join(DIR, 'topup-alerts.yml');
const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
if (!hasPromtool) console.warn('test/deploy/prometheus.test.ts: promtool not found (Debian package prometheus): skipped');

describe.skipIf(!hasPromtool)('promtool on the daemon and the shipped rules', () => {
  it('passes promtool check rules and promtool test rules', () => {
    const check = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/SUCCESS: \d+ rules found/);
    const test = spawnSync('promtool', ['test', 'rules', 'topup-alerts.test.yml'], { cwd: DIR, encoding: 'utf8' });
    expect(test.status, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toContain('SUCCESS');
  });

  it("a live daemon's /metrics passes promtool check metrics, and serves every metric the rules use", async () => {
    const t = await startConsoleDaemon();
    t.home.drop('orders.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    await waitForResult(t.home, 'orders');
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
    // The figure the removed gauges gave stays, by type: sum(topup_nodejs_active_handles).
    expect(text).toMatch(/^# TYPE topup_nodejs_active_handles gauge$/m);

    const served = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    // The backup group's gauge is absent until a backup was taken (TopupNoBackup alerts on that):
    // test/backup/alerts.test.ts holds it to the gauges the daemon defines.
    const rules = readFileSync(RULES, 'utf8');
    const noBackup = rules.slice(0, rules.indexOf('  - name: topup-backup'));
    const used = new Set([...noBackup.matchAll(/\b(topup_[a-z_]+)\b/g)].map((m) => m[1]!));
    expect(used.size).toBeGreaterThan(5);
    for (const name of used) expect(served, `${name} (used by topup-alerts.yml)`).toContain(name);
  });
});
