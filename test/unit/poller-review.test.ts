/**
 * A placed order the API stops knowing (404 on GET /orders/:id, absent from history) is looked
 * at again, slowly; once TOPUP_REVIEW_AFTER_MS has passed since it was placed, the row ends
 * `review` instead of being polled forever. The sandbox never forgets an order, so the
 * supplier is a small HTTP server here; the store, client and poller are the real ones.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { Poller } from '../../src/poll/poller.js';

let server: Server | undefined;
let rt: Runtime | undefined;
let home: string | undefined;
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
});

/** Two processing rows whose orders the supplier does not know: one placed `oldMs` ago, one just now. */
async function world(oldMs: number): Promise<{ rt: Runtime; lookups: string[] }> {
  const lookups: string[] = [];
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    lookups.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith('/orders/')) {
      res.statusCode = 404;
      res.end(JSON.stringify({ success: false, error: 'ORDER NOT FOUND' }));
      return;
    }
    res.end(JSON.stringify({ success: true, count: 0, orders: [] }));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
  home = mkdtempSync(join(tmpdir(), 'poll-review-'));
  const config = loadConfig({ TOPUP_HOME: home, TOPUP_API_URL: url, TOPUP_API_KEY: 'poll-review-key-1', TOPUP_REVIEW_AFTER_MS: '60000' });
  rt = openRuntime(config, silentLogger(), url);
  const now = Date.now();
  rt.batches.create({ id: 'b1', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b1/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, now });
  rt.batches.open('b1', ['pid', 'userId']);
  const row = (idx: number) => ({
    idx,
    line: idx + 2,
    cells: ['PUBG-60', `512345678${idx}`],
    request: { pid: 'PUBG-60', trxid: `tu-row-${idx}`, userId: `512345678${idx}` },
    error: null,
    productId: 'PUBG-60',
    slug: 'pubg',
    packName: '60 UC',
    quantity: 1,
    unitPriceUsd: 0.92,
    expectedUsd: 0.92,
  });
  rt.rows.insertAll('b1', [row(0), row(1)], now);
  const placed = rt.db.prepare(`UPDATE rows SET state = 'processing', attempts = 1, order_id = ?, first_sent_at = ?, next_poll_at = 0 WHERE batch_id = 'b1' AND idx = ?`);
  placed.run('ORD-old', now - oldMs, 0);
  placed.run('ORD-new', now - 1_000, 1);
  return { rt, lookups };
}

describe('an order the API no longer finds', () => {
  it('is looked at again later while young, and ends review once TOPUP_REVIEW_AFTER_MS has passed since it was placed', async () => {
    const { rt, lookups } = await world(61_000);
    const poller = new Poller(rt);
    const due = rt.rows.duePolls(['b1'], Date.now(), 10);
    expect(due).toHaveLength(2);
    const round = await poller.round(due, 2, false);
    expect(lookups).toContain('GET /orders/ORD-old');
    expect(lookups).toContain('GET /orders/ORD-new');
    expect(round.updated).toBe(1);

    const old = rt.rows.get('b1', 0)!;
    expect(old.state).toBe('review');
    expect(old.error).toMatch(/^REVIEW: the API gave order ORD-old for this row \(placed .*\) but no longer finds it/);
    const young = rt.rows.get('b1', 1)!;
    expect(young.state).toBe('processing');
    // Looked at again, slowly: not before the poll interval plus 30 s.
    expect(young.nextPollAt).toBeGreaterThan(Date.now() + 30_000);
    expect(rt.rows.duePolls(['b1'], Date.now(), 10)).toHaveLength(0);
  });
});
