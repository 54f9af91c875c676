/**
 * Trial s35 defect 6: an order-API order waiting after the supplier's maintenance refusal read
 * `status sent, state pending, error null` for 90 s, while docs/order-api.md says `error` says why
 * a `sent` order waits. It now says so (the supplier's maintenance, sent again when it ends), and
 * reads null again once the order is placed. Real sandbox, real daemon (child process), real HTTP.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, startDaemon, tempHome } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();
const TOKEN = 'order-waiting-test-token-0123456789abcdef';

describe('an API order waiting through the supplier\'s maintenance', () => {
  it('says why in `error` while it waits, and null once it is placed', async () => {
    const sb = await inProcessSandbox();
    const home = tempHome('order-waiting-');
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_POLL_INTERVAL_MS: '200' }));
    try {
      const url = await consoleUrl(daemon);
      sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
      const auth = { authorization: `Bearer ${TOKEN}` };
      const res = await fetch(`${url}/api/v1/orders`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ trxid: 'WAIT-1', pid: 'PUBG-60', userId: '5123456790' }) });
      expect(res.status).toBe(202);
      const view = async () => (await (await fetch(`${url}/api/v1/orders/WAIT-1`, { headers: auth })).json()) as { status: string; state: string; error: { code: string; message: string } | null };
      await expect.poll(async () => (await view()).status, { timeout: 30_000, interval: 200 }).toBe('sent');
      await expect.poll(async () => (await view()).error, { timeout: 10_000, interval: 200 }).toEqual({ code: 'MAINTENANCE', message: expect.stringMatching(/maintenance.*sent again when it ends/) });
      expect((await view()).state).toBe('pending');
      sb.admin.setFaults({ maintenance: null });
      await expect.poll(async () => (await view()).status, { timeout: 90_000, interval: 500 }).toBe('completed');
      expect((await view()).error).toBeNull();
    } finally {
      await daemon.stop();
      await sb.close();
      home.remove();
    }
  }, 150_000);
});
