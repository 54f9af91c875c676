/**
 * Issue 32, defect 2: a deleted store silently lost accepted API orders. Orders answered 202
 * (`"queue": true`) while the account had no balance, the store deleted, the daemon restarted:
 * GET answered 404 for both, they were never bought, and nothing said so. Now every accepted order
 * is journalled (jobs/api-journal/<day>.jsonl, fsynced before the 202) and the first start after the
 * loss accepts them again under their trxids, after looking each up at the supplier: the ones never
 * bought are bought once, the one bought before the loss is met as its purchase (one order in the
 * ledger), and `topup status` and `topup doctor` say what was recovered.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, tempHome, waitFor } from '../e2e/harness.js';
import { start as startWithConsole } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const TOKEN = 'backup-test-order-api-token-0123456789';

async function start(env: NodeJS.ProcessEnv) {
  const d = await startWithConsole(env);
  const call = (method: string, path: string, body?: unknown) => d.call(method, path, { body });
  const daemon = d.daemon;
  const completed = (trxid: string) => waitFor(`${trxid} completed`, async () => {
    const r = await call('GET', `/api/v1/orders/${trxid}`);
    return r.json?.status === 'completed' ? r.json : undefined;
  }, 60_000, 100);
  return { daemon, call, completed };
}

describe('accepted API orders and a lost store', () => {
  it('are journalled before the 202 and recovered after the store is deleted: bought once each, the one bought before met as its purchase', async () => {
    const home = tempHome('backup-api-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
    const order = (trxid: string, user: string) => ({ trxid, pid: 'PUBG-60', userId: user, queue: true });

    const first = await start(env);
    expect((await first.call('POST', '/api/v1/orders', order('SHOP-C', '5123457003'))).status).toBe(202);
    const c = await first.completed('SHOP-C');
    // No balance: the next two are accepted (queue: true) and wait for a top-up.
    sb.admin.setBalance({ balanceUsd: 0 });
    // The 202's latency with the journal's fsync: measured, and said.
    const ms: number[] = [];
    for (const [t, u] of [['SHOP-A', '5123457001'], ['SHOP-B', '5123457002']] as const) {
      const t0 = performance.now();
      const r = await first.call('POST', '/api/v1/orders', order(t, u));
      ms.push(performance.now() - t0);
      expect(r.status).toBe(202);
    }
    console.log(`202 latency with the journal fsync: ${ms.map((m) => m.toFixed(1)).join(', ')} ms`);
    await first.daemon.stop();
    expect(sb.admin.ledger().orders.map((o) => o.trxid)).toEqual(['SHOP-C']);
    // The journal: 0600 files in a 0700 folder under jobs/.
    const dir = join(home.jobs, 'api-journal');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(dir)) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);

    // The store is lost; the account is topped up.
    for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
    sb.admin.setBalance({ balanceUsd: 100 });
    const second = await start(env);
    const a = await second.completed('SHOP-A');
    const b = await second.completed('SHOP-B');
    const c2 = await second.completed('SHOP-C');
    await second.daemon.stop();
    // Each bought exactly once; SHOP-C is the purchase made before the loss.
    const ledger = sb.admin.ledger().orders;
    expect(ledger.map((o) => o.trxid).sort()).toEqual(['SHOP-A', 'SHOP-B', 'SHOP-C']);
    expect(c2.orderId).toBe(c.orderId);
    expect(new Set([a.orderId, b.orderId, c2.orderId]).size).toBe(3);
    // Said, not silent.
    const status = await runCli(['status'], env);
    expect(status.stdout).toMatch(/restore: reconciled .*the store is new, but this home had another.*3 API order\(s\) recovered from the journal, 0 need a person/);
    const doctor = JSON.parse((await runCli(['doctor', '--json'], env)).stdout);
    expect(doctor.checks.find((x: { name: string }) => x.name === 'restore').detail).toMatch(/3 API order\(s\) recovered from the journal/);
  }, 240_000);
});
