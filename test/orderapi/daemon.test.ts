/**
 * Issue 23 end to end: the real daemon (dist/cli.js) with its console on a free port of 127.0.0.1,
 * the in-process sandbox as the supplier, the real order desk, and a shop speaking HTTP: an order
 * placed (202), resent (200), changed (409), read until completed, the feed; a batch over HTTP
 * ending with its result; tokens made, listed and revoked with the real CLI (`topup token`),
 * which needs no daemon. Every answer is held to the OpenAPI document.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, parseResult, runCli, tempHome, waitFor } from '../e2e/harness.js';
import { start as startWithConsole } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { conforms } from './conformance.js';

releaseAfterEach();

const TOKEN = 'daemon-test-order-api-token-0123456789';

async function shop() {
  const home = tempHome('topup-orderapi-e2e-');
  const sb = await inProcessSandbox();
  const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
  return { home, sb, env };
}

/** The one daemon harness, every answer held to the OpenAPI document the daemon serves. */
async function start(env: NodeJS.ProcessEnv) {
  let doc: Record<string, any> | undefined;
  const d = await startWithConsole(env, { check: async (method, url, res, text) => conforms(doc!, method, url, res, text) });
  doc = (await (await fetch(`${d.url}/api/v1/openapi.json`)).json()) as Record<string, any>;
  return d;
}

