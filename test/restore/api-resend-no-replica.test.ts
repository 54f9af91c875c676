/**
 * Issue 32, the double purchase the lead's note left open: an order API order accepted after the
 * last backup, failed over and bought on the second account (as `<trxid>-second`), then the disk
 * lost (`jobs/`: the store and the journal) on a home WITHOUT a folder replica, and the backup
 * restored. Nothing local remembers the order. The shop resends it (same trxid): before the fix the
 * restored home accepted it as new and bought it on `main` too (SHOP-X on main, SHOP-X-second on
 * second: one order, two charges).
 *
 * Now a home that was restored opens a window (store/backup.ts RestoreWindow): a new API order
 * accepted in it is answered 202 at once and held (meta `restore.order:<batch>:<idx>`, written in
 * the acceptance's transaction; the store refuses its intent while the mark is there) until its
 * trxid and the trxids a move gives have been looked up in every account's history back to before
 * the copy was taken. Found bought elsewhere: settled from that purchase, never sent. Found nowhere:
 * sent. An account whose history cannot be read: held, then review, never sent blind.
 * Real CLI, real daemon, two real sandboxes as two accounts, a real backup and restore.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, waitFor, withOwnRelease } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const TOKEN = 'restore-api-no-replica-token-0123456789ab';
const OPEN = ['pending', 'sending', 'resending', 'verifying', 'searching'];

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

describe.concurrent('an API order failed over after the last backup, the disk lost on a home without a folder replica', () => {
  it.each([
    ['every account readable', 'readable'],
    ['second\'s history unavailable after the restore (TOPUP_RESTORE_LOOKUP_WAIT=0)', 'down'],
    ['second\'s history unavailable for a while, then back (TOPUP_RESTORE_LOOKUP_WAIT=30m)', 'down, then back'],
  ] as const)('%s: the shop\'s resend is not bought a second time', (_name, mode) => withOwnRelease(async () => {
    const historyDown = mode === 'down';
    const { home, a, b, env: base } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const down = { on: false };
    const proxy = await historyProxy(b.url, down);
    try {
      const f = join(home.dir, 'accounts.toml');
      writeFileSync(f, readFileSync(f, 'utf8').replace(b.url, proxy.url));
      const env: NodeJS.ProcessEnv = { ...base, TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_RESTORE_LOOKUP_WAIT: historyDown ? '0' : '30m' };
      delete env.TOPUP_REPLICA;
      const offsite = mkdtempSync(join(tmpdir(), 'restore-api-no-replica-offsite-'));
      a.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
      const first = await start(env);
      const bk = await runCli(['backup', '--to', offsite, '--json'], env);
      expect(bk.code, bk.stderr).toBe(0);
      const backupDir = JSON.parse(bk.stdout).path as string;
      const body = { trxid: 'SHOP-X', pid: 'PUBG-60', userId: '5123456011', queue: true };
      expect((await first.call('POST', '/api/v1/orders', { body })).status).toBe(202);
      await waitFor('bought on second', () => ledgerTrxids(b).length > 0, 60_000, 200);
      await first.daemon.stop();
      expect(ledgerTrxids(a)).toEqual([]);
      expect(ledgerTrxids(b)).toEqual(['SHOP-X-second']);
      a.admin.setFaults({ maintenance: null });

      // The disk is lost whole: jobs/ (the store, the journal) gone; no replica anywhere.
      rmSync(home.jobs, { recursive: true, force: true });
      const rs = await runCli(['restore', backupDir], env);
      expect(rs.code, rs.stderr).toBe(0);
      down.on = mode !== 'readable';

      const second = await start(env);
      await waitFor('reconciled', () => /sending starts now/i.test(second.daemon.output()), 90_000, 200);
      // Nothing local knows SHOP-X: the shop resends it. The 202 does not wait for the lookup.
      const resend = await second.call('POST', '/api/v1/orders', { body });
      expect(resend.status).toBe(202);
      // And an order bought nowhere: it is sent once its lookup found nothing.
      const fresh = { trxid: 'SHOP-NEW', pid: 'PUBG-60', userId: '5123456012', queue: true };
      expect((await second.call('POST', '/api/v1/orders', { body: fresh })).status).toBe(202);
      if (mode === 'down, then back') {
        // Held while second cannot be read: neither order is sent; status and doctor say why.
        await waitFor('the lookup waits for second', () => /2 API order\(s\) accepted after a restore \(SHOP-X, SHOP-NEW\) wait for their lookup/.test(second.daemon.output()), 90_000, 200);
        await new Promise((r) => setTimeout(r, 3_000));
        expect(storedRows(home).filter((r) => r.trxid?.startsWith('SHOP-')).map((r) => r.state)).toEqual(['pending', 'pending']);
        expect(ledgerTrxids(a)).toEqual([]);
        const st = await runCli(['status'], env);
        expect(st.stdout).toMatch(/2 API order\(s\) accepted after a restore \(SHOP-X, SHOP-NEW\) are waiting for the restore lookup since .*account "second" cannot be read.*none is sent/);
        down.on = false;
      }
      await waitFor('both orders at an end or in review', () => {
        const rows = storedRows(home).filter((r) => r.trxid?.startsWith('SHOP-'));
        return rows.length === 2 && rows.every((r) => !OPEN.includes(r.state));
      }, 90_000, 200).catch(() => undefined);
      // Long enough for a send on main to have happened if one were due.
      await new Promise((r) => setTimeout(r, 4_000));
      const shown = await second.call('GET', '/api/v1/orders/SHOP-X');
      await second.daemon.stop();

      expect(ledgerTrxids(a).filter((t) => t.startsWith('SHOP-X'))).toEqual([]);
      expect(ledgerTrxids(b)).toEqual(['SHOP-X-second']);
      const rows = storedRows(home).filter((r) => r.trxid?.startsWith('SHOP-X'));
      if (historyDown) {
        // second cannot say whether it bought SHOP-X: in doubt, a person decides; never sent.
        expect(rows.map((r) => [r.account, r.trxid, r.state])).toEqual([['main', 'SHOP-X', 'review']]);
        // SHOP-NEW could have been bought on second too: the same review, not a send.
        expect(storedRows(home).filter((r) => r.trxid === 'SHOP-NEW').map((r) => r.state)).toEqual(['review']);
        expect(ledgerTrxids(a)).toEqual([]);
      } else {
        expect(rows.map((r) => [r.account, r.trxid])).toEqual([['second', 'SHOP-X-second']]);
        expect(shown.status).toBe(200);
        expect(ledgerTrxids(a)).toEqual(['SHOP-NEW']);
      }
    } finally {
      proxy.server.close();
    }
  }), 300_000);
});
