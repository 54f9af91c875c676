/**
 * The common integration, as a baseline: one row at a time — submit, then, if the order is
 * `processing`, GET /orders/:id every 5 s (the middle of the spec's 3–10 s advice) until it ends.
 * A 429 is waited out (Retry-After) and the same call repeated. Plain fetch, nothing shared.
 * Against real-world answers it does what public client code for this API does: status words
 * lowercased and folded over their aliases, the order id taken from the JSON text as written
 * (JSON.parse would round a 19-digit id), a 429 without Retry-After waited out for 1 s.
 *
 * It is far too slow to run a whole batch, so it runs for a fixed time budget and its orders per
 * minute are taken from the orders it finished in that time.
 */
import type { OrderRequest } from '../src/api/schemas.js';
import type { CallLogEntry } from '../src/sandbox/index.js';
import { sleep } from './lib.js';
import { startBenchSandbox, type SandboxSpec } from './sandbox.js';

export interface NaiveRaw {
  label: string;
  startedAt: number;
  endedAt: number;
  startedAtSb: number;
  endedAtSb: number;
  /** Orders that reached completed or cancelled within the budget. */
  finished: number;
  completed: number;
  cancelled: number;
  rejected: number;
  calls: CallLogEntry[];
}

const STATUS: Record<string, 'processing' | 'completed' | 'cancelled'> = {
  completed: 'completed', success: 'completed', done: 'completed',
  processing: 'processing', pending: 'processing', waiting: 'processing',
  cancelled: 'cancelled', canceled: 'cancelled', failed: 'cancelled', refunded: 'cancelled',
};
/** Unknown words (a manual review…) count as still processing. */
const statusOf = (json: any): string | undefined => (json?.status === undefined ? undefined : STATUS[String(json.status).toLowerCase()] ?? 'processing');

export async function runNaive(opts: { requests: OrderRequest[]; sandbox: SandboxSpec; budgetMs: number; pollMs: number }): Promise<NaiveRaw> {
  const sandbox = await startBenchSandbox(opts.sandbox);
  const headers = { 'x-api-key': opts.sandbox.apiKey, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any; id: string | undefined }> => {
    for (;;) {
      const res = await fetch(`${sandbox.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      let json: any = {};
      try { json = JSON.parse(text); } catch { /* an HTML error page */ }
      if (res.status === 429) {
        await sleep(Math.ceil(Number(res.headers.get('retry-after') ?? 1) * 1000));
        continue;
      }
      const id = /"orderId"\s*:\s*"?([^",}\s]+)/.exec(text)?.[1];
      return { status: res.status, json, id };
    }
  };
  const startedAt = Date.now();
  const deadline = startedAt + opts.budgetMs;
  let finished = 0, completed = 0, cancelled = 0, rejected = 0;
  // The clock stops at the last order that finished (not at the budget's end): the fairer figure
  // for the naive client.
  let lastFinishAt = startedAt;
  try {
    for (const req of opts.requests) {
      if (Date.now() >= deadline) break;
      let { status, json, id } = await call('POST', '/orders', req);
      if (status !== 200 || id === undefined) {
        rejected++;
        continue;
      }
      while (statusOf(json) === 'processing' && Date.now() < deadline) {
        await sleep(opts.pollMs);
        ({ json } = await call('GET', `/orders/${encodeURIComponent(id)}`));
      }
      const end = statusOf(json);
      if (end === 'completed' || end === 'cancelled') {
        finished++;
        lastFinishAt = Date.now();
        if (end === 'completed') completed++;
        else cancelled++;
      }
    }
    const endedAt = lastFinishAt;
    return {
      label: 'naive client', startedAt, endedAt, startedAtSb: sandbox.toSandbox(startedAt), endedAtSb: sandbox.toSandbox(endedAt),
      finished, completed, cancelled, rejected, calls: await sandbox.calls(),
    };
  } finally {
    await sandbox.stop();
  }
}
