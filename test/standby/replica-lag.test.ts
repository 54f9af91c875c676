/**
 * The replica's lag in /metrics (docs/standby.md): a live daemon replicating with the real
 * litestream; the replicator stalled (SIGSTOP: a hung network mount, a replica that cannot be
 * written) while the daemon goes on writing: topup_replica_lag_seconds grows past the alert's
 * threshold; let go (SIGCONT), it is caught up again. And the shipped rule: promtool check and
 * its unit tests (group topup-standby of deploy/prometheus/topup-alerts.yml, the one rules file).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { csv, waitFor } from '../e2e/harness.js';
import { shop, start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const BIN: NodeJS.ProcessEnv = process.env.TOPUP_LITESTREAM_BIN ? { TOPUP_LITESTREAM_BIN: process.env.TOPUP_LITESTREAM_BIN } : {};
const DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'prometheus');
const hasPromtool = spawnSync('promtool', ['--version']).status === 0;

function gauge(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

describe('the replica lag', () => {
  it('is in /metrics: under a second caught up, growing while litestream is stalled, caught up again after', async () => {
    const replica = mkdtempSync(join(tmpdir(), 'replica-lag-'));
    const s = await shop({ TOPUP_REPLICA: replica, TOPUP_RATE_LIMITS: '4/1s', ...BIN }, {}, 'replica-lag-');
    const d = await start(s.env);
    const metrics = async () => (await fetch(`${d.url}/metrics`)).text();
    await waitFor('a generation in the replica', () => existsSync(join(replica, 'generations')) && readdirSync(join(replica, 'generations')).length > 0, 30_000);
    await waitFor('the lag served and caught up', async () => {
      const lag = gauge(await metrics(), 'topup_replica_lag_seconds');
      return lag !== undefined && lag < 1.5;
    }, 30_000, 250);
    expect(gauge(await metrics(), 'topup_replica_last_shipped_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);

    const ls = Number(readFileSync(join(s.home.dir, '.topup-litestream.pid'), 'utf8'));
    process.kill(ls, 'SIGSTOP');
    try {
      // 40 rows at 4 a second: the store changes for 10 s while nothing is shipped.
      s.home.drop('busy.csv', csv([['pid', 'userId'], ...Array.from({ length: 40 }, (_, i) => ['PUBG-60', String(5_123_800_000 + i)])]));
      await waitFor('the lag past the alert threshold (5 s)', async () => (gauge(await metrics(), 'topup_replica_lag_seconds') ?? 0) > 5, 60_000, 250);
    } finally {
      process.kill(ls, 'SIGCONT');
    }
    await waitFor('caught up again', async () => (gauge(await metrics(), 'topup_replica_lag_seconds') ?? 99) < 1.5, 30_000, 250);
    await d.daemon.stop();
  }, 180_000);

  it.skipIf(!hasPromtool)('the shipped rule passes promtool check rules and its unit tests', () => {
    const check = spawnSync('promtool', ['check', 'rules', 'topup-alerts.yml'], { cwd: DIR, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(existsSync(join(DIR, 'standby-alerts.yml'))).toBe(false); // one rules file: docs/metrics.md loads only topup-alerts.yml
    expect(readFileSync(join(DIR, 'topup-alerts.yml'), 'utf8')).toMatch(/- name: topup-standby\n\s+rules:\n\s+- alert: TopupReplicaLagging/);
    const test = spawnSync('promtool', ['test', 'rules', 'standby-alerts.test.yml'], { cwd: DIR, encoding: 'utf8' });
    expect(test.status, test.stdout + test.stderr).toBe(0);
  });
});
