/**
 * The warm standby (issue 32 item 3, docs/standby.md), with the real CLI, a real sandbox and the
 * real litestream binary (the one @flydotio/litestream ships, or TOPUP_LITESTREAM_BIN):
 *  - the fence: a home the fence names another node for sends nothing (the start refuses, exit 5);
 *    a primary fenced while it runs stops sending within the fence's reading time and exits 5, and
 *    its litestream stops with it;
 *  - a missing litestream binary is a typed error that names the way out;
 *  - the settings are checked once, naming the setting.
 * The takeover itself (primary killed mid-batch, the standby restored from the replica finishes)
 * is the torture scenario `takeover`, run quick by test/torture/takeover.test.ts.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { takeFence, readFence, FENCE_TTL_MS } from '../../src/standby/fence.js';
import { litestreamBinary } from '../../src/standby/litestream.js';
import { standbySettings } from '../../src/config/standby-settings.js';
import { ConfigError, ErrorCode, TopupError } from '../../src/kernel/errors.js';

releaseAfterEach();

/** The binary the daemon runs: TOPUP_LITESTREAM_BIN handed through when set, else the package's. */
const BIN: NodeJS.ProcessEnv = process.env.TOPUP_LITESTREAM_BIN ? { TOPUP_LITESTREAM_BIN: process.env.TOPUP_LITESTREAM_BIN } : {};

function rowsFile(n: number): string {
  return csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => ['PUBG-60', String(5_123_400_000 + i)])]);
}

describe('the fence', () => {
  it('a home the fence names another node for refuses to start and sends nothing (exit 5)', async () => {
    const sb = await inProcessSandbox();
    const home = tempHome('standby-fenced-');
    const replica = mkdtempSync(join(tmpdir(), 'topup-replica-'));
    // Another home took over: the fence names it.
    const other = tempHome('standby-other-');
    takeFence(join(replica, 'topup-fence.json'), other.dir, Date.now());
    home.drop('f.csv', rowsFile(3));
    const env = cliEnv(home, sb, { TOPUP_REPLICA: replica, ...BIN });
    const r = await runCli(['daemon', '--once'], env, { timeoutMs: 60_000 });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/this home was taken over: the fence .* names .*standby-other-/);
    expect(sb.admin.ledger().orders).toEqual([]);
    // Commands that only read work on a fenced home (the standby's status while the primary runs).
    const st = await runCli(['status'], env, { timeoutMs: 60_000 });
    expect(st.code, st.stderr).toBe(0);
    // A foreground submit sends nothing either.
    const s = await runCli(['submit', join(home.inbox, 'f.csv')], env, { timeoutMs: 60_000 });
    expect(s.code).toBe(5);
    expect(sb.admin.ledger().orders).toEqual([]);
  }, 120_000);

  it('a primary fenced while it runs stops sending within the fence reading time, stops litestream, exits 5', async () => {
    const sb = await inProcessSandbox();
    const home = tempHome('standby-primary-');
    const replica = mkdtempSync(join(tmpdir(), 'topup-replica-'));
    // 8 orders a second: 80 rows take 10 s, so the fence lands mid-batch.
    const env = cliEnv(home, sb, { TOPUP_REPLICA: replica, TOPUP_RATE_LIMITS: '8/1s', ...BIN });
    const d = startDaemon(env);
    home.drop('slow.csv', rowsFile(80));
    await waitFor('10 orders bought', () => sb.admin.ledger().orders.length >= 10, 60_000);
    // The primary took the fence at its start, and replicates.
    expect(readFence(join(replica, 'topup-fence.json'))?.home).toBe(home.dir);
    await waitFor('a generation in the replica', () => existsSync(join(replica, 'generations')) && readdirSync(join(replica, 'generations')).length > 0, 30_000);
    const lsPid = Number(readFileSync(join(home.dir, '.topup-litestream.pid'), 'utf8'));
    const other = tempHome('standby-taker-');
    takeFence(join(replica, 'topup-fence.json'), other.dir, Date.now());
    const fencedAt = Date.now();
    const { code } = await d.exited;
    expect(code).toBe(5);
    expect(d.output()).toMatch(/taken over/);
    // No order created after the fence was read again (FENCE_TTL_MS) and a request's time.
    const late = sb.admin.ledger().orders.filter((o) => Date.parse(String(o.createdAt)) > fencedAt + FENCE_TTL_MS + 1_000);
    expect(late).toEqual([]);
    expect(sb.admin.ledger().orders.length).toBeLessThan(80);
    // Its litestream is gone with it (the replica is the new primary's now).
    expect(() => process.kill(lsPid, 0)).toThrow();
  }, 120_000);
});

