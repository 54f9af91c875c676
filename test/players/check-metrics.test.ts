/**
 * Issue 31: `topup_player_checks_total{source, outcome}` on a real daemon's /metrics
 * (api/player-check-counts.ts defines it once): a file's checks and the order API's by
 * outcome, and the questions answered with no call (`cached`), counted against the sandbox's own
 * call log. Player ids never appear as labels.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../e2e/harness.js';
import { shop, start, type Running } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

const checkCalls = (sb: RunningSandbox): number => sb.admin.calls().filter((c) => c.route === 'POST /pubgvvfy' || c.route === 'POST /mlvfy').length;

async function checks(d: Running): Promise<{ text: string; of: (source: string, outcome: string) => number | undefined }> {
  const r = await d.call('GET', '/metrics', { token: null });
  const text = r.text;
  if (!text.includes('topup_player_checks_total')) throw new Error(`/metrics ${r.status}: ${text.slice(0, 300)}`);
  const of = (source: string, outcome: string): number | undefined => {
    const m = new RegExp(`^topup_player_checks_total\\{source="${source}",outcome="${outcome}"\\} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  };
  return { text, of };
}

async function batch(d: Running, name: string, rows: Record<string, unknown>[]): Promise<Record<string, any>> {
  const b = await d.call('POST', `/api/v1/batches?name=${name}`, { body: rows });
  expect(b.status, b.text).toBe(202);
  return waitFor(`${name} done`, async () => {
    const r = await d.call('GET', `/api/v1/batches/${b.json.id}`);
    return r.json?.done ? r.json : undefined;
  }, 90_000, 200);
}

describe('/metrics: topup_player_checks_total', () => {
  it('counts a file\'s checks and the order API\'s by outcome, and the answers served with no call', async () => {
    const { sb, env } = await shop({ TOPUP_PLAYER_CHECKS: 'all' }, { players: { unknown: ['5300000009'] } }, 'topup-players-metrics-');
    const d = await start(env, { started: true });
    const zero = await checks(d);
    for (const source of ['file', 'api']) {
      for (const outcome of ['found', 'not_found', 'in_doubt', 'refused', 'rate_limited', 'cached']) expect(zero.of(source, outcome), `${source} ${outcome}`).toBe(0);
    }

    // A file: two players found (one of them on two rows), one not found, a line without a check.
    const first = await batch(d, 'm1', [
      { trxid: 'M-1', pid: 'PUBG-60', userId: '5300000001' },
      { trxid: 'M-2', pid: 'PUBG-325', userId: '5300000001' },
      { trxid: 'M-3', pid: 'PUBG-60', userId: '5300000009' },
      { trxid: 'M-4', pid: 'ML-86', userId: '777000111', zoneId: '2002' },
      { trxid: 'M-5', pid: 'FFMENA-100', userId: '123456' },
    ]);
    expect(first.counts).toMatchObject({ invalid: 1, completed: 4 });
    let m = await checks(d);
    expect([m.of('file', 'found'), m.of('file', 'not_found'), m.of('file', 'cached')]).toEqual([2, 1, 0]);
    expect(checkCalls(sb)).toBe(3);

    // The order API: a player the file checked (kept), a new one, the new one again, five at once.
    const ask = (userId: string) => d.call('POST', '/api/v1/players/check', { body: { slug: 'pubg', userId } });
    expect((await ask('5300000001')).status).toBe(200);
    expect((await ask('5300000009')).status).toBe(422);
    expect((await ask('5300000042')).status).toBe(200);
    expect((await ask('5300000042')).status).toBe(200);
    const five = await Promise.all(Array.from({ length: 5 }, () => ask('5300000043')));
    expect(five.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // The supplier's budget spent: a 429 answer, then its repeat within the window (no call).
    sb.admin.setFaults({ forceRateLimit: { remaining: 100_000, retryAfterSec: 1, format: 'seconds' } });
    expect((await ask('5300000777')).status).toBe(429);
    expect((await ask('5300000777')).status).toBe(429);
    sb.admin.setFaults({ forceRateLimit: null });
    m = await checks(d);
    expect(m.of('api', 'found')).toBe(2);
    expect(m.of('api', 'rate_limited')).toBe(1);
    expect(m.of('api', 'cached')).toBe(3 + 4 + 1);
    expect(m.of('api', 'not_found')).toBe(0);
    expect(checkCalls(sb)).toBe(3 + 3);

    // A second file of the same players: every answer kept, no call; each player counted once.
    await batch(d, 'm2', [
      { trxid: 'M2-1', pid: 'PUBG-60', userId: '5300000001' },
      { trxid: 'M2-2', pid: 'PUBG-60', userId: '5300000001' },
      { trxid: 'M2-3', pid: 'PUBG-60', userId: '5300000009' },
      { trxid: 'M2-4', pid: 'ML-86', userId: '777000111', zoneId: '2002' },
    ]);
    m = await checks(d);
    expect([m.of('file', 'found'), m.of('file', 'not_found'), m.of('file', 'cached')]).toEqual([2, 1, 3]);
    expect(checkCalls(sb)).toBe(6);
    // As whole numbers: a float such as 0.11653000000000001 holds the digits of an id by chance.
    expect(m.text).not.toMatch(/(?<![\d.])(5300000\d{3}|777000111)(?![\d])/);
    await d.daemon.stop();
  }, 240_000);
});
