/**
 * Found by an adversary (issue 32, third review), failing 3 of 3 and 2 of 2 before the fix in
 * ops/restore-reconcile.ts sweep(): the restore lookup's history sweep read a page shorter than
 * the 50 it asked for as the end of the history, even when the same answer said `hasMore: true`
 * and a `total` beyond it. A supplier whose pages hold 20 (the spec's default pageSize; its max
 * is not a promise that 50 is honoured) hides every order after the 20 newest. Here `second` is a
 * real sandbox behind a real proxy on 127.0.0.1 that serves pages of 20: RP-1/RP-2 bought on it as
 * `<trxid>-second`, then 25 newer orders; the backup restored, the file dropped again.
 */
import { createServer, request, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'SP-1'], ['PUBG-60', '5123456002', 'SP-2']]);
const FILLER = csv([['pid', 'userId', 'trxid'], ...Array.from({ length: 25 }, (_, i) => ['PUBG-60', `51234570${String(i).padStart(2, '0')}`, `FILL-${i}`])]);
const OPEN = ['pending', 'sending', 'resending', 'verifying', 'searching'];

/** A proxy that passes everything to `target` but caps GET /history's pageSize at 20. */
/** With `empty.on`, every history page comes back with no orders but the real total and hasMore (a transiently empty read). */
async function pageCapProxy(target: string, cap: number, empty: { on: boolean } = { on: false }): Promise<{ url: string; server: Server }> {
  const t = new URL(target);
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const isHistory = u.pathname.endsWith('/history');
    if (isHistory && u.searchParams.has('pageSize')) u.searchParams.set('pageSize', String(Math.min(cap, Number(u.searchParams.get('pageSize')))));
    const out = request({ host: t.hostname, port: t.port, method: req.method, path: `${t.pathname.replace(/\/$/, '')}${u.pathname}${u.search}`, headers: { ...req.headers, host: t.host } }, (r) => {
      if (isHistory && empty.on && r.statusCode === 200) {
        const chunks: Buffer[] = [];
        r.on('data', (ch: Buffer) => chunks.push(ch));
        r.on('end', () => {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
          const text = JSON.stringify({ ...body, orders: [], count: 0 });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        });
        return;
      }
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    out.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${t.pathname.replace(/\/$/, '')}`, server };
}

async function scenario(cap: number, emptyAfterRestore = false): Promise<void> {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const empty = { on: false };
    const proxy = await pageCapProxy(b.url, cap, empty);
    try {
      const f = join(home.dir, 'accounts.toml');
      writeFileSync(f, readFileSync(f, 'utf8').replace(b.url, proxy.url));
      a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
      const first = startDaemon(env);
      await waitFor('store', () => { try { readFileSync(join(home.jobs, 'topup.db')); return true; } catch { return false; } }, 30_000);
      const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
      expect(bk.code, bk.stderr).toBe(0);
      home.drop('sp.csv', FILE);
      await waitForResult(home, 'sp', 60_000);
      home.drop('fill.csv', FILLER);
      await waitForResult(home, 'fill', 90_000);
      await first.stop();
      expect(ledgerTrxids(a)).toEqual([]);
      expect(ledgerTrxids(b).filter((t) => t.startsWith('SP-')).sort()).toEqual(['SP-1-second', 'SP-2-second']);
      expect(ledgerTrxids(b).length).toBe(27);
      a.admin.setFaults({ maintenance: null });
      const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
      expect(rs.code, rs.stderr).toBe(0);
      empty.on = emptyAfterRestore;
      const d = startDaemon(env);
      await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
      home.drop('sp.csv', FILE);
      await waitFor('rows at an end or held', () => {
        const rows = storedRows(home).filter((r) => r.trxid?.startsWith('SP-'));
        return rows.length === 2 && rows.every((r) => !OPEN.includes(r.state));
      }, 60_000).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 3000));
      await d.stop();
      expect(ledgerTrxids(a).filter((t) => t.startsWith('SP-'))).toEqual([]);
    } finally {
      proxy.server.close();
    }
}

describe.concurrent('a history whose pages are shorter than asked', () => {
  it('pages of 20 with hasMore true: the moved purchase behind 25 newer orders is found, not bought again', released(() => scenario(20)), 300_000);
  it('an empty page 1 that says total 27: not read as "not bought"', released(() => scenario(50, true)), 300_000);
  it('control: pages of 50 (as asked): found, not bought again', released(() => scenario(50)), 300_000);
});
