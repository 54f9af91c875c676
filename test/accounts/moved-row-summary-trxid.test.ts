/**
 * review38 (adversarial review of 213231b): a moved row keeps the reseller's trxid in the result's
 * trxid cell, and the trxid sent is `sentTrxid`; but outbox/<name>.summary.json, the file that
 * lists the rows an operator must look at (`review`, and `resolved`), still names them by the trxid
 * SENT (`R1-1-main`), with nothing beside it: a trxid that is in none of the reseller's records and
 * that the result file beside it no longer shows in its trxid column.
 *
 * Two real sandboxes and the real CLI: `second` (cheaper) in maintenance, so the row moves to
 * `main`; `main` answers 500 before anything is created, every time, so the row is in doubt there,
 * gives up (TOPUP_REVIEW_AFTER_MS), its history shows nothing, and it goes to review.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, readResult, readSummary, runCli } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { twoAccounts } from './two-sandboxes.js';

releaseAfterEach();

describe('review38: a moved row in review, in the batch summary', () => {
  it('is named by the reseller\'s trxid, as in the result beside it', async () => {
    const { home, a, b, env } = await twoAccounts({
      extra: 'max_queue_delay = "1s"',
      env: { TOPUP_REVIEW_AFTER_MS: '1000', TOPUP_REQUEST_TIMEOUT_MS: '1000' },
    });
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    a.admin.setFaults({ error5xxBeforeShare: 1 });
    const file = join(home.dir, 'r1.csv');
    writeFileSync(file, csv([['trxid', 'pid', 'userId'], ['R1-1', 'PUBG-60', '5123456600']]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 240_000 });
    expect(r.code, r.stderr.slice(-2000)).toBeLessThanOrEqual(1);
    const rows = readResult(home, 'r1');
    expect(rows.map((x) => [x.trxid, x.status, x.account, x.sentTrxid])).toEqual([['R1-1', 'review', 'main', 'R1-1-main']]);
    const summary = readSummary(home, 'r1');
    expect(summary.review).toHaveLength(1);
    // Main: 'R1-1-main' (the trxid sent), no own trxid anywhere in the entry.
    expect(summary.review[0].trxid).toBe('R1-1');
  }, 300_000);
});
