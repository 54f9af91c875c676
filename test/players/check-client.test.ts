/**
 * The player-name checks (POST /pubgvvfy, /mlvfy: beyond the seed's spec, docs/player-checks.md)
 * through the real client against the real sandbox on 127.0.0.1: every outcome, both answer
 * styles, the charge per check, the rate gate, and the trxid space that never meets an order's.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ResellerClient } from '../../src/api/client.js';
import { CHECK_TRXID_PREFIX, checkTrxid, isCheckTrxid, TRXID_PATTERN } from '../../src/kernel/identity.js';
import { client, countingGate, KEY, onCleanup, setup } from '../api/helpers.js';

let n = 0;
const tx = (kind: 'pubg' | 'ml' = 'pubg') => checkTrxid(kind, (++n).toString(16).padStart(16, '0'));

/** A server that answers every request with one fixed status, content type and text. */
async function fixed(status: number, type: string, text: string): Promise<{ url: string }> {
  const server = createServer((_req, res) => { res.writeHead(status, { 'content-type': type }); res.end(text); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onCleanup(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('the check trxid space (kernel/identity.ts)', () => {
  it('a check trxid is never a trxid an order may carry, and the client refuses to mix them', async () => {
    const t = tx();
    expect(t.startsWith(CHECK_TRXID_PREFIX)).toBe(true);
    expect(isCheckTrxid(t)).toBe(true);
    expect(TRXID_PATTERN.test(t)).toBe(false);
    expect(isCheckTrxid('CHK-PUBG-0001')).toBe(false); // what a file may hold is an order's trxid
    const { sb, api } = await setup();
    await expect(api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: 'CHK-PUBG-1' })).rejects.toThrow(/check space/);
    await expect(api.submitOrder({ pid: 'PUBG-60', trxid: t, userId: '5123456' })).rejects.toThrow(/player-check trxid/);
    expect(sb.admin.calls()).toHaveLength(0);
    expect(sb.admin.ledger().orders).toHaveLength(0);
  });
});

describe('spec-style answers', () => {
  it('found: the same id always has the same name; an unknown id is not-found; no order is placed', async () => {
    const { sb, api } = await setup({ players: { unknown: ['5000000003'] } });
    const a = await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() });
    const b = await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() });
    expect(a.outcome).toBe('found');
    expect(a.name).toMatch(/^[A-Z][a-z]+[A-Z][a-z]+\d+$/);
    expect(b.name).toBe(a.name);
    const nf = await api.checkPlayer({ kind: 'pubg', playerId: '5000000003', trxid: tx() });
    expect(nf).toMatchObject({ outcome: 'not-found', status: 404 });
    expect(nf.said).toMatch(/PLAYER_NOT_FOUND/);
    // The orders' test magic is unknown to the checks too: a check and an order agree.
    expect((await api.checkPlayer({ kind: 'pubg', playerId: 'fail-1', trxid: tx() })).outcome).toBe('not-found');
    const ml = await api.checkPlayer({ kind: 'ml', userId: '777888999', zoneId: '2005', trxid: tx('ml') });
    expect(ml.outcome).toBe('found');
    expect(sb.admin.ledger().orders).toHaveLength(0);
    expect(sb.admin.ledger().entries).toHaveLength(0);
  });

  it('a charge per check when the sandbox is told to: a ledger entry of kind check, never an order; a balance that cannot pay refuses', async () => {
    const { sb, api } = await setup({ players: { checkPriceUsd: 0.01 }, balanceUsd: 0.015 });
    const t = tx();
    expect((await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: t })).outcome).toBe('found');
    const entries = sb.admin.ledger().entries;
    expect(entries).toEqual([expect.objectContaining({ kind: 'check', trxid: t, orderId: null, amountUsd: -0.01 })]);
    const refused = await api.checkPlayer({ kind: 'pubg', playerId: '5123457', trxid: tx() });
    expect(refused.outcome).toBe('refused');
    expect(refused.said).toMatch(/INSUFFICIENT/);
    expect(sb.admin.ledger().orders).toHaveLength(0);
  });

  it('goes through the rate gate once per check, as route player-check; a 429 is rate-limited and holds the gate', async () => {
    const gate = countingGate();
    const { sb, api } = await setup({}, { gate });
    await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() });
    expect(gate.calls).toEqual([{ route: 'player-check', method: 'POST', priority: 10 }]);
    sb.admin.setFaults({ forceRateLimit: { remaining: 1, retryAfterSec: 2, format: 'seconds' } });
    const r = await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() });
    expect(r).toMatchObject({ outcome: 'rate-limited', status: 429, retryAfterMs: 2000 });
    expect(gate.holdOffs).toEqual([2000]);
  });

  it('refused: a revoked key; in doubt: no answer at all', async () => {
    const { sb, api } = await setup();
    sb.admin.setAccount({ state: 'banned' });
    expect((await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() })).outcome).toBe('refused');
    sb.admin.setFaults({ blackhole: true });
    const c = client(sb, { timeoutMs: 300 });
    const r = await c.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() });
    expect(r.outcome).toBe('in-doubt');
    expect(r.status).toBeUndefined();
  });
});

