/**
 * Issue 30 item 7: "a file the balance cannot cover waits whole, with no explicit way to run the
 * part it covers". `topup run-covered BATCH` (and the console's button, the same ops/run-covered.ts):
 * a real daemon, a real sandbox, the real CLI. The part the balance covers is bought, the rest ends
 * `skipped` (nothing bought), and a retry after a top-up buys the rest under the file's own trxids:
 * every row bought once.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

async function waitingBatch(env: NodeJS.ProcessEnv): Promise<string> {
  return waitFor('a batch waiting for balance', async () => {
    const st = await runCli(['status', '--json'], env);
    if (st.stdout === '') return undefined;
    return (JSON.parse(st.stdout) as { batches: { id: string; why: string | null }[] }).batches.find((b) => /balance/.test(b.why ?? ''))?.id;
  }, 30_000, 200);
}

describe('run the part of a batch the balance covers', () => {
  it('says what would run and be skipped, runs the covered rows on --yes, skips the rest, and a retry after a top-up buys the rest once', async () => {
    const home = tempHome();
    // PUBG-325 4.55 USD, PUBG-60 0.92 USD. 10.50 USD covers lines 2, 3 (9.10) and, first fit, the
    // cheap line 5 (0.92); not lines 4 and 6.
    const sb = await inProcessSandbox({ balanceUsd: 10.5 });
    const env = cliEnv(home, sb);
    const daemon = startDaemon(env);
    home.drop('part.csv', csv([
      ['pid', 'userId', 'trxid'],
      ['PUBG-325', '5123410001', 'PART-1'],
      ['PUBG-325', '5123410002', 'PART-2'],
      ['PUBG-325', '5123410003', 'PART-3'],
      ['PUBG-60', '5123410004', 'PART-4'],
      ['PUBG-325', '5123410005', 'PART-5'],
    ]));
    const batchId = await waitingBatch(env);
    expect(sb.admin.ledger().orders).toHaveLength(0);

    // Without --yes: the preview only.
    const look = await runCli(['run-covered', batchId, '--json'], env);
    expect(look.code, look.stderr).toBe(0);
    expect(JSON.parse(look.stdout)).toMatchObject({ run: { rows: 3, usd: 10.02, lines: [2, 3, 5] }, skip: { rows: 2, usd: 9.1, lines: [4, 6] }, asked: false });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(sb.admin.ledger().orders).toHaveLength(0);

    const go = await runCli(['run-covered', batchId, '--yes'], env);
    expect(go.code, go.stderr).toBe(0);
    expect(go.stdout).toContain('run now:  3 rows, 10.02 USD (lines 2-3, 5)');
    await waitForResult(home, 'part');
    const result = readResult(home, 'part');
    expect(result.map((r) => r.status)).toEqual(['completed', 'completed', 'skipped', 'completed', 'skipped']);
    const skipped = result.filter((r) => r.status === 'skipped');
    for (const r of skipped) expect(r.error).toContain(`topup retry ${batchId}`);
    expect(sb.admin.ledger().orders.map((o) => o.trxid).sort()).toEqual(['PART-1', 'PART-2', 'PART-4']);

    // Not waiting for balance any more: refused with the reason.
    const again = await runCli(['run-covered', batchId, '--yes'], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/not ordering|not waiting for balance/);

    sb.admin.topup({ amountUsd: 100 });
    const retry = await runCli(['retry', batchId, '--json'], env);
    expect(retry.code, retry.stderr).toBe(0);
    const retryId = (JSON.parse(retry.stdout) as { batchId: string }).batchId;
    await waitFor('the retry finished', () => sb.admin.ledger().orders.length === 5 ? true : undefined, 60_000, 100);
    // The skipped rows, never sent, kept the file's trxids: a re-drop could not buy them again.
    expect(sb.admin.ledger().orders.map((o) => o.trxid).sort()).toEqual(['PART-1', 'PART-2', 'PART-3', 'PART-4', 'PART-5']);
    expect(retryId).not.toBe(batchId);
    expect(await daemon.stop()).toBe(0);
  }, 240_000);

  it('refuses a batch that is not waiting for balance, and an unknown batch', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 100 });
    const env = cliEnv(home, sb);
    const none = await runCli(['run-covered', 'b-nope', '--yes'], env);
    expect(none.code).toBe(6);
    home.drop('fine.csv', csv([['pid', 'userId'], ['PUBG-60', '5123410101']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    const st = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { batches: { id: string }[] };
    const done = await runCli(['run-covered', st.batches[0]!.id, '--yes'], env);
    expect(done.code).toBe(2);
    expect(sb.admin.ledger().orders).toHaveLength(1);
  }, 120_000);
});
