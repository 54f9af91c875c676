/**
 * `topup account pause` on a home with one account holds the rows that already wait at the rate
 * gate, not only the rows the dispatch stage would start next. The stage starts up to
 * max-in-flight rows at once; at a slow limit (2 calls a second here, 10/s at the real supplier)
 * those went on being sent for seconds after the CLI said "no order is sent to it" (stop 36's CI:
 * the console's legend test saw a row leave while the page was read). Real sandbox, real daemon
 * and CLI as child processes.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';

const posts = (sb: Awaited<ReturnType<typeof inProcessSandbox>>): number => sb.admin.calls().filter((c) => c.method === 'POST' && c.route.includes('orders')).length;

describe('the operator pause on a home with one account', () => {
  it('stops the rows already waiting at the rate gate; resume sends them, each once', { timeout: 120_000 }, async () => {
    const sb = await inProcessSandbox();
    const home = tempHome();
    const env = cliEnv(home, sb, { TOPUP_RATE_LIMITS: '2/1s' });
    startDaemon(env);
    const rows: string[][] = [['pid', 'userId']];
    for (let i = 0; i < 20; i++) rows.push(['PUBG-60', String(5_123_400_200 + i)]);
    home.drop('gate.csv', csv(rows));
    await waitFor('a few orders sent', () => posts(sb) >= 3, 60_000, 50);
    const paused = await runCli(['account', 'pause', 'default', '--note', 'hold'], env, { timeoutMs: 60_000 });
    expect(paused.code, paused.stderr).toBe(0);
    // At most the request already on the wire when the pause was written may still arrive.
    const atPause = posts(sb);
    await new Promise((r) => setTimeout(r, 5_000));
    const after = posts(sb);
    expect(after - atPause, `POST /orders after the pause: ${after - atPause} (before the fix: about 2 a second, 10 in 5 s)`).toBeLessThanOrEqual(1);
    expect(after).toBeLessThan(20);
    const resumed = await runCli(['account', 'resume', 'default'], env, { timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    await waitForResult(home, 'gate', 90_000);
    const result = readResult(home, 'gate');
    expect(result).toHaveLength(20);
    expect(result.every((r) => r.status === 'completed')).toBe(true);
    // Each row bought once: one order per trxid at the supplier.
    const trxids = sb.admin.ledger().orders.map((o) => o.trxid);
    expect(new Set(trxids).size).toBe(trxids.length);
    expect(trxids).toHaveLength(20);
  });
});
