/**
 * For the few branches the sandbox cannot reach (a history without trxids, an order the API
 * forgets): the supplier is a small HTTP server on 127.0.0.1, and everything else is real: a
 * runtime with its SQLite store in a temp home, and batch `b1` holding the given rows. Both are
 * closed and removed after each test.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import type { NewRow } from '../../src/store/rows.js';

const open: { server: Server; rt: Runtime; home: string }[] = [];
afterEach(async () => {
  for (const w of open.splice(0)) {
    await w.rt.close();
    await new Promise<void>((r) => w.server.close(() => r()));
    rmSync(w.home, { recursive: true, force: true });
  }
});

/** A PUBG-60 row for player 5123456789 + idx, trxid tu-row-<idx>, valid and not yet sent. */
export function pubgRow(idx: number): NewRow {
  const userId = String(5_123_456_789 + idx);
  return {
    idx,
    line: idx + 2,
    cells: ['PUBG-60', userId],
    request: { pid: 'PUBG-60', trxid: `tu-row-${idx}`, userId },
    error: null,
    productId: 'PUBG-60',
    slug: 'pubg',
    packName: '60 UC',
    quantity: 1,
    unitPriceUsd: 0.92,
    expectedUsd: 0.92,
  };
}

/** A runtime against a supplier answering with `handler`; batch `b1` (leased to this runtime) holds `rows`. */
export async function supplierWorld(handler: RequestListener, rows: NewRow[], env: Record<string, string> = {}): Promise<Runtime> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const home = mkdtempSync(join(tmpdir(), 'supplier-world-'));
  const rt = openRuntime(loadConfig({ TOPUP_HOME: home, TOPUP_API_URL: url, TOPUP_API_KEY: 'fake-supplier-key-1', ...env }), silentLogger(), url);
  open.push({ server, rt, home });
  const now = Date.now();
  rt.batches.create({ id: 'b1', name: 'x', sourceName: 'x.csv', jobFile: 'jobs/b1/x.csv', contentHash: 'h', origin: 'inbox', sandbox: false, owner: rt.owner, leaseUntil: now + 86_400_000, now });
  rt.batches.open('b1', ['pid', 'userId']);
  rt.rows.insertAll('b1', rows, now);
  return rt;
}
