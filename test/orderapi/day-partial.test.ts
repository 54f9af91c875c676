/**
 * Trial s37 D8: the order API's day batch stays open until its day ends, so its partial result
 * (outbox/api-<day>.partial.result.csv) is the only file of the day's orders staff can open. It
 * used to stop being written once every order so far had ended (partial.ts took "all ended" for
 * "the final result is about to replace it"): a completed, charged order stayed `pending` with no
 * order id, and GET /api/v1/batches/{id}/result answered 409, until the next order came. The real
 * daemon, the in-process sandbox, the real order desk.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, parseResult, tempHome, waitFor } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const TOKEN = 'day-partial-order-api-token-0123456789';

describe("the order API day batch's partial result", () => {
  it('shows the last order completed with its order id once every order has ended, and the result route answers with it', async () => {
    const home = tempHome('topup-day-partial-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_PARTIAL_RESULT_MS: '200' });
    const { daemon, call } = await start(env);
    const a = await call('POST', '/api/v1/orders', { body: JSON.stringify({ trxid: 'DAY-P-1', pid: 'PUBG-60', userId: '5123456701' }), type: 'application/json' });
    expect(a.status, a.text).toBe(202);
    const done = await waitFor('the order completed', async () => {
      const r = await call('GET', '/api/v1/orders/DAY-P-1');
      return r.json?.status === 'completed' ? r.json : undefined;
    }, 30_000, 100);
    expect(done.orderId).toBeTruthy();
    const file = join(home.outbox, `api-${new Date().toISOString().slice(0, 10)}.partial.result.csv`);
    // Every order of the batch has ended and it stays open: the partial must still be written, within seconds.
    const row = await waitFor('the partial result shows the completed order', () => {
      if (!existsSync(file)) return undefined;
      const r = parseResult(readFileSync(file, 'utf8')).find((x) => x.trxid === 'DAY-P-1');
      return r?.status === 'completed' ? r : undefined;
    }, 8_000, 100).catch(() => {
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '(no file)';
      throw new Error(`${file} never showed DAY-P-1 completed within 8 s of its completion: ${text}`);
    });
    expect(row.orderId).toBe(done.orderId);
    const batch = await call('GET', `/api/v1/batches/${done.batchId}`);
    expect(batch.json.done).toBe(false);
    const result = await call('GET', `/api/v1/batches/${done.batchId}/result`);
    expect(result.status, result.text).toBe(200);
    expect(result.headers.get('topup-result')).toBe('partial');
    expect(parseResult(result.text).find((x) => x.trxid === 'DAY-P-1')).toMatchObject({ status: 'completed', orderId: done.orderId });
    await daemon.stop();
  }, 90_000);
});
