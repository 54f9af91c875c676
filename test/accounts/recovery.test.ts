/**
 * Issue 30, item 1: a paused account recovers by itself. Two real sandboxes as two accounts, cheapest
 * routing, maintenance injected on the cheaper one: its rows move to the dearer one; then the
 * maintenance is cleared while no row goes to it. A read probe (GET /balance through its rate gate,
 * never an order) finds it within one probe interval, routing returns to it at once, and the spend
 * follows the cheapest account again. On main the pause stayed for ever and every row went to the
 * dearer account.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';
import { defaultCatalog } from '../../src/sandbox/default-catalog.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

/** Sandbox B: the same packs under other pids ("B-" + pid), 10 % cheaper. */
function catalogB(dir: string): string {
  const c = defaultCatalog();
  const products = c.products.map((p) => ({ ...p, id: `B-${p.id}`, price: Math.round(p.price * 90) / 100 }));
  const file = join(dir, 'catalog-b.json');
  writeFileSync(file, JSON.stringify({ services: c.services, products }));
  return file;
}

async function world(): Promise<{ home: TempHome; a: RunningSandbox; b: RunningSandbox; env: NodeJS.ProcessEnv }> {
  const home = tempHome('recovery-');
  const a = await inProcessSandbox();
  const b = await inProcessSandbox({ catalogFile: catalogB(home.dir) });
  mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
  writeFileSync(
    join(home.dir, 'accounts.toml'),
    `max_queue_delay = "1s"\n\n[[account]]\nname = "main"\nurl = "${a.url}"\nkey_file = "keys/k"\n\n[[account]]\nname = "second"\nurl = "${b.url}"\nkey_file = "keys/k"\n`,
  );
  return { home, a, b, env: cliEnv(home, null, { TOPUP_API_KEY: '', TOPUP_POLL_INTERVAL_MS: '200' }) };
}

interface StoredPause { kind: string; code: string; since: number; trials?: number }

/** The pause of account `second` as the store holds it (what every process on the home obeys). */
function pauseOf(home: TempHome): StoredPause | null {
  const db = new Database(join(home.dir, 'jobs', 'topup.db'), { readonly: true });
  try {
    const r = db.prepare("SELECT value FROM meta WHERE key = 'dispatch.pause:second'").get() as { value: string } | undefined;
    return r ? (JSON.parse(r.value) as StoredPause) : null;
  } finally {
    db.close();
  }
}

/** The maintenance read probe's interval: six poll intervals (1.2 s), at least 10 s (account/pauses.ts). */
const PROBE_MS = 10_000;
const pubg = (from: number, n: number) => Array.from({ length: n }, (_, i) => ['PUBG-60', String(from + i)]);
const posts = (sb: RunningSandbox) => sb.admin.calls().filter((c) => c.method === 'POST' && c.route.includes('orders')).length;
const balanceReads = (sb: RunningSandbox) => sb.admin.calls().filter((c) => c.method === 'GET' && c.route.includes('balance')).length;

async function waitResult(home: TempHome, name: string, rows: number): Promise<void> {
  await expect.poll(() => { try { return readResult(home, name).length; } catch { return 0; } }, { timeout: 60_000, interval: 100 }).toBe(rows);
}

