/**
 * Issue 32, adversarial review of the takeover: an order API order answered 202 ("on disk") just
 * before the primary's machine dies. The 202 came after the journal's fsync on the primary's own
 * disk, which dies with it, and Litestream ships the store every 500 ms: the replica does not have
 * the order. The shop saw its 202 and will not resend. Before the fix the standby answered 404 for
 * the orders and never bought them (docs/standby.md said only "a shop resends an order it did not
 * see answered"). Real CLI, real sandbox, the real litestream binary, SIGKILL.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempHome, waitFor } from '../e2e/harness.js';
import { shop, start as startWithConsole, TOKEN } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const BIN: NodeJS.ProcessEnv = process.env.TOPUP_LITESTREAM_BIN ? { TOPUP_LITESTREAM_BIN: process.env.TOPUP_LITESTREAM_BIN } : {};
const order = (trxid: string, user: string) => ({ trxid, pid: 'PUBG-60', userId: user, queue: true });

describe('API orders answered 202 just before the primary dies', () => {
  it('are bought once by the standby after the takeover, none lost', async () => {
    const replica = mkdtempSync(join(tmpdir(), 'takeover-api-replica-'));
    const p = await shop({ TOPUP_REPLICA: replica, ...BIN }, {}, 'takeover-api-primary-');
    const primary = await startWithConsole(p.env);
    // One order bought before, so the replica has a store and a generation.
    expect((await primary.call('POST', '/api/v1/orders', { body: order('TK-0', '5123458000') })).status).toBe(202);
    await waitFor('TK-0 bought', () => p.sb.admin.ledger().orders.length === 1, 60_000);
    await waitFor('a generation in the replica', () => existsSync(join(replica, 'generations')) && readdirSync(join(replica, 'generations')).length > 0, 30_000);
    await new Promise((r) => setTimeout(r, 1_500));
    // No balance: the next are accepted (queue: true) and wait: in the store and the journal only.
    p.sb.admin.setBalance({ balanceUsd: 0 });
    const accepted: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const r = await primary.call('POST', '/api/v1/orders', { body: order(`TK-${i}`, `512345800${i}`) });
      expect(r.status).toBe(202);
      accepted.push(`TK-${i}`);
    }
    // The machine dies right after the 202s.
    const lsPid = Number(readFileSync(join(p.home.dir, '.topup-litestream.pid'), 'utf8'));
    primary.daemon.child.kill('SIGKILL');
    try {
      process.kill(lsPid, 'SIGKILL');
    } catch {
      // Gone with it.
    }
    await primary.daemon.exited;

    const standby = tempHome('takeover-api-standby-');
    const senv = cliEnv(standby, p.sb, { TOPUP_ORDER_API_TOKEN: TOKEN, TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_REPLICA: replica, ...BIN });
    const took = await runCli(['takeover', '--from', replica], senv, { timeoutMs: 90_000 });
    expect(took.code, took.stderr + took.stdout).toBe(0);
    p.sb.admin.setBalance({ balanceUsd: 100 });
    const s = await startWithConsole(senv);
    for (const t of accepted) {
      await waitFor(`${t} completed on the standby`, async () => (await s.call('GET', `/api/v1/orders/${t}`)).json?.status === 'completed', 60_000, 200);
    }
    await s.daemon.stop();
    expect(p.sb.admin.ledger().orders.map((o) => String(o.trxid)).sort()).toEqual(['TK-0', 'TK-1', 'TK-2', 'TK-3']);
  }, 300_000);
});