describe('the order API of a running daemon', () => {
  it('places an order over HTTP: 202, the same body 200, another body 409, read until completed, in the feed', async () => {
    const { sb, env } = await shop();
    const { daemon, call, url } = await start(env);
    const body = { trxid: 'SHOP-E2E-1', pid: 'PUBG-60', userId: '5123456701', meta: { shopOrder: 'A-1' } };
    const a = await call('POST', '/api/v1/orders', { body: JSON.stringify(body), type: 'application/json' });
    expect(a.status, a.text).toBe(202);
    expect(a.headers.get('location')).toBe('/api/v1/orders/SHOP-E2E-1');
    expect(a.json).toMatchObject({ trxid: 'SHOP-E2E-1', meta: { shopOrder: 'A-1' } });
    const same = await call('POST', '/api/v1/orders', { body: JSON.stringify(body), type: 'application/json' });
    expect(same.status).toBe(200);
    const other = await call('POST', '/api/v1/orders', { body: JSON.stringify({ ...body, userId: '5123456702' }), type: 'application/json' });
    expect(other.status).toBe(409);
    expect(other.json.code).toBe('TRXID_CONFLICT');
    const unknown = await call('POST', '/api/v1/orders', { body: JSON.stringify({ ...body, trxid: 'SHOP-E2E-2', pid: 'NO-SUCH-PID' }), type: 'application/json' });
    expect(unknown.status).toBe(422);
    expect(unknown.json.code).toBe('INVALID_ORDER');
    const done = await waitFor('the order completed', async () => {
      const r = await call('GET', '/api/v1/orders/SHOP-E2E-1');
      return r.json?.status === 'completed' ? r.json : undefined;
    }, 30_000, 100);
    expect(done.orderId).toBeTruthy();
    expect(done.history.at(-1).status).toBe('completed');
    const feed = await call('GET', '/api/v1/orders?limit=1000');
    expect(feed.json.events.filter((e: any) => e.data.trxid === 'SHOP-E2E-1').map((e: any) => e.type)).toContain('order.completed');
    const idle = await call('GET', `/api/v1/orders?since=${feed.json.next}`);
    expect(idle.json).toEqual({ events: [], next: feed.json.next });
    expect(sb.admin.ledger().orders.filter((o) => o.trxid === 'SHOP-E2E-1')).toHaveLength(1);
    // Before the console's guards: no session cookie is set, no login redirect for the API.
    expect(a.headers.get('set-cookie')).toBeNull();
    // /metrics counts the answers (the console's own route; no token set for it here).
    const metrics = { text: await (await fetch(`${url}/metrics`)).text() };
    expect(metrics.text).toMatch(/topup_api_orders_total\{answer="accepted"\} 1\n/);
    expect(metrics.text).toMatch(/topup_api_orders_total\{answer="same"\} 1\n/);
    expect(metrics.text).toMatch(/topup_api_orders_total\{answer="TRXID_CONFLICT"\} 1\n/);
    expect(metrics.text).toMatch(/topup_api_orders_total\{answer="INVALID_ORDER"\} 1\n/);
    await daemon.stop();
  }, 90_000);

  it('takes a batch over HTTP (a JSON array) handled as an inbox file, ending with its result', async () => {
    const { env } = await shop();
    const { daemon, call } = await start(env);
    const orders = [
      { trxid: 'B-E2E-1', pid: 'PUBG-60', userId: '5123456701' },
      { trxid: 'B-E2E-2', pid: 'NO-SUCH-PID', userId: '5123456702' },
    ];
    const r = await call('POST', '/api/v1/batches?name=shop-batch', { body: JSON.stringify(orders), type: 'application/json' });
    expect(r.status, r.text).toBe(202);
    const id = r.json.id as string;
    const early = await call('GET', `/api/v1/batches/${id}/result`);
    expect([200, 409]).toContain(early.status);
    const done = await waitFor('the batch done', async () => {
      const v = await call('GET', `/api/v1/batches/${id}`);
      return v.json?.done ? v.json : undefined;
    }, 60_000, 200);
    expect(done).toMatchObject({ state: 'done', resultFile: 'shop-batch.result.csv', rows: 2 });
    expect(done.counts.completed + done.counts.invalid).toBe(2);
    const result = await call('GET', `/api/v1/batches/${id}/result`);
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parseResult(result.text);
    expect(rows.map((x) => x.trxid)).toEqual(['B-E2E-1', 'B-E2E-2']);
    // The same bytes again: a duplicate, as for the inbox.
    const again = await call('POST', '/api/v1/batches?name=shop-batch', { body: JSON.stringify(orders), type: 'application/json' });
    expect(again.json.duplicateOf).toBe(id);
    // A CSV body too.
    const c = await call('POST', '/api/v1/batches', { body: csv([['trxid', 'pid', 'userId'], ['C-E2E-1', 'PUBG-60', '5123456703']]), type: 'text/csv' });
    expect(c.status).toBe(202);
    await daemon.stop();
  }, 120_000);

  it('topup token create / list / revoke work without a daemon; a revoked token is refused at the next request', async () => {
    const { env } = await shop();
    const made = await runCli(['token', 'create', '--scope', 'orders:read', '--name', 'shop-reader'], env);
    expect(made.code, made.stderr).toBe(0);
    const token = made.stdout.split('\n')[0]!;
    expect(token).toMatch(/^tut_[A-Za-z0-9_-]{43}$/);
    expect(made.stdout).toContain('Authorization: Bearer');
    const bad = await runCli(['token', 'create', '--scope', 'orders:delete'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('unknown scope "orders:delete"');
    const listed = await runCli(['token', 'list', '--json'], env);
    const list = JSON.parse(listed.stdout) as { id: string; name: string; scopes: string[] }[];
    expect(list).toMatchObject([{ name: 'shop-reader', scopes: ['orders:read'] }]);
    expect(listed.stdout).not.toContain(token);
    // TOPUP_CONSOLE set only in the daemon's environment: before any daemon ran, the hint says its
    // address is the default and where the real one is named.
    const { TOPUP_CONSOLE: _only, ...cliOnly } = env;
    const hint = await runCli(['token', 'create', '--scope', 'orders:read', '--name', 'hint'], cliOnly);
    expect(hint.stdout).toContain('http://127.0.0.1:8377 is TOPUP_CONSOLE as this command sees it, 127.0.0.1:8377 by default; the daemon\'s log names its own address');
    const { daemon, call, url } = await start(env);
    // Once the daemon's console listened, its own address (port 0 here: a random one), as recorded in the home.
    const real = await runCli(['token', 'create', '--scope', 'orders:read', '--name', 'hint2'], cliOnly);
    expect(real.stdout).toContain(`${url.replace(/\/$/, '')}/api/v1/orders`);
    expect(real.stdout).not.toContain('8377');
    expect(real.stdout).toContain("is where the daemon's console last listened");
    expect((await call('GET', '/api/v1/orders', { token })).status).toBe(200);
    const denied = await call('POST', '/api/v1/orders', { token, body: '{}', type: 'application/json' });
    expect(denied.status).toBe(403);
    expect(denied.json.code).toBe('INSUFFICIENT_SCOPE');
    const revoked = await runCli(['token', 'revoke', list[0]!.id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    const after = await call('GET', '/api/v1/orders', { token });
    expect(after.status).toBe(401);
    expect(after.json.code).toBe('UNAUTHORIZED');
    expect((await runCli(['token', 'revoke', 'tok_000000000000'], env)).code).not.toBe(0);
    const all = await runCli(['token', 'list', '--all'], env);
    expect(all.stdout).toContain('shop-reader');
    await daemon.stop();
  }, 90_000);
});
