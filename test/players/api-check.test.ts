/**
 * Issue 31, "for shops", with real parts: the real daemon (dist/cli.js) serving the order API on
 * 127.0.0.1, the in-process sandbox answering the player checks in both its answer styles, tokens
 * made with the real CLI, every answer held to the OpenAPI document the daemon serves.
 *
 *  - POST /api/v1/players/check needs the players:check scope (a shop's orders token is refused);
 *  - found answers the name; a repeat, or asks for one player at the same moment, make one call;
 *  - not found is 422 PLAYER_NOT_FOUND naming the fields, in every way the supplier says it;
 *  - a 429 or an answer that says nothing (a proxy's HTML page) is never "not found", and a repeat
 *    of it within its window makes no new call;
 *  - an order asks for the check (checkPlayer), or follows TOPUP_PLAYER_CHECKS: a player not found
 *    is refused before the money (nothing stored, nothing ordered); checkPlayer: false buys it anyway.
 */
import { describe, expect, it } from 'vitest';
import { runCli, waitFor } from '../e2e/harness.js';
import { shop, start, type Running } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { conforms } from '../orderapi/conformance.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

const NAME = /^[A-Z][a-z]+[A-Z][a-z]+\d+$/;
const checkCalls = (sb: RunningSandbox): { route: string; status: number }[] => sb.admin.calls().filter((c) => c.route === 'POST /pubgvvfy' || c.route === 'POST /mlvfy');

/** The daemon, every answer held to the document it serves. */
async function daemon(env: NodeJS.ProcessEnv): Promise<Running> {
  let doc: Record<string, any> | undefined;
  const d = await start(env, { started: true, check: async (method, url, res, text) => conforms(doc!, method, url, res, text) });
  doc = (await (await fetch(`${d.url}/api/v1/openapi.json`)).json()) as Record<string, any>;
  return d;
}

async function token(env: NodeJS.ProcessEnv, scopes: string, name: string): Promise<string> {
  const r = await runCli(['token', 'create', '--scope', scopes, '--name', name, '--json'], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).token as string;
}

