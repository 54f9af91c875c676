/**
 * Issue 32, new-user trial s35 defect 2: in the window after a restore, every file claimed read
 * every account's history back to the copy before it sent anything (a one-row file waited 21 s on a
 * rate limit; the pages read grow with the orders made since the copy, for 8 days).
 *
 * What can matter to a row claimed in the window is a purchase made after the copy was taken and
 * before the store was lost: everything this home bought since its store came back is in the store.
 * So each account's history is read once per window, back to before the copy, and kept in the store
 * (ops/restore-reconcile.ts StoredHistories): a second file, and a restarted daemon, read nothing.
 *
 * Measured on the real sandboxes' call logs and the wall clock from drop to result: `second` holds
 * 120 orders made after the copy (3 pages of 50), at 5 requests a second.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, twoAccounts } from '../backup/world.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();
const FILLER = csv([['pid', 'userId', 'trxid'], ...Array.from({ length: 120 }, (_, i) => ['PUBG-60', `5123459${String(i).padStart(3, '0')}`, `WF-${i}`])]);
const one = (n: number): string => csv([['pid', 'userId', 'trxid'], ['PUBG-60', `512346300${n}`, `ONE-${n}`]]);

const historyCalls = (sb: RunningSandbox): number => sb.admin.calls().filter((c) => c.route.includes('history')).length;

describe('the window after a restore reads each history once', () => {
  it('a one-row file after the first reads no history, nor after a restart; every row bought once', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const first = startDaemon(env);
    await waitFor('up', () => /topup daemon started/.test(first.output()), 60_000);
    const bk = await runCli(['backup', '--to', join(home.dir, 'offsite'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // 120 orders on `second` after the copy: `main` in maintenance, the filler spills there.
    a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    home.drop('fill.csv', FILLER);
    await waitForResult(home, 'fill', 180_000);
    await first.stop();
    a.admin.setFaults({ maintenance: null });
    expect(ledgerTrxids(b).length).toBe(120);
    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    b.admin.setRateLimits([{ windowMs: 1000, limit: 5 }]);

    let d = startDaemon(env);
    await waitFor('reconciled', () => /sending starts now/i.test(d.output()), 90_000, 100);
    const measured: string[] = [];
    const drop = async (n: number): Promise<number> => {
      a.admin.resetCalls();
      b.admin.resetCalls();
      const t0 = Date.now();
      home.drop(`one${n}.csv`, one(n));
      await waitForResult(home, `one${n}`, 120_000).catch((err: unknown) => { console.log(d.output().split('\n').slice(-40).join('\n')); throw err; });
      await waitFor(`ONE-${n} bought`, () => ledgerTrxids(a).includes(`ONE-${n}`), 60_000, 50);
      const calls = historyCalls(a) + historyCalls(b);
      measured.push(`file ${n}: ${calls} history page(s), ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      return calls;
    };
    const firstFile = await drop(1);
    const secondFile = await drop(2);
    await d.stop();
    d = startDaemon(env);
    await waitFor('up again', () => /topup daemon started/.test(d.output()), 60_000);
    const afterRestart = await drop(3);
    await d.stop();
    console.log(`one-row files after a restore: ${measured.join('; ')}`);
    // The first file reads main (1 page) and second (3 pages) back to the copy, once.
    expect(firstFile).toBeGreaterThanOrEqual(4);
    expect(secondFile).toBe(0);
    expect(afterRestart).toBe(0);
    for (const n of [1, 2, 3]) expect(ledgerTrxids(a).filter((t) => t === `ONE-${n}`)).toHaveLength(1);
    expect(ledgerTrxids(b).filter((t) => t.startsWith('ONE-'))).toEqual([]);
  }, 420_000);
});
