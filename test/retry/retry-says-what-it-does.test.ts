/**
 * Issue 30 follow-up (new-user trial): what `topup retry` says matches what it does.
 *
 * 1. After `run-covered --yes` skipped lines 4 and 5, the retry said "with fresh trxids" while its
 *    file kept the rows' own trxids BAL-3 and BAL-4 (right: they were never sent). The message now
 *    comes from the same per-row decision that wrote the file.
 * 2. A batch whose only failure is an invalid row: the retry said only "has no rows that can be
 *    bought again safely"; it now names the row and why, as a mixed batch's retry does.
 * A real daemon and sandbox, the real CLI.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, parseResult, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('topup retry says what it does with each row', () => {
  it('rows skipped by run-covered keep their own trxids, and the message says so', async () => {
    const home = tempHome('retry-says-');
    // PUBG-325 costs 4.55 USD: 10.00 USD covers lines 2 and 3, not 4 and 5.
    const sb = await inProcessSandbox({ balanceUsd: 10 });
    sb.admin.setFulfilment({ failShare: 0, processingMs: [20, 40] });
    const env = cliEnv(home, sb);
    const daemon = startDaemon(env);
    home.drop('bal.csv', csv([
      ['pid', 'userId', 'trxid'],
      ['PUBG-325', '5123420001', 'BAL-1'],
      ['PUBG-325', '5123420002', 'BAL-2'],
      ['PUBG-325', '5123420003', 'BAL-3'],
      ['PUBG-325', '5123420004', 'BAL-4'],
    ]));
    const batchId = await waitFor('a batch waiting for balance', async () => {
      const st = await runCli(['status', '--json'], env);
      if (st.stdout === '') return undefined;
      return (JSON.parse(st.stdout) as { batches: { id: string; why: string | null }[] }).batches.find((b) => /balance/.test(b.why ?? ''))?.id;
    }, 60_000, 200);
    const go = await runCli(['run-covered', batchId, '--yes'], env);
    expect(go.code, go.stderr).toBe(0);
    await waitForResult(home, 'bal');
    expect(await daemon.stop()).toBe(0);

    const r = await runCli(['retry', batchId], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('fresh trxids');
    expect(r.stdout).toMatch(/2 rows of \S+ \(lines 4, 5\) keeping their file's own trxids \(never sent\)/);
    const file = r.stdout.match(/file (\S+)\n/)![1]!;
    const rows = parseResult(readFileSync(file.startsWith('/') ? file : join(home.dir, file), 'utf8'));
    expect(rows.map((x) => x.trxid)).toEqual(['BAL-3', 'BAL-4']);
  }, 180_000);

  it('a batch whose only failure is an invalid row names that row and why', async () => {
    const home = tempHome('retry-invalid-');
    const sb = await inProcessSandbox();
    sb.admin.setFulfilment({ failShare: 0, processingMs: [20, 40] });
    const env = cliEnv(home, sb);
    const file = join(home.dir, 'orders.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['FFMENA-100', '12']]));
    const s = await runCli(['submit', file, '--json'], env, { timeoutMs: 60_000 });
    const batchId = (JSON.parse(s.stdout) as { batchId: string }).batchId;
    const r = await runCli(['retry', batchId], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/has no rows that can be bought again safely; left out: line 3: invalid \(.+\): the same cells fail again; fix it in the file/);
  }, 120_000);
});
