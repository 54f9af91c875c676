/**
 * Issue 32, second adversarial review: an order API order accepted after the last backup, failed
 * over and bought on the second account (as `<trxid>-second`), then the disk lost (`jobs/`: the store
 * and the journal) and the backup restored. The copy never knew the order; the journal that did
 * died with the disk. The shop resends it: before the fix it was accepted again as new and bought on
 * `main` too, twice in two runs (one order, two charges). `topup takeover` read the journal's copy
 * kept beside a folder replica; `topup restore` did not.
 *
 * With a folder replica, the order's journal line is also beside the replica (fsynced before its
 * 202). Now `topup restore` carries those lines over (and the first start does too, for a store
 * deleted with no restore run), the first start accepts them again and looks each one up at every
 * account under its trxid and the trxids a move gives before anything is sent: it finds the
 * purchase on `second` and settles the order from it; the shop's resend is answered from it.
 * Real CLI, real sandboxes as two accounts, the real litestream binary.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startDaemon, waitFor, withOwnRelease } from '../e2e/harness.js';
import { start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';
import { ledgerTrxids, storedRows, twoAccounts } from '../backup/world.js';

releaseAfterEach();
const TOKEN = 'restore-api-resend-token-0123456789abcdef';
const BIN: NodeJS.ProcessEnv = process.env.TOPUP_LITESTREAM_BIN ? { TOPUP_LITESTREAM_BIN: process.env.TOPUP_LITESTREAM_BIN } : {};

describe.concurrent('an API order failed over after the last backup, the disk lost, the backup restored', () => {
  it.each([
    ['topup restore of the backup', true, false],
    ['the store deleted, no restore run', false, false],
    ['topup restore, the first start killed right after it accepted the order again', true, true],
  ])('%s: the shop\'s resend is not bought a second time', (_name, restore, kill) => withOwnRelease(async () => {
    const { home, a, b, env: base } = await twoAccounts('routing = "priority"\nmax_queue_delay = "2s"');
    const replica = join(mkdtempSync(join(tmpdir(), 'restore-api-resend-mnt-')), 'replica');
    mkdirSync(replica);
    const env = { ...base, TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_REPLICA: replica, ...BIN };
    const offsite = mkdtempSync(join(tmpdir(), 'restore-api-resend-offsite-'));
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

    // The disk is lost: jobs/ (the store, the journal) gone; the replica's mount survives.
    rmSync(home.jobs, { recursive: true, force: true });
    if (restore) {
      const rs = await runCli(['restore', backupDir], env);
      expect(rs.code, rs.stderr).toBe(0);
      expect(rs.stdout).toMatch(/order API journal lines found beside the replica: 1\b/);
    }
    if (kill) {
      // SIGKILL right after the recovered order's acceptance is committed, before its lookup: the
      // marker is still in the store, so the next start looks it up before any send.
      const killed = startDaemon({ ...env, TOPUP_CRASH_AT: 'order-accepted:1' });
      await Promise.race([killed.exited, new Promise((_, reject) => setTimeout(() => reject(new Error(`not killed at order-accepted: ${killed.output().slice(-600)}`)), 90_000))]);
      expect(storedRows(home).filter((r) => r.trxid === 'SHOP-X').map((r) => r.state)).toEqual(['pending']);
      expect(ledgerTrxids(a)).toEqual([]);
    }
    const second = await start(env);
    await waitFor('reconciled', () => /sending starts now/i.test(second.daemon.output()), 90_000, 200);
    // Recovered from the replica's journal and settled from the purchase on second: never sent on main.
    const g = await second.call('GET', '/api/v1/orders/SHOP-X');
    expect(g.status).toBe(200);
    const resend = await second.call('POST', '/api/v1/orders', { body });
    expect(resend.status).toBe(200);
    // Long enough for a send on main to have happened if one were due.
    await new Promise((r) => setTimeout(r, 6_000));
    await second.daemon.stop();
    expect(ledgerTrxids(a)).toEqual([]);
    expect(ledgerTrxids(b)).toEqual(['SHOP-X-second']);
    const rows = storedRows(home).filter((r) => r.trxid?.startsWith('SHOP-X'));
    expect(rows.map((r) => [r.account, r.trxid])).toEqual([['second', 'SHOP-X-second']]);
    expect(existsSync(join(home.dir, 'outbox', 'reports')) && readdirSync(join(home.dir, 'outbox', 'reports')).some((f) => f.startsWith('restore-'))).toBe(true);
  }), 300_000);
});
