/**
 * Issue 29, "faults that never clear": every POST /orders answered 429 DUPLICATE_IN_FLIGHT for ever
 * (a supplier's in-flight lock that never clears), TOPUP_REVIEW_AFTER_MS=5000. The row was resent
 * for ever, `resending`, with no review, no result file and nothing telling the operator. The stall
 * bound (src/dispatch/stall.ts): resent for at most 2 × TOPUP_REVIEW_AFTER_MS, then order history
 * decides, and a row history does not settle goes to review; the batch finishes with it in review.
 *
 * The real daemon (`topup daemon --once`, which exits only when every row has ended) against the
 * real sandbox behind a fault proxy that answers every POST /orders with the lock and passes every
 * other call through (so the catalog, balance and history are the sandbox's own, and history never
 * lists the order: none was made).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, csv, readResult, readSummary, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();
let proxy: Server | undefined;
afterEach(() => new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r())));

async function lockProxy(upstream: string, posts: number[]): Promise<string> {
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').replace(/^\/api\/v1/, '');
      if (req.method === 'POST' && path.startsWith('/orders')) {
        posts.push(Date.now());
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, code: 'DUPLICATE_IN_FLIGHT', error: 'DUPLICATE_IN_FLIGHT' }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      void fetch(`${upstream}${req.url}`, { method: req.method, headers, ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}) })
        .then(async (r) => {
          const body = Buffer.from(await r.arrayBuffer());
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(body);
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

it('a lock that never clears: the row goes to review within the stated bound, the batch finishes, the operator is told', async () => {
  const home = tempHome();
  const sb = await inProcessSandbox();
  const posts: number[] = [];
  const url = await lockProxy(sb.url, posts);
  const env = cliEnv(home, { url }, { TOPUP_REVIEW_AFTER_MS: '5000', TOPUP_REQUEST_TIMEOUT_MS: '1000' });
  home.drop('lock.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
  const started = Date.now();
  // Bound: 2 × 5 s of resends, then the history check 4 request timeouts later; review by 3 × 5 s + 5 × 1 s at the latest.
  const run = await runCli(['daemon', '--once'], env, { timeoutMs: 55_000 });
  const took = Date.now() - started;
  expect(run.code, run.stderr.slice(-2000)).toBe(0);
  expect(took).toBeLessThan(45_000);
  const [row] = readResult(home, 'lock');
  expect(row!.status).toBe('review');
  // Never read as "not charged": in review, with why, and the trxid to look for.
  expect(row!.error).toMatch(/REVIEW/);
  expect(row!.error).toContain(row!.trxid!);
  expect(readSummary(home, 'lock').counts).toMatchObject({ review: 1 });
  // Told while it waited and when it moved (the daemon's log).
  const out = run.stdout + run.stderr;
  expect(out).toMatch(/no settling answer within the stall bound/);
  // Resends were bounded by the back-off: a few, not a spin.
  expect(posts.length).toBeGreaterThanOrEqual(2);
  expect(posts.length).toBeLessThan(20);
  // Nothing was bought.
  expect(sb.admin.ledger().orders).toHaveLength(0);
});
