/**
 * Issue 32, third adversarial review (what held): TOPUP_RESTORE_LOOKUP_WAIT=0 and `second`'s
 * history answering 503 once the backup is restored (a transient outage, through a real proxy on
 * 127.0.0.1 in front of the real sandbox): the re-dropped file's rows that second bought as
 * `<trxid>-second` go to review at once and are never bought on `main`. (The cost: a person's
 * decision per row for what may be a blip; the default wait is 30 min.)
 */
import { createServer, request, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456001', 'SP-1'], ['PUBG-60', '5123456002', 'SP-2']]);
const FILLER = csv([['pid', 'userId', 'trxid'], ...Array.from({ length: 25 }, (_, i) => ['PUBG-60', `51234570${String(i).padStart(2, '0')}`, `FILL-${i}`])]);
const OPEN = ['pending', 'sending', 'resending', 'verifying', 'searching'];

/** A proxy that passes everything to `target` (GET /history's pageSize capped at `cap`); with `down.on`, every history read answers 503. */
async function pageCapProxy(target: string, cap: number, down: { on: boolean } = { on: false }): Promise<{ url: string; server: Server }> {
  const t = new URL(target);
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const isHistory = u.pathname.endsWith('/history');
    if (isHistory && u.searchParams.has('pageSize')) u.searchParams.set('pageSize', String(Math.min(cap, Number(u.searchParams.get('pageSize')))));
    const out = request({ host: t.hostname, port: t.port, method: req.method, path: `${t.pathname.replace(/\/$/, '')}${u.pathname}${u.search}`, headers: { ...req.headers, host: t.host } }, (r) => {
      if (isHistory && down.on) {
        r.resume();
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"success":false,"error":"SERVICE UNAVAILABLE"}');
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

async function scenario(cap: number, downAfterRestore = false): Promise<void> {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const down = { on: false };
    const proxy = await pageCapProxy(b.url, cap, down);
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
      down.on = downAfterRestore;
      const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: '0' });
      await waitFor('up', () => /sending starts now/i.test(d.output()), 60_000);
      home.drop('sp.csv', FILE);
      await waitFor('rows at an end or held', () => {
        const rows = storedRows(home).filter((r) => r.trxid?.startsWith('SP-'));
        return rows.length === 2 && rows.every((r) => !OPEN.includes(r.state));
      }, 60_000).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 3000));
      await d.stop();
      expect(ledgerTrxids(a).filter((t) => t.startsWith('SP-'))).toEqual([]);
      expect(storedRows(home).filter((r) => r.trxid?.startsWith('SP-')).map((r) => [r.state, r.account])).toEqual([['review', 'main'], ['review', 'main']]);
    } finally {
      proxy.server.close();
    }
}

describe('a transient 503 from an account\'s history with TOPUP_RESTORE_LOOKUP_WAIT=0', () => {
  it('the re-dropped rows go to review, never bought on main', () => scenario(50, true), 300_000);
});
