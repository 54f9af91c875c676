import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { join } from 'node:path';
import { judge, type Ledger } from '../../torture/lib.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

let home: TempHome;
let sb: RunningSandbox;
releaseAfterEach();

const batch = (n: number) => csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => ['PUBG-60', `7${String(1_000_000 + i)}`])]);

describe('§6 one scheduler for every call', () => {
  it('a batch of 300 rows, with a restart in the middle, gets no 429 from an API enforcing the same rolling windows', async () => {
    // The real limits (40/1 s, 200/1 min) scaled down in time by ×5 so the test takes seconds.
    const limits = [
      { limit: 40, windowMs: 200 },
      { limit: 200, windowMs: 12_000 },
    ];
    home = tempHome();
    sb = await inProcessSandbox({ rateLimits: limits, fulfilment: { processingShare: 0.5, processingMs: [100, 400] } });
    home.drop('rate.csv', batch(300));
    const env = cliEnv(home, sb, { TOPUP_RATE_LIMITS: '40/200ms,200/12s', TOPUP_RATE_MARGIN_MS: '20' });
    const first = startDaemon(env, ['--once']);
    await sleep(2500);
    await first.kill(); // a crash-restart must not burst past the windows either
    const rest = await runCli(['daemon', '--once'], env, { timeoutMs: 120_000 });
    expect(rest.code, rest.stderr).toBe(0);
    const stats = sb.admin.rateStats();
    expect(stats.rateLimited).toBe(0);
    for (const w of stats.worstPerWindow) expect(w.worstAdmitted).toBeLessThanOrEqual(w.limit);
    const v = judge(join(home.outbox, 'rate.result.csv'), 300, sb.admin.ledger() as unknown as Ledger);
    expect(v).toMatchObject({ resultRows: 300, doubleCharges: 0, rowsWithoutResult: 0, mismatches: 0, chargesWithoutResult: 0 });
  });
});

describe('§8 polling', () => {
  it('reads many statuses per call from GET /history instead of one call per order', async () => {
    home = tempHome();
    sb = await inProcessSandbox({ fulfilment: { processingShare: 1, processingMs: [1500, 3000] } });
    home.drop('poll.csv', batch(60));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb, { TOPUP_POLL_INTERVAL_MS: '500' }));
    expect(r.code, r.stderr).toBe(0);
    expect(readResult(home, 'poll').every((x) => x.status === 'completed')).toBe(true);
    const byRoute: Record<string, number> = {};
    for (const c of sb.admin.calls()) byRoute[c.route] = (byRoute[c.route] ?? 0) + 1;
    const submits = Object.entries(byRoute).filter(([k]) => k.includes('orders') && !k.includes(':')).reduce((n, [, v]) => n + v, 0);
    const polls = Object.entries(byRoute).filter(([k]) => k.includes('history') || k.includes(':')).reduce((n, [, v]) => n + v, 0);
    expect(submits).toBeGreaterThanOrEqual(60);
    // 60 orders, each processing 1.5–3 s, polled every 0.5 s: one call per order per poll would be
    // hundreds; history sweeps need a handful.
    expect(polls).toBeLessThan(20);
  });
});
