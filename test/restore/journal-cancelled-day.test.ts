/**
 * Found by the simulator's `restore` with `api-cancel` (seed 20261127 #184 drawn on 60e2d0f; replay
 * in test/sim/found/restore-journal-into-cancelled-day.json): API orders answered 202 after the copy
 * was taken and bought; the copy restored; the operator cancels the day's API batch (the copy's)
 * before any daemon starts. The first process to run after it (here `topup cancel` itself, which
 * runs the batch when no daemon does) accepts the journal's orders again before its reconcile, and
 * the desk refused them — "today's API batch was cancelled by an operator: no order is taken" — so
 * the reconcile, which looks rows up, never looked for their purchases: each charge held by no row,
 * the restore report saying "not accepted again … nothing was stored". An order promised before the
 * cancel is taken back into the cancelled batch (orders/desk.ts) and settled from its purchase.
 * The real CLI and daemon, a real sandbox, `topup backup` / `topup restore` / `topup cancel`.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, tempHome, waitFor } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows } from '../backup/world.js';

releaseAfterEach();

const TOKEN = 'restore-journal-cancelled-day-token-0123';

describe("an API order bought after the copy, the copy restored, the day's API batch cancelled", () => {
  it('is taken back from the journal into the cancelled batch and held by its row with its purchase, bought once', async () => {
    const home = tempHome('journal-cancel-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
    const completed = async (d: Awaited<ReturnType<typeof start>>, trxid: string) =>
      waitFor(`${trxid} completed`, async () => {
        const r = await d.call('GET', `/api/v1/orders/${trxid}`, {});
        return r.json?.status === 'completed' ? (r.json as { orderId: string }) : undefined;
      }, 60_000, 100);

    const first = await start(env);
    expect((await first.call('POST', '/api/v1/orders', { body: { trxid: 'DAY-1', pid: 'PUBG-60', userId: '5123456001', queue: true } })).status).toBe(202);
    await completed(first, 'DAY-1');
    const bk = await runCli(['backup', '--to', join(home.dir, 'offsite'), '--json'], env);
    expect(bk.code, bk.stderr).toBe(0);
    // After the copy: promised (202) and bought.
    expect((await first.call('POST', '/api/v1/orders', { body: { trxid: 'AFTER-2', pid: 'PUBG-60', userId: '5123456002', queue: true } })).status).toBe(202);
    const bought = await completed(first, 'AFTER-2');
    await first.daemon.stop();
    expect(ledgerTrxids(sb).sort()).toEqual(['AFTER-2', 'DAY-1']);

    const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
    expect(rs.code, rs.stderr).toBe(0);
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
    const day = (db.prepare('SELECT id FROM batches WHERE api_day IS NOT NULL').get() as { id: string }).id;
    db.close();
    const cancel = await runCli(['cancel', day], env);
    expect(cancel.code, `${cancel.stdout}\n${cancel.stderr}`).toBe(0);

    const after = storedRows(home).filter((r) => r.trxid === 'AFTER-2');
    // Failed before: no row held AFTER-2 (refused by the cancelled batch), its purchase reported nowhere but as "nothing was stored".
    expect(after, JSON.stringify(storedRows(home))).toHaveLength(1);
    expect(after[0]!.order_id).toBe(bought.orderId);
    expect(after[0]!.state).toBe('completed');
    expect(ledgerTrxids(sb).sort()).toEqual(['AFTER-2', 'DAY-1']);
  }, 300_000);
});
