/**
 * Issue 32, adversarial review of the fence: the old primary comes back after a takeover, and the
 * fence's folder is there but empty — the replica's mount point on a machine that rebooted before
 * its network mount came up (an NFS mount late or failed at boot is an empty local directory). The
 * fence file is "not there" while its folder is, which the fence read as "no fence yet": the old
 * primary took a new fence (epoch 1, on its own local disk) and sent with its stale store, beside
 * the standby that had taken over. A home that has held a fence must never take a new one as if
 * there had been none: it was a primary, so it may have been taken over.
 * Real CLI, real sandbox, the real litestream binary.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const BIN: NodeJS.ProcessEnv = process.env.TOPUP_LITESTREAM_BIN ? { TOPUP_LITESTREAM_BIN: process.env.TOPUP_LITESTREAM_BIN } : {};

function rowsFile(n: number, from: number): string {
  return csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => ['PUBG-60', String(from + i)])]);
}

describe('an old primary whose fence folder is empty when it comes back (its mount not up)', () => {
  it('refuses to start and sends nothing: it held a fence before', async () => {
    const sb = await inProcessSandbox();
    const primary = tempHome('fence-primary-');
    const mount = mkdtempSync(join(tmpdir(), 'fence-mnt-'));
    const replica = join(mount, 'replica');
    mkdirSync(replica);
    const penv = cliEnv(primary, sb, { TOPUP_REPLICA: replica, TOPUP_RATE_LIMITS: '10/1s', ...BIN });
    const d = startDaemon(penv);
    primary.drop('day.csv', rowsFile(40, 5_123_500_000));
    await waitFor('some rows bought', () => sb.admin.ledger().orders.length >= 8, 60_000);
    await waitFor('a generation in the replica', () => existsSync(join(replica, 'generations')) && readdirSync(join(replica, 'generations')).length > 0, 30_000);
    const lsPid = Number(readFileSync(join(primary.dir, '.topup-litestream.pid'), 'utf8'));
    // The machine dies.
    d.child.kill('SIGKILL');
    try {
      process.kill(lsPid, 'SIGKILL');
    } catch {
      // Gone with it.
    }
    await d.exited;

    // The standby takes over and finishes the work.
    const standby = tempHome('fence-standby-');
    const senv = cliEnv(standby, sb, { TOPUP_REPLICA: replica, ...BIN });
    const took = await runCli(['takeover', '--from', replica], senv, { timeoutMs: 90_000 });
    expect(took.code, took.stderr + took.stdout).toBe(0);
    const s = await runCli(['daemon', '--once'], senv, { timeoutMs: 180_000 });
    expect(s.code, s.stderr.slice(-2000)).toBe(0);
    const afterTakeover = sb.admin.ledger().orders.length;
    expect(afterTakeover).toBe(40);

    // The old primary reboots; its mount is not up: the same path, an empty local folder.
    renameSync(mount, `${mount}.away`);
    mkdirSync(replica, { recursive: true });
    primary.drop('late.csv', rowsFile(5, 5_123_600_000));
    const back = await runCli(['daemon', '--once'], penv, { timeoutMs: 90_000 });
    // It must not send: it was the primary, the fence it held is not where it was.
    expect(sb.admin.ledger().orders.length).toBe(afterTakeover);
    expect(back.code).not.toBe(0);
    expect(back.stderr).toMatch(/fence/);

    // topup doctor names the fence's state on each node.
    const fenceOf = async (env: NodeJS.ProcessEnv) => (JSON.parse((await runCli(['doctor', '--json'], env, { timeoutMs: 60_000 })).stdout).checks as { name: string; ok: boolean; detail: string }[]).find((c) => c.name === 'fence');
    expect(await fenceOf(penv)).toMatchObject({ ok: false, detail: expect.stringMatching(/^missing: .*this home held it/) });
    rmSync(replica, { recursive: true });
    renameSync(`${mount}.away`, mount);
    expect(await fenceOf(penv)).toMatchObject({ ok: false, detail: expect.stringMatching(/^taken over: .*fence-standby-/) });
    expect(await fenceOf(senv)).toMatchObject({ ok: true, detail: expect.stringMatching(/^held: this home holds the fence/) });
    const back2 = await runCli(['daemon', '--once'], penv, { timeoutMs: 90_000 });
    expect(back2.code).toBe(5);
    expect(sb.admin.ledger().orders.length).toBe(afterTakeover);
  }, 300_000);
});