describe('POST /api/v1/players/check and an order\'s checkPlayer, on a running daemon', () => {
  it('spec-style sandbox: its own scope, the name, one call per player, not found before the money, a 429 never read as not found', async () => {
    const { sb, env } = await shop({ TOPUP_PLAYER_CHECK_PRICE_USD: '0.01' }, { players: { unknown: ['5300000009', '777000111(2001)'], checkPriceUsd: 0.01 } }, 'topup-players-api-');
    const d = await daemon(env);
    const checker = await token(env, 'players:check', 'checkout');
    const orders = await token(env, 'orders:write,orders:read', 'shop');
    const check = (body: unknown, t = checker) => d.call('POST', '/api/v1/players/check', { body, token: t });

    // A shop's orders token may not make checks (they may be charged): refused before any call.
    const denied = await check({ slug: 'pubg', userId: '5300000001' }, orders);
    expect(denied.status).toBe(403);
    expect(denied.json).toMatchObject({ code: 'INSUFFICIENT_SCOPE', missingScopes: ['players:check'] });
    expect(checkCalls(sb)).toHaveLength(0);

    // Found: the name; asked again, the kept answer (no second call).
    const a = await check({ slug: 'pubg', userId: '5300000001' });
    expect(a.status, a.text).toBe(200);
    expect(a.json).toMatchObject({ found: true, check: 'pubg', player: { userId: '5300000001' }, cached: false });
    expect(a.json.playerName).toMatch(NAME);
    const again = await check({ pid: 'PUBG-325', userId: '5300000001' });
    expect(again.json).toMatchObject({ found: true, cached: true, playerName: a.json.playerName });
    expect(checkCalls(sb)).toHaveLength(1);
    // Five asks for one player at the same moment: one call.
    const five = await Promise.all(Array.from({ length: 5 }, () => check({ slug: 'pubg', userId: '5300000042' })));
    expect(new Set(five.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(five.map((r) => r.json.playerName)).size).toBe(1);
    expect(checkCalls(sb)).toHaveLength(2);
    // Mobile Legends by a pack's pid: user id and zone.
    const ml = await check({ pid: 'ML-86', userId: '777000111', zoneId: '2002' });
    expect(ml.json).toMatchObject({ found: true, check: 'ml', player: { userId: '777000111', zoneId: '2002' } });

    // Not found: 422 naming the fields; the repeat is answered from the kept answer.
    const nf = await check({ slug: 'pubg', userId: '5300000009' });
    expect(nf.status).toBe(422);
    expect(nf.json).toMatchObject({ code: 'PLAYER_NOT_FOUND', errors: [{ field: 'userId' }] });
    const nfMl = await check({ slug: 'mobilelegends', userId: '777000111', zoneId: '2001' });
    expect(nfMl.json.errors.map((e: { field: string }) => e.field)).toEqual(['userId', 'zoneId']);
    const callsSoFar = checkCalls(sb).length;
    expect((await check({ slug: 'pubg', userId: '5300000009' })).json).toMatchObject({ code: 'PLAYER_NOT_FOUND', cached: true });
    expect(checkCalls(sb)).toHaveLength(callsSoFar);
    // A game without a check; a request that is not one.
    expect((await check({ pid: 'FFMENA-100', userId: '123' })).json).toMatchObject({ code: 'NO_PLAYER_CHECK', errors: [{ field: 'pid' }] });
    expect((await check({ slug: 'mobilelegends', userId: '777000111' })).json).toMatchObject({ code: 'INVALID_CHECK', errors: [{ field: 'zoneId' }] });

    // An order that asks for the check: not found is refused before the money, nothing stored.
    const refused = await d.call('POST', '/api/v1/orders', { token: orders, body: { trxid: 'CHK-ORD-1', pid: 'PUBG-60', userId: '5300000009', checkPlayer: true } });
    expect(refused.status).toBe(422);
    expect(refused.json).toMatchObject({ code: 'PLAYER_NOT_FOUND', errors: [{ field: 'userId' }] });
    expect(refused.json.detail).toContain('"checkPlayer": false');
    expect((await d.call('GET', '/api/v1/orders/CHK-ORD-1', { token: orders })).status).toBe(404);
    // Found: stored with the name, which the order's view shows.
    const placed = await d.call('POST', '/api/v1/orders', { token: orders, body: { trxid: 'CHK-ORD-2', pid: 'PUBG-60', userId: '5300000001', checkPlayer: true } });
    expect(placed.status, placed.text).toBe(202);
    expect(placed.json.playerName).toBe(a.json.playerName);
    // Bought anyway on purpose: checkPlayer false.
    const anyway = await d.call('POST', '/api/v1/orders', { token: orders, body: { trxid: 'CHK-ORD-1', pid: 'PUBG-60', userId: '5300000009', checkPlayer: false } });
    expect(anyway.status, anyway.text).toBe(202);
    expect(anyway.json.playerName).toBeNull();
    // A game without a check cannot ask for one.
    const noCheck = await d.call('POST', '/api/v1/orders', { token: orders, body: { trxid: 'CHK-ORD-3', pid: 'FFMENA-100', userId: '123456', checkPlayer: true } });
    expect(noCheck.json).toMatchObject({ code: 'NO_PLAYER_CHECK', errors: [{ field: 'checkPlayer' }] });
    // Without the flag and with TOPUP_PLAYER_CHECKS off: no check (as for a file).
    const plain = await d.call('POST', '/api/v1/orders', { token: orders, body: { trxid: 'CHK-ORD-4', pid: 'PUBG-60', userId: '5300000555' } });
    expect(plain.status).toBe(202);
    expect(plain.json.playerName).toBeNull();
    for (const t of ['CHK-ORD-1', 'CHK-ORD-2', 'CHK-ORD-4']) {
      await waitFor(`${t} completed`, async () => ((await d.call('GET', `/api/v1/orders/${t}`, { token: orders })).json?.status === 'completed' ? true : undefined), 60_000, 100);
    }
    expect((await d.call('GET', '/api/v1/orders/CHK-ORD-2', { token: orders })).json.playerName).toBe(a.json.playerName);
    const ledger = sb.admin.ledger();
    expect(ledger.orders.map((o) => o.trxid).sort()).toEqual(['CHK-ORD-1', 'CHK-ORD-2', 'CHK-ORD-4']);
    // Every check charged by the sandbox's tariff is a check of its own trxid space, never an order.
    const charged = ledger.entries.filter((e) => e.kind === 'check');
    expect(charged).toHaveLength(checkCalls(sb).length);
    expect(charged.every((e) => /^-CHK-(PUBG|ML)-[0-9a-f]{16}$/.test(e.trxid!) && e.orderId === null)).toBe(true);

    // The account's budget refuses (429): PLAYER_CHECK_RATE_LIMITED with Retry-After, not "not found";
    // a repeat within the window makes no new call; an order asking for the check is not stored.
    sb.admin.setFaults({ forceRateLimit: { remaining: 100_000, retryAfterSec: 1, format: 'seconds' } });
    const limited = await check({ slug: 'pubg', userId: '5300000777' });
    expect(limited.status, limited.text).toBe(429);
    expect(limited.json.code).toBe('PLAYER_CHECK_RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const limitedCalls = checkCalls(sb).length;
    const repeat = await check({ slug: 'pubg', userId: '5300000777' });
    expect(repeat.status).toBe(429);
    expect(checkCalls(sb)).toHaveLength(limitedCalls);
    const held = await d.call('POST', '/api/v1/orders', { token: orders, body: { trxid: 'CHK-ORD-5', pid: 'PUBG-60', userId: '5300000777', checkPlayer: true } });
    expect(held.status, held.text).toBe(429);
    expect(held.json.code).toBe('PLAYER_CHECK_RATE_LIMITED');
    sb.admin.setFaults({ forceRateLimit: null });
    expect((await d.call('GET', '/api/v1/orders/CHK-ORD-5', { token: orders })).status).toBe(404);
    expect(sb.admin.ledger().orders.filter((o) => o.userId === '5300000777')).toHaveLength(0);
    await d.daemon.stop();
  }, 180_000);

  it('real-world sandbox: every way it says "not found" is PLAYER_NOT_FOUND; its HTML error page is PLAYER_CHECK_IN_DOUBT, never not found; orders and JSON batches follow TOPUP_PLAYER_CHECKS', async () => {
    const unknown = Array.from({ length: 8 }, (_, i) => String(5400000100 + i));
    const { sb, env } = await shop({ TOPUP_PLAYER_CHECKS: 'all' }, { answers: 'real-world', realWorld: { htmlShare: 0 }, players: { unknown } }, 'topup-players-api-rw-');
    const d = await daemon(env);
    const check = (body: unknown) => d.call('POST', '/api/v1/players/check', { body });

    for (const u of unknown) {
      const r = await check({ slug: 'pubg', userId: u });
      expect(r.status, `${u}: ${r.text}`).toBe(422);
      expect(r.json.code).toBe('PLAYER_NOT_FOUND');
    }
    // The supplier said it in more than one way (200 success:false, 400, 422, a 404 with a body).
    expect(new Set(checkCalls(sb).map((c) => c.status)).size).toBeGreaterThan(1);
    for (let i = 0; i < 8; i++) {
      const r = await check({ slug: 'pubg', userId: String(5400000200 + i) });
      expect(r.status, r.text).toBe(200);
      expect(r.json.playerName).toMatch(NAME);
    }

    // Orders follow TOPUP_PLAYER_CHECKS=all when they do not say: not found refused, found named.
    const refused = await d.call('POST', '/api/v1/orders', { body: { trxid: 'RW-ORD-1', pid: 'PUBG-60', userId: unknown[0] } });
    expect(refused.status).toBe(422);
    expect(refused.json.code).toBe('PLAYER_NOT_FOUND');
    const named = await d.call('POST', '/api/v1/orders', { body: { trxid: 'RW-ORD-2', pid: 'PUBG-60', userId: '5400000200' } });
    expect(named.status, named.text).toBe(202);
    expect(named.json.playerName).toMatch(NAME);
    const anyway = await d.call('POST', '/api/v1/orders', { body: { trxid: 'RW-ORD-3', pid: 'PUBG-60', userId: unknown[1], checkPlayer: false } });
    expect(anyway.status, anyway.text).toBe(202);

    // A proxy's HTML page for every call: nothing is known about the player. 503
    // PLAYER_CHECK_IN_DOUBT (never 422), a repeat within the window makes no new call, and an
    // order that needs the check is not stored.
    sb.admin.setAnswers({ htmlShare: 1 });
    const doubt = await check({ slug: 'pubg', userId: '5400000999' });
    expect(doubt.status, doubt.text).toBe(503);
    expect(doubt.json.code).toBe('PLAYER_CHECK_IN_DOUBT');
    expect(Number(doubt.headers.get('retry-after'))).toBeGreaterThan(0);
    const before = checkCalls(sb).length;
    const repeat = await check({ slug: 'pubg', userId: '5400000999' });
    expect(repeat.json.code).toBe('PLAYER_CHECK_IN_DOUBT');
    expect(checkCalls(sb)).toHaveLength(before);
    const held = await d.call('POST', '/api/v1/orders', { body: { trxid: 'RW-ORD-4', pid: 'PUBG-60', userId: '5400000999' } });
    expect(held.status, held.text).toBe(503);
    expect(held.json.code).toBe('PLAYER_CHECK_IN_DOUBT');
    expect((await d.call('GET', '/api/v1/orders/RW-ORD-4')).status).toBe(404);
    sb.admin.setAnswers({ htmlShare: 0 });
    await waitFor('RW-ORD-3 completed', async () => ((await d.call('GET', '/api/v1/orders/RW-ORD-3')).json?.status === 'completed' ? true : undefined), 60_000, 100);
    // A JSON batch is a file: checked by TOPUP_PLAYER_CHECKS, a row may say sendWithoutCheck.
    const batch = await d.call('POST', '/api/v1/batches?name=rw-checks', { body: [
      { trxid: 'RW-B-1', pid: 'PUBG-60', userId: unknown[2] },
      { trxid: 'RW-B-2', pid: 'PUBG-60', userId: unknown[3], sendWithoutCheck: true },
      { trxid: 'RW-B-3', pid: 'PUBG-60', userId: '5400000201' },
    ] });
    expect(batch.status, batch.text).toBe(202);
    const done = await waitFor('the batch done', async () => {
      const b = await d.call('GET', `/api/v1/batches/${batch.json.id}`);
      return b.json?.done ? b.json : undefined;
    }, 60_000, 200);
    expect(done.counts).toMatchObject({ invalid: 1, completed: 2 });
    const ordered = sb.admin.ledger().orders.map((o) => o.trxid).sort();
    expect(ordered).toEqual(expect.arrayContaining(['RW-B-2', 'RW-B-3']));
    expect(ordered).not.toContain('RW-B-1');
    expect(ordered).not.toContain('RW-ORD-1');
    expect(ordered).not.toContain('RW-ORD-4');
    expect(ordered).toContain('RW-ORD-3');
    await d.daemon.stop();
  }, 180_000);
});
