/**
 * adv9: the journal's orders are accepted again once, at the first start after the store was lost
 * (daemon.ts: only while the reconcile marker is there). If that start meets a supplier that does
 * not answer (its catalog cannot be read, so the order cannot be priced), the re-accept fails, the
 * reconcile then finds no row to look up, writes its report and removes the marker: the order is
 * never accepted again, though the supplier is back a minute later. The shop's GET answers 404 for
 * an order it was given a 202 for (the restore report lists it under "need a person").
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, tempHome, waitFor } from '../e2e/harness.js';
import { start as startWithConsole } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const TOKEN = 'adv9-journal-down-token-0123456789ab';

async function start(env: NodeJS.ProcessEnv) {
  const d = await startWithConsole(env, { timeoutMs: 60_000 });
  const call = (method: string, path: string, body?: unknown) => d.call(method, path, { body });
  const daemon = d.daemon;
  return { daemon, call };
}

describe('adv9: journal recovery while the supplier is down', () => {
  it('the order accepted before the loss is bought once the supplier is back', async () => {
    const home = tempHome('adv9-jdown-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_REQUEST_TIMEOUT_MS: '2000' });
    sb.admin.setBalance({ balanceUsd: 0 });
    const first = await start(env);
    expect((await first.call('POST', '/api/v1/orders', { trxid: 'SHOP-D', pid: 'PUBG-60', userId: '5123457021', queue: true })).status).toBe(202);
    await first.daemon.stop();

    for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
    sb.admin.setBalance({ balanceUsd: 100 });
    sb.admin.setFaults({ blackhole: true });
    const second = await start(env);
    // The first try of the reconcile (and the journal's re-accept in it) has met the supplier down
    // and will try again (restore-reconcile.ts): only then does the supplier come back. (A fixed
    // 20 s stood for this before; waiting for the event also holds that the try was made while down.)
    await waitFor('a reconcile try that met the supplier down', () => /reconcile after the restore could not finish \(nothing is sent until it does\); trying again/.test(second.daemon.output()), 60_000, 100);
    sb.admin.setFaults({ blackhole: false });
    const got = await waitFor('SHOP-D completed', async () => {
      const r = await second.call('GET', '/api/v1/orders/SHOP-D');
      return r.json?.status === 'completed' ? r.json : undefined;
    }, 60_000, 500).catch(async () => (await second.call('GET', '/api/v1/orders/SHOP-D')).status);
    const out = second.daemon.output();
    await second.daemon.stop();
    console.log(`SHOP-D: ${JSON.stringify(got)}; ${out.split('\n').filter((l) => /journal/.test(l)).slice(0, 2).join(' | ').slice(0, 600)}`);
    expect(sb.admin.ledger().orders.map((o) => String(o.trxid))).toEqual(['SHOP-D']);
  }, 200_000);
});
