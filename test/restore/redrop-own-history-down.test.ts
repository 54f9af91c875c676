/**
 * Adversarial review of ops35 f4d16ff ("a file claimed after a restore is held row by row, not
 * whole"): only a row whose verdict rests on an account OTHER than its own that cannot be read
 * waits now. A row that the routing puts on the account whose history cannot be read (`second`, the
 * cheapest; its /history answering 503) is "sent as is" at once: "a resend on its own account meets
 * a purchase as a replay". But `second` is in maintenance too: its send is refused (MAINTENANCE,
 * nothing created), and past max_queue_delay the row moves to `main` under `<trxid>-main`, a new
 * purchase, while `second` bought the same row under its own trxid before the disk was lost.
 * (On main the batch waited whole for TOPUP_RESTORE_LOOKUP_WAIT, then did the same; simrestore's
 * 0b2233d pins such a row to its own account, which holds it.)
 *
 * Two real sandboxes as two accounts (second behind a proxy that can fail its /history), a real
 * backup and restore, the daemon, the suppliers' ledgers.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, runCli, startDaemon, waitFor, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123459101', 'HD-1'], ['PUBG-60', '5123459102', 'HD-2']]);

/** A proxy in front of a sandbox; while `down.on`, every GET /history answers 503 (the rest passes). */
async function historyProxy(target: string, down: { on: boolean }): Promise<{ url: string; server: Server }> {
  const t = new URL(target);
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname.endsWith('/history') && down.on) {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"success":false,"error":"SERVICE UNAVAILABLE"}');
      return;
    }
    const out = request({ host: t.hostname, port: t.port, method: req.method, path: `${t.pathname.replace(/\/$/, '')}${u.pathname}${u.search}`, headers: { ...req.headers, host: t.host } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    out.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${t.pathname.replace(/\/$/, '')}`, server };
}

describe('a file re-dropped after a restore, routed to the account whose history cannot be read', () => {
  it('is not moved off it by a failover and bought again on the other account', async () => {
    // routing cheapest (the default): second is 10 % cheaper.
    const { home, a, b, env } = await twoAccounts('max_queue_delay = "2s"');
    const down = { on: false };
    const proxy = await historyProxy(b.url, down);
    try {
      const f = join(home.dir, 'accounts.toml');
      writeFileSync(f, readFileSync(f, 'utf8').replace(b.url, proxy.url));
      const first = startDaemon(env);
      await waitFor('the store opened by the daemon', () => existsSync(join(home.dir, '.topup-store-mark')), 30_000);
      const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
      expect(bk.code, bk.stderr).toBe(0);
      // After the copy: the file bought on second (the cheapest) under its own trxids.
      home.drop('hd.csv', FILE);
      await waitForResult(home, 'hd', 60_000);
      await first.stop();
      expect(ledgerTrxids(a)).toEqual([]);
      expect(ledgerTrxids(b).sort()).toEqual(['HD-1', 'HD-2']);

      const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
      expect(rs.code, rs.stderr).toBe(0);
      const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: process.env.REV_LOOKUP_WAIT ?? '10m' });
      try {
        await waitFor('the reconcile-first start done', () => /sending starts now/i.test(d.output()), 60_000);
        // second in maintenance now: its history down, its orders refused (MAINTENANCE, nothing created).
        down.on = true;
        b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
        home.drop('hd.csv', FILE);
        await waitFor('the re-dropped rows claimed', () => storedRows(home).filter((r) => r.trxid?.startsWith('HD-')).length >= 2, 60_000, 250);
        // Long enough for the maintenance pause, a move off second (max_queue_delay 2 s, rounds every 5 s) and a send on main.
        await new Promise((r) => setTimeout(r, 25_000));
        // eslint-disable-next-line no-console
        console.log(JSON.stringify(storedRows(home).filter((r) => r.trxid?.startsWith('HD-'))));
      } finally {
        await d.stop();
      }
    } finally {
      proxy.server.close();
    }
    expect(ledgerTrxids(b).sort()).toEqual(['HD-1', 'HD-2']);
    expect(ledgerTrxids(a)).toEqual([]);
  }, 240_000);
});
