/**
 * A batch's "balance after" is its own: the balance before less what this batch spent, whatever a
 * batch running beside it spent (a new-user trial: the batch page and summary.json said 2000.00 /
 * 1968.55 for a batch that spent 6.65: the balance read at its end included a concurrent batch's
 * spend). The balance read at the end is still given, under its own name, as the account's balance
 * at that time. Two files run at once by a real daemon against one real sandbox, whose orders stay
 * `processing` for 3 s, so each batch ends while the other has spent.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readSummary, startDaemon, tempHome, waitForResult } from '../e2e/harness.js';

const rows = (from: number, n: number, pid = 'PUBG-60'): string[][] => Array.from({ length: n }, (_, i) => [pid, String(from + i)]);

describe('balance after, with two batches at once', () => {
  it('each summary: before less after is its own spend to the cent; balanceAtEndUsd is the account as read at its end', async () => {
    const home = tempHome('batch-balance-');
    const sb = await inProcessSandbox({ balanceUsd: 500, fulfilment: { processingShare: 1, processingMs: [3_000, 3_000], failShare: 0 } });
    const daemon = startDaemon(cliEnv(home, sb, { TOPUP_POLL_INTERVAL_MS: '200' }));
    try {
      home.drop('small.csv', csv([['pid', 'userId'], ...rows(5_300_000_000, 2)]));
      home.drop('large.csv', csv([['pid', 'userId'], ...rows(5_300_001_000, 12, 'PUBG-325')]));
      await waitForResult(home, 'small', 90_000);
      await waitForResult(home, 'large', 90_000);
      const s = readSummary(home, 'small');
      const l = readSummary(home, 'large');
      expect(s.counts.completed).toBe(2);
      expect(l.counts.completed).toBe(12);
      const cents = (x: number): number => Math.round(x * 100);
      for (const b of [s, l]) {
        expect(b.balanceBeforeUsd).not.toBeNull();
        expect(cents(b.balanceBeforeUsd) - cents(b.balanceAfterUsd), JSON.stringify(b)).toBe(cents(b.spentUsd));
        expect(typeof b.balanceAtEndUsd).toBe('number');
      }
      // The two ran at once: for at least one of them the balance read at its end includes the
      // other's spend (else this test could not tell the two definitions apart).
      const mixed = [s, l].filter((b) => cents(b.balanceBeforeUsd) - cents(b.balanceAtEndUsd) !== cents(b.spentUsd));
      expect(mixed.length, JSON.stringify({ s, l })).toBeGreaterThan(0);
      // The one that ended last read the account as the ledger ends it.
      const last = [s, l].sort((x, y) => Date.parse(y.finishedAt) - Date.parse(x.finishedAt))[0]!;
      expect(cents(last.balanceAtEndUsd)).toBe(cents(sb.admin.account().balanceUsd));
      expect(cents(500) - cents(sb.admin.account().balanceUsd)).toBe(cents(s.spentUsd) + cents(l.spentUsd));
    } finally {
      await daemon.stop();
      await sb.close();
      home.remove();
    }
  }, 150_000);
});
