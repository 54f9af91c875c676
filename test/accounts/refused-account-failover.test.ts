/**
 * A new-user trial (race): account `second` (the cheaper) has its API access disabled right before a
 * file is dropped. The rows are routed to `second` (nothing has told the daemon yet); the funds
 * check then finds its balance unreadable (403). On main the batch waited "for balance on account
 * second … 0 USD available; top up" although `second` held its money, and its rows never moved off
 * the paused account (the failover only looked at funded batches): they stayed `pending` until the
 * account came back. Now the account is paused, the batch says so (never "top up"), and its
 * never-sent rows move to `main` after max_queue_delay.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, startDaemon, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import { defaultCatalog } from '../../src/sandbox/default-catalog.js';

function catalogB(dir: string): string {
  const c = defaultCatalog();
  const products = c.products.map((p) => ({ ...p, id: `B-${p.id}`, price: Math.round(p.price * 90) / 100 }));
  const file = join(dir, 'catalog-b.json');
  writeFileSync(file, JSON.stringify({ services: c.services, products }));
  return file;
}

interface Waits { reason: string | null; detail: string | null }

/** Every wait reason and detail the batch of `file` has shown (polled). */
function waitOf(home: TempHome, file: string): Waits | null {
  const db = new Database(join(home.dir, 'jobs', 'topup.db'), { readonly: true });
  try {
    const r = db.prepare('SELECT wait_reason AS reason, wait_detail AS detail FROM batches WHERE source_name = ?').get(file) as Waits | undefined;
    return r ?? null;
  } catch {
    return null;
  } finally {
    db.close();
  }
}

describe('an account whose API access is refused', () => {
  it('is paused, not read as 0 USD: the batch names the account problem, never "top up", and its never-sent rows move on after max_queue_delay', async () => {
    const home = tempHome('refused-account-');
    const a = await inProcessSandbox();
    const b = await inProcessSandbox({ catalogFile: catalogB(home.dir) });
    try {
      mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
      writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
      writeFileSync(
        join(home.dir, 'accounts.toml'),
        `routing = "cheapest"\nmax_queue_delay = "2s"\n\n[[account]]\nname = "main"\nurl = "${a.url}"\nkey_file = "keys/k"\n\n[[account]]\nname = "second"\nurl = "${b.url}"\nkey_file = "keys/k"\n`,
      );
      const env = cliEnv(home, null, { TOPUP_API_KEY: '', TOPUP_POLL_INTERVAL_MS: '200' });
      const daemon = startDaemon(env);
      const seen: Waits[] = [];
      try {
        home.drop('aq1.csv', csv([['pid', 'Player ID', 'trxid'], ['PUBG-60', '5123456871', 'AQ-1']]));
        await expect.poll(() => { try { return readResult(home, 'aq1').length; } catch { return 0; } }, { timeout: 30_000, interval: 100 }).toBe(1);
        expect(readResult(home, 'aq1').map((r) => [r.status, r.account])).toEqual([['completed', 'second']]);
        expect(Math.min(...Object.values(b.admin.ledger().balances))).toBeGreaterThan(100);

        // Disabled, and the file dropped at once: nothing has told the daemon yet.
        b.admin.setAccount({ state: 'api_disabled' });
        home.drop('aq2.csv', csv([['pid', 'Player ID', 'trxid'], ['PUBG-60', '5123456872', 'AQ-2'], ['PUBG-325', '5123456873', 'AQ-3']]));
        const deadline = Date.now() + 40_000;
        let done = false;
        while (!done && Date.now() < deadline) {
          const w = waitOf(home, 'aq2.csv');
          if (w && w.reason !== null) seen.push(w);
          try { done = readResult(home, 'aq2').length === 2; } catch { done = false; }
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(done, `aq2 never finished; its waits: ${JSON.stringify(seen.slice(-1))}`).toBe(true);
      } finally {
        await daemon.stop();
      }
      // Both rows bought once, on `main`, with new trxids; nothing more on `second`.
      expect(readResult(home, 'aq2').map((r) => [r.status, r.account])).toEqual([['completed', 'main'], ['completed', 'main']]);
      expect(a.admin.ledger().orders.map((o) => String(o.userId)).sort()).toEqual(['5123456872', '5123456873']);
      expect(b.admin.ledger().orders).toHaveLength(1);
      // The rows were placed on `second` first (the race this test is about) and moved off it.
      for (const row of readResult(home, 'aq2')) {
        expect(row.trxid).toMatch(/^AQ-\d$/);
        expect(row.sentTrxid).toBe(`${row.trxid}-main`);
        expect(row.refusedBy).toMatch(/^second \(trxid AQ-\d\): second had an account problem/);
      }
      // It waited for the account, named with its problem; never for balance, never "top up".
      expect(seen.length).toBeGreaterThan(0);
      for (const w of seen) {
        expect(w.reason).toBe('account');
        expect(w.detail).toMatch(/^waiting for account second \(account problem /);
        expect(w.detail ?? '').not.toMatch(/top up at least/i);
      }
    } finally {
      await a.close();
      await b.close();
      home.remove();
    }
  }, 90_000);
});
