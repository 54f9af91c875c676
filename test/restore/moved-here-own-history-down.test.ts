/**
 * Adversarial review of ops35 f4d16ff with simrestore 0b2233d merged: a row whose OWN account's
 * history cannot be read is sent at once on that account (pinned there by 0b2233d), "where a
 * purchase is met as a replay". But the row had failed over TO that account before the disk was
 * lost and was bought there as `<trxid>-second`; its own trxid is new to `second`: bought twice.
 * (On main and on simrestore alone the batch waits whole for TOPUP_RESTORE_LOOKUP_WAIT first, then
 * does the same: test/restore/moved-here-own-account-blind.test.ts is the same hole with a history
 * that shows no trxids.)
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

const FILE = csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123459201', 'MD-1'], ['PUBG-60', '5123459202', 'MD-2']]);

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

describe('after a restore, a re-dropped row routed to the account it had failed over to, whose history cannot be read', () => {
  it('is not bought there a second time under its own trxid', async () => {
    const { home, a, b, env } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const down = { on: false };
    const proxy = await historyProxy(b.url, down);
    try {
      const f = join(home.dir, 'accounts.toml');
      writeFileSync(f, readFileSync(f, 'utf8').replace(b.url, proxy.url));
      a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
      const first = startDaemon(env);
      await waitFor('the store opened by the daemon', () => existsSync(join(home.dir, '.topup-store-mark')), 30_000);
      const bk = await runCli(['backup', '--to', join(home.dir, 'backups'), '--json'], env);
      expect(bk.code, bk.stderr).toBe(0);
      // After the copy: main in maintenance, the rows fail over and are bought on second as <trxid>-second.
      home.drop('md.csv', FILE);
      await waitForResult(home, 'md', 60_000);
      await first.stop();
      expect(ledgerTrxids(a)).toEqual([]);
      expect(ledgerTrxids(b).sort()).toEqual(['MD-1-second', 'MD-2-second']);

      // The disk is lost; the copy restored. main out of money now: the re-drop is routed to second.
      a.admin.setFaults({ maintenance: null });
      a.admin.setBalance({ balanceUsd: 0 });
      const rs = await runCli(['restore', JSON.parse(bk.stdout).path], env);
      expect(rs.code, rs.stderr).toBe(0);
      const d = startDaemon({ ...env, TOPUP_RESTORE_LOOKUP_WAIT: process.env.REV_LOOKUP_WAIT ?? '10m' });
      try {
        await waitFor('the reconcile-first start done', () => /sending starts now/i.test(d.output()), 60_000);
        down.on = true;
        home.drop('md.csv', FILE);
        await waitFor('the re-dropped rows claimed', () => storedRows(home).filter((r) => r.trxid?.startsWith('MD-')).length >= 2, 60_000, 250);
        await new Promise((r) => setTimeout(r, 20_000));
        // eslint-disable-next-line no-console
        console.log(JSON.stringify(storedRows(home).filter((r) => r.trxid?.startsWith('MD-'))));
      } finally {
        await d.stop();
      }
    } finally {
      proxy.server.close();
    }
    expect(ledgerTrxids(b).sort()).toEqual(['MD-1-second', 'MD-2-second']);
    expect(ledgerTrxids(a)).toEqual([]);
  }, 240_000);
});
