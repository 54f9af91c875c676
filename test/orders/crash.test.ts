/**
 * Issue 23: API orders survive a SIGKILL as file rows do. The real daemon (dist/cli.js) with the
 * order API on 127.0.0.1, the in-process sandbox as the supplier, and the process killed at a named
 * point (kernel/crash-points.ts):
 *  - right after an acceptance commits, before its 202 is written: the shop got no answer and
 *    resends; the next daemon answers it as the order it already is (200), and buys it once;
 *  - after the `sending` intent commits, before the request leaves (between accept and send);
 *  - after the supplier answered, before the answer is stored (between send and answer): the next
 *    daemon resends the same trxid and the supplier replays the order.
 * In every case: one order at the supplier per trxid, every accepted order completed, nothing lost.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, startDaemon, tempHome, waitFor, type DaemonProcess } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const TOKEN = 'crash-test-order-api-token-0123456789';

async function daemonWithApi(env: NodeJS.ProcessEnv): Promise<{ daemon: DaemonProcess; url: string }> {
  const daemon = startDaemon(env);
  const url = await consoleUrl(daemon);
  return { daemon, url };
}

async function post(url: string, body: unknown): Promise<{ status: number; json: any } | { error: string }> {
  try {
    const res = await fetch(`${url}/api/v1/orders`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json().catch(() => null) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

async function get(url: string, trxid: string): Promise<any> {
  const res = await fetch(`${url}/api/v1/orders/${encodeURIComponent(trxid)}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return res.status === 200 ? res.json() : null;
}

describe('API orders across a SIGKILL', () => {
  for (const point of ['order-accepted', 'intent-committed', 'response-received'] as const) {
    it(`killed at ${point}: the resent order is the same order, bought once, and completes`, async () => {
      const home = tempHome();
      const sb = await inProcessSandbox();
      const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
      const first = await daemonWithApi({ ...env, TOPUP_CRASH_AT: `${point}:1` });
      const body = { trxid: `CRASH-${point}`, pid: 'PUBG-60', userId: '5123456701' };
      const answer = await post(first.url, body);
      const exit = await first.daemon.exited;
      expect(exit.signal).toBe('SIGKILL');
      if (point === 'order-accepted') expect('error' in answer || answer.status >= 500).toBe(true);
      else expect(answer).toMatchObject({ status: 202 });

      const second = await daemonWithApi(env);
      // The shop resends on ambiguity (and a shop that got its 202 may resend anyway).
      const again = await post(second.url, body);
      expect(again).toMatchObject({ status: 200 });
      const done = await waitFor('the order completed', async () => {
        const v = await get(second.url, body.trxid);
        return v?.status === 'completed' ? v : undefined;
      }, 30_000, 100);
      expect(done.orderId).toBeTruthy();
      const orders = sb.admin.ledger().orders.filter((o) => String(o.trxid).toLowerCase() === body.trxid.toLowerCase());
      expect(orders).toHaveLength(1);
      expect(done.history.map((h: { status: string }) => h.status).at(-1)).toBe('completed');
      await second.daemon.stop();
    }, 90_000);
  }
});
