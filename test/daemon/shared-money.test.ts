/**
 * Issue 12, money shared by every process on a home, and no head-of-line blocking. Observed
 * before: the daemon and a `topup submit` both started batches on the same 30 USD (each process
 * counted only its own batches), and one unaffordable 3,000-row file made a 1.55 USD file wait
 * "0 USD available" with 915 USD on the account. The real CLI, the real sandbox and its ledger.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const rows = (n: number, pid: string, from: number) => csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => [pid, `51234${String(from + i)}`])]);

function batches(h: TempHome): { source_name: string; wait_reason: string | null; wait_detail: string | null; finished_at: number | null }[] {
  let db: Database.Database | undefined;
  try {
    db = new Database(join(h.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
    return db.prepare('SELECT source_name, wait_reason, wait_detail, finished_at FROM batches ORDER BY seq').all() as never;
  } catch {
    return [];
  } finally {
    db?.close();
  }
}

const refusedForBalance = (sb: { admin: { calls(): { route: string; status: number }[] } }) =>
  sb.admin.calls().filter((c) => c.route === 'POST /orders' && c.status === 400).length;

describe('money shared by every process on one home', () => {
  it('the daemon and topup submit with money for one batch only: one waits, nothing is refused for balance, both end after a top-up', async () => {
    const home = tempHome();
    // 10 USD: each batch costs 2 × 4.55 = 9.10; both together 18.20.
    const sb = await inProcessSandbox({ balanceUsd: 10, fulfilment: { processingShare: 1, processingMs: [1500, 2500] } });
    const env = cliEnv(home, sb);
    const daemon = startDaemon(env);
    await waitFor('daemon start', () => daemon.output().includes('topup daemon started'));
    const file = join(home.dir, 'mine.csv');
    writeFileSync(file, rows(2, 'PUBG-325', 20000));
    home.drop('inbox.csv', rows(2, 'PUBG-325', 10000));
    const submit = runCli(['submit', file, '--json'], env, { timeoutMs: 90_000 });
    await waitFor('one batch waiting for balance', () => batches(home).some((b) => b.wait_reason === 'balance'), 30_000);
    const waiting = batches(home).find((b) => b.wait_reason === 'balance')!;
    expect(waiting.wait_detail).toMatch(/needs 9\.1 USD .* top up at least/);
    // The other one sends; the waiting one sent nothing, so the account never refused for balance.
    await waitFor('the funded batch placed its orders', () => sb.admin.ledger().orders.length === 2, 30_000);
    expect(refusedForBalance(sb)).toBe(0);
    sb.admin.topup({ amountUsd: 20 });
    const s = await submit;
    expect(s.code, s.stderr).toBe(0);
    await waitForResult(home, 'inbox');
    expect(readResult(home, 'inbox').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(4);
    expect(refusedForBalance(sb)).toBe(0);
    expect(await daemon.stop()).toBe(0);
  });

  it('a small batch the balance covers goes ahead of a large one it cannot; the large one says how much to top up and who went ahead', async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ balanceUsd: 10 });
    const env = cliEnv(home, sb);
    const daemon = startDaemon(env);
    home.drop('large.csv', rows(30, 'PUBG-325', 30000)); // 136.50 USD
    await waitFor('the large batch waits', () => batches(home).find((b) => b.source_name === 'large.csv')?.wait_reason === 'balance', 30_000);
    home.drop('small.csv', rows(1, 'PUBG-60', 40000)); // 0.92 USD
    await waitForResult(home, 'small');
    expect(readResult(home, 'small')[0]!.status).toBe('completed');
    const large = batches(home).find((b) => b.source_name === 'large.csv')!;
    expect(large.finished_at).toBeNull();
    expect(large.wait_reason).toBe('balance');
    await waitFor('the waiting batch names the one that went ahead', () => /went ahead meanwhile: b\S+/.test(batches(home).find((b) => b.source_name === 'large.csv')?.wait_detail ?? ''), 30_000);
    // The figures are those of its last balance check (10 USD then, 9.08 after the small one went).
    expect(batches(home).find((b) => b.source_name === "large.csv")!.wait_detail).toMatch(/needs 136\.5 USD for its unsent rows, (10|9\.08) USD available; top up at least (126\.5|127\.42) USD/);
    sb.admin.topup({ amountUsd: 200 });
    await waitForResult(home, 'large');
    expect(readResult(home, 'large').every((r) => r.status === 'completed')).toBe(true);
    expect(await daemon.stop()).toBe(0);
  });
});