describe('litestream', () => {
  it('no binary: E_STANDBY naming the package and TOPUP_LITESTREAM_BIN', () => {
    const settings = standbySettings({ TOPUP_REPLICA: '/srv/replica' }, '/srv/home');
    let err: unknown;
    try {
      litestreamBinary({ standby: settings }, '@flydotio/litestream-plan9-mips');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TopupError);
    expect((err as TopupError).code).toBe(ErrorCode.Standby);
    expect((err as Error).message).toMatch(/@flydotio\/litestream-plan9-mips .*TOPUP_LITESTREAM_BIN/s);
  });

  it('TOPUP_LITESTREAM_BIN not executable: the daemon stops at its start with E_STANDBY (exit 1), nothing sent', async () => {
    const sb = await inProcessSandbox();
    const home = tempHome('standby-nobin-');
    const replica = mkdtempSync(join(tmpdir(), 'topup-replica-'));
    const notBin = join(home.dir, 'litestream');
    writeFileSync(notBin, 'not a program', { mode: 0o600 });
    home.drop('f.csv', rowsFile(2));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb, { TOPUP_REPLICA: replica, TOPUP_LITESTREAM_BIN: notBin }), { timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/TOPUP_LITESTREAM_BIN: .* is not an executable file/);
    expect(sb.admin.ledger().orders).toEqual([]);
  }, 90_000);

  it('the package binary (or the override) runs: litestream 0.3', async () => {
    const bin = litestreamBinary({ standby: standbySettings(BIN as Record<string, string>, tmpdir()) });
    const r = await import('node:child_process').then((cp) => cp.spawnSync(bin, ['version'], { encoding: 'utf8' }));
    expect(r.stdout.trim()).toMatch(/^v0\.3\./);
  });
});

describe('standby settings', () => {
  it('are checked once, naming the setting', () => {
    expect(() => standbySettings({ TOPUP_REPLICA: 's3://bucket/topup' }, '/h')).toThrow(ConfigError);
    expect(() => standbySettings({ TOPUP_REPLICA: 's3://bucket/topup' }, '/h')).toThrow(/TOPUP_FENCE_FILE/);
    expect(standbySettings({ TOPUP_REPLICA: 's3://bucket/topup', TOPUP_FENCE_FILE: 'off' }, '/h').fenceFile).toBeNull();
    expect(() => standbySettings({ TOPUP_REPLICA: 'jobs/replica' }, '/h')).toThrow(/TOPUP_REPLICA: .*inside jobs/);
    expect(() => standbySettings({ TOPUP_REPLICA: 'http://x/y' }, '/h')).toThrow(/TOPUP_REPLICA/);
    expect(() => standbySettings({ TOPUP_REPLICA: '/r', TOPUP_REPLICA_SYNC_INTERVAL: '5m' }, '/h')).toThrow(/TOPUP_REPLICA_SYNC_INTERVAL/);
    expect(() => standbySettings({ TOPUP_LITESTREAM_CONFIG: '/etc/ls.yml' }, '/h')).toThrow(/TOPUP_LITESTREAM_CONFIG/);
    const s = standbySettings({ TOPUP_REPLICA: 'replica' }, '/h');
    expect(s.replica).toEqual({ dir: '/h/replica', url: 'file:///h/replica' });
    expect(s.fenceFile).toBe('/h/replica/topup-fence.json');
    expect(standbySettings({}, '/h').replica).toBeNull();
    expect(standbySettings({}, '/h').fenceFile).toBeNull();
  });
});
