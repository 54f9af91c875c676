/**
 * adv9: cancelling today's API batch while an order in it was never sent. cancelPending() gives up
 * the trxid of a never-sent row (trxid = NULL), and the trigger rows_api_event_update appends the
 * order's event with NEW.trxid into order_events.trxid NOT NULL: "NOT NULL constraint failed:
 * order_events.trxid". The cancel cannot happen: the operator's `topup cancel` dies (exit 70), and
 * then the daemon takes the batch (its cancel request was committed), meets the same error and
 * exits; it exits again at every restart: the whole home stalls (observed: 'daemon gone').
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { start as startWithConsole } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const TOKEN = 'adv9-cancel-api-token-0123456789abcd';

async function start(env: NodeJS.ProcessEnv) {
  const d = await startWithConsole(env);
  const call = (method: string, path: string, body?: unknown) => d.call(method, path, { body });
  const daemon = d.daemon;
  return { daemon, call };
}

function finishedAt(dbPath: string, batchId: string): number | null {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare('SELECT finished_at FROM batches WHERE id = ?').get(batchId) as { finished_at: number | null }).finished_at;
  } finally {
    db.close();
  }
}

function batchOf(dbPath: string, trxid: string): string {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare('SELECT batch_id FROM rows WHERE trxid = ?').get(trxid) as { batch_id: string }).batch_id;
  } finally {
    db.close();
  }
}

describe('adv9: topup cancel of the day API batch with an unsent order', () => {
  // Failed before: after migration 14 (the NOT NULL fixed) topup cancel of the open day's API batch
  // waited for the day's end and timed out (a cancelled API batch was held open for orders), and the
  // order then read 404 (its trxid given up like a file row's). Its public status is `rejected`:
  // nothing was bought, cancelled before sending (orders/types.ts, docs/order-api.md), with the code.
  it('queued for balance: topup cancel stops the batch (exit 0) and the order reads cancelled', async () => {
    const home = tempHome('adv9-cancelapi-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0' });
    sb.admin.setBalance({ balanceUsd: 0 });
    const d = await start(env);
    expect((await d.call('POST', '/api/v1/orders', { trxid: 'SHOP-X', pid: 'PUBG-60', userId: '5123457009', queue: true })).status).toBe(202);
    const batch = batchOf(join(home.jobs, 'topup.db'), 'SHOP-X');
    const c = await runCli(['cancel', batch], env);
    // What the daemon does next, once the balance is there: it carries the cancel out and finishes
    // the batch (after which nothing of it can be sent), or, with the bug, dies on it (then the
    // batch never finishes). Waited for as that event, not a fixed 8 s.
    sb.admin.setBalance({ balanceUsd: 100 });
    await waitFor('the cancelled batch finished, or the daemon gone', () => finishedAt(join(home.jobs, 'topup.db'), batch) !== null || d.daemon.child.exitCode !== null, 30_000, 100).catch(() => undefined);
    const view = (await d.call('GET', '/api/v1/orders/SHOP-X').catch(() => ({ json: { status: 'daemon gone' } }))).json;
    const status = view?.status;
    const out = d.daemon.output();
    await d.daemon.stop();
    // A restart: the cancel request is in the store, the row still unsent.
    const again = startDaemon(env);
    await new Promise((r) => setTimeout(r, 10_000));
    const outAgain = again.output();
    await again.stop();
    console.log(`restart: NOT NULL errors ${(outAgain.match(/NOT NULL constraint failed/g) ?? []).length}`);
    console.log(out.split('\n').filter((l) => /error|fatal|NOT NULL|exit/i.test(l)).slice(-6).join('\n'));
    console.log(`cancel exit ${c.code}; SHOP-X ${status}; bought: ${JSON.stringify(sb.admin.ledger().orders.map((o) => o.trxid))}; daemon NOT NULL errors: ${(out.match(/NOT NULL constraint failed/g) ?? []).length}`);
    expect(c.stderr).not.toMatch(/NOT NULL constraint failed/);
    expect(c.code, c.stderr + c.stdout).toBe(0);
    expect(outAgain).not.toMatch(/NOT NULL constraint failed/);
    expect(status).toBe('rejected');
    expect(view.state).toBe('skipped');
    expect(view.error?.code).toBe('TOPUP_CANCELLED');
    expect(sb.admin.ledger().orders).toEqual([]);
  }, 120_000);
});