describe('a paused account recovers by itself', () => {
  it('maintenance: a read probe lifts the pause on trial (never an order); an order meeting maintenance again brings the same pause back; once the supplier recovers the account resumes within one probe interval and the cheapest account takes the rows again', async () => {
    const { home, a, b, env } = await world();
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const daemon = startDaemon(env);
    try {
      // The cheaper `second` answers MAINTENANCE: the rows move to `main` after max_queue_delay.
      home.drop('before.csv', csv([['pid', 'userId'], ...pubg(5_123_456_000, 3)]));
      await waitResult(home, 'before', 3);
      expect(readResult(home, 'before').map((r) => [r.status, r.account])).toEqual(Array(3).fill(['completed', 'main']));
      const since = pauseOf(home)!.since;

      // No row goes to `second` now. Its read probe (GET /balance) answers (the sandbox's maintenance
      // refuses orders only), so the pause is lifted on trial; no order was sent to probe.
      const postsBefore = posts(b);
      const readsBefore = balanceReads(b);
      await expect.poll(() => pauseOf(home), { timeout: PROBE_MS + 10_000, interval: 100 }).toBe(null);
      expect(posts(b)).toBe(postsBefore);
      expect(balanceReads(b)).toBeGreaterThan(readsBefore);

      // On trial, routing returns to it; its first order meets the maintenance again: the same pause
      // comes back (same since, one failed trial), the rows move on, nothing is bought there.
      home.drop('trial.csv', csv([['pid', 'userId'], ...pubg(5_123_456_100, 2)]));
      await waitResult(home, 'trial', 2);
      expect(readResult(home, 'trial').map((r) => [r.status, r.account])).toEqual(Array(2).fill(['completed', 'main']));
      expect(readResult(home, 'trial').every((r) => /^second \(trxid [^)]+\): second was in maintenance/.test(r.refusedBy ?? ''))).toBe(true);
      const back = pauseOf(home)!;
      expect(back).toMatchObject({ kind: 'maintenance', code: 'MAINTENANCE', since, trials: 1 });
      expect(b.admin.ledger().orders).toHaveLength(0);

      // `topup doctor` says why the account is paused, since when, and when it was last probed.
      const doctor = await runCli(['doctor', '--json'], env, { timeoutMs: 60_000 });
      const report = JSON.parse(doctor.stdout) as { checks: { name: string; detail: string }[]; accounts: { account: string; pause: { lastProbe: { at: number; ok: boolean } | null; text: string } }[] };
      const second = report.accounts.find((x) => x.account === 'second')!;
      expect(second.pause.lastProbe?.ok).toBe(true);
      expect(second.pause.text).toMatch(/^maintenance MAINTENANCE: orders paused by the API since /);
      expect(report.checks.find((c) => c.name === 'pause (second)')?.detail).toMatch(/last probed \d{4}-\d\d-\d\dT.*next probe in \d+ s/);

      // The supplier recovers. Within one probe interval (the one in force: doubled by the failed
      // trial) the account is sending again.
      const inForce = PROBE_MS * 2 ** (back.trials ?? 0);
      b.admin.setFaults({ maintenance: null });
      const cleared = Date.now();
      await expect.poll(() => pauseOf(home), { timeout: inForce + 10_000, interval: 50 }).toBe(null);
      expect(Date.now() - cleared).toBeLessThanOrEqual(inForce + 1_500);

      // Routing returns to it at once: the cheaper account takes every row, at its price.
      home.drop('after.csv', csv([['pid', 'userId'], ...pubg(5_123_457_000, 4)]));
      await waitResult(home, 'after', 4);
      const rows = readResult(home, 'after');
      expect(rows.map((r) => [r.status, r.account])).toEqual(Array(4).fill(['completed', 'second']));
      expect(b.admin.ledger().orders.map((o) => Number(o.amountUsd))).toEqual(Array(4).fill(0.83));
      expect(a.admin.ledger().orders).toHaveLength(5);
      expect(pauseOf(home)).toBe(null);
    } finally {
      await daemon.stop();
    }
  }, 180_000);

  it('a pause left by a daemon that stopped is probed by the next one at its start, with no row to send', async () => {
    const { home, b, env } = await world();
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    // A row pinned to `second` meets the maintenance; the daemon is stopped while it waits.
    const first = startDaemon(env);
    try {
      home.drop('one.csv', csv([['pid', 'userId', 'account'], ['PUBG-60', '5123458000', 'second']]));
      await expect.poll(() => pauseOf(home)?.code, { timeout: 30_000, interval: 50 }).toBe('MAINTENANCE');
    } finally {
      await first.stop();
    }
    b.admin.setFaults({ maintenance: null });
    const postsBefore = posts(b);
    // Cancel the pinned row's batch so that no row can end the pause: only the probe can.
    const status = await runCli(['status', '--json'], env);
    const batch = (JSON.parse(status.stdout) as { batches: { id: string }[] }).batches[0]!.id;
    expect((await runCli(['cancel', batch], env, { timeoutMs: 60_000 })).code).toBe(0);
    const second = startDaemon(env);
    try {
      const started = Date.now();
      await expect.poll(() => pauseOf(home), { timeout: PROBE_MS + 15_000, interval: 50 }).toBe(null);
      expect(Date.now() - started).toBeLessThan(PROBE_MS + 5_000);
      expect(posts(b)).toBe(postsBefore);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