describe('real-world answers', () => {
  it('every variant of found and not-found is read as the sandbox meant it (name, data envelope, 200/400/404/422 not found)', async () => {
    const { sb, api } = await setup({ answers: 'real-world', realWorld: { htmlShare: 0 }, players: { unknown: ['5000000009'] } });
    const statuses = new Set<number>();
    let names = 0;
    for (let i = 0; i < 40; i++) {
      const f = await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() });
      expect(f.outcome, JSON.stringify(f.answer)).toBe('found');
      expect(f.name).toBe((await setupName(sb)));
      names++;
      const nf = await api.checkPlayer({ kind: 'pubg', playerId: '5000000009', trxid: tx() });
      expect(nf.outcome, JSON.stringify(nf.answer)).toBe('not-found');
      statuses.add(nf.status!);
    }
    expect(names).toBe(40);
    expect([...statuses].sort()).toEqual([200, 400, 404, 422]);
  });

  it('an HTML error page is in doubt, never not-found', async () => {
    const { api } = await setup({ answers: 'real-world', realWorld: { htmlShare: 1 } });
    const r = await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() });
    expect(r).toMatchObject({ outcome: 'in-doubt', status: 502 });
  });

  it('a deployment without the route (a bare 404 page, 501) is refused, not a wrong id; a 500 is in doubt', async () => {
    for (const [status, type, text, outcome] of [
      [404, 'text/html', '<html><body>Not Found</body></html>', 'refused'],
      [404, 'application/json', '{"success":false,"error":"NOT FOUND"}', 'refused'],
      [501, 'application/json', '{"success":false,"error":"NOT IMPLEMENTED"}', 'refused'],
      [500, 'application/json', '{"success":false,"error":"INTERNAL ERROR"}', 'in-doubt'],
      [200, 'application/json', '{"foo":1}', 'in-doubt'],
      [200, 'application/json', '{"success":true}', 'found'],
      [200, 'application/json', '{"success":false,"error":"Player not found"}', 'not-found'],
      [422, 'application/json', '{"message":"The given data was invalid.","code":"PLAYER_NOT_FOUND"}', 'not-found'],
    ] as const) {
      const srv = await fixed(status, type, text);
      const api = new ResellerClient({ baseUrl: srv.url, apiKey: KEY, timeoutMs: 2000 });
      onCleanup(() => api.close());
      const r = await api.checkPlayer({ kind: 'pubg', playerId: '5123456', trxid: tx() });
      expect(r.outcome, `${status} ${text}`).toBe(outcome);
    }
  });
});

/** The name the sandbox gives 5123456 (from its seed: stable). */
async function setupName(sb: { admin: { players(): { seed: number } } }): Promise<string> {
  const { PlayerDirectory } = await import('../../src/sandbox/players.js');
  return new PlayerDirectory(sb.admin.players().seed).lookup('pubg', '5123456', null)!;
}
