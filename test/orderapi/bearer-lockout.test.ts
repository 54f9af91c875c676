/**
 * adv9 (checked, sound): the console's wrong-token limits (console/auth.ts LoginThrottle) lock a
 * caller out after 5 wrong tokens and everyone after 20. Suspected: that a stranger's wrong Bearer
 * tokens on the order API lock the shop's correct token out of POST /api/v1/orders (one address
 * behind a proxy). Not so: 25 wrong tokens from the shop's own address, and its order is still 202.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, startDaemon, tempHome } from '../e2e/harness.js';
import { consoleUrl } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const TOKEN = 'adv9-bearer-lockout-token-0123456789';

describe('adv9: wrong Bearer tokens and the shop\'s order API', () => {
  it('the shop\'s correct token still places orders after a stranger sent wrong ones', async () => {
    const home = tempHome('adv9-bearer-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
    const daemon = startDaemon(env);
    const url = await consoleUrl(daemon);
    const post = (token: string, trxid: string) => fetch(`${url}/api/v1/orders`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ trxid, pid: 'PUBG-60', userId: '5123457011' }),
    });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await post(`wrong-token-${i}-0123456789abcdef`, `X-${i}`)).status);
    const shop = await post(TOKEN, 'SHOP-1');
    const shopStatus = shop.status;
    await daemon.stop();
    console.log(`wrong: ${statuses.join(',')}; shop's correct token: ${shopStatus}`);
    expect(shopStatus).toBe(202);
  }, 120_000);
});
