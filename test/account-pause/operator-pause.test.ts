/**
 * `topup account pause NAME` / `topup account resume NAME` (a new-user trial looked for them: the only
 * way to stop one account was to edit accounts.toml and restart). Two real sandboxes as two accounts,
 * cheapest routing (`second` is 10 % cheaper), the real CLI and daemon as child processes:
 *  - rows already sent to `second` (held `processing` by its sandbox) are still polled to their end
 *    while it is paused: nothing in flight is abandoned;
 *  - a new file's rows go to `main` (routing and the move off a paused account honour the pause), and
 *    a row pinned to `second` waits: not one POST /orders reaches `second` while it is paused;
 *  - the pause is stored: a restarted daemon keeps it; `topup accounts`, `topup status`, `topup doctor`
 *    and the console's Accounts table say so;
 *  - `topup account resume second` clears it and the waiting pinned row is sent and completes there.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli, startDaemon, type TempHome } from '../e2e/harness.js';
import { twoAccounts, ordersOf } from '../accounts/two-sandboxes.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

const posts = (sb: RunningSandbox): number => sb.admin.calls().filter((c) => c.method === 'POST' && c.route.includes('orders')).length;
const pubg = (from: number, n: number): string[][] => Array.from({ length: n }, (_, i) => ['PUBG-60', String(from + i)]);

function storedPause(home: TempHome, account: string): { kind: string; since: number } | null {
  const db = new Database(join(home.dir, 'jobs', 'topup.db'), { readonly: true });
  try {
    const r = db.prepare('SELECT value FROM meta WHERE key = ?').get(`dispatch.pause:${account}`) as { value: string } | undefined;
    return r ? (JSON.parse(r.value) as { kind: string; since: number }) : null;
  } finally {
    db.close();
  }
}

async function resultOf(home: TempHome, name: string, rows: number, timeout = 60_000): Promise<Record<string, string>[]> {
  await expect.poll(() => { try { return readResult(home, name).length; } catch { return 0; } }, { timeout, interval: 100 }).toBe(rows);
  return readResult(home, name);
}

describe('the operator pauses and resumes one account', () => {
  it('pause: in-flight rows still end there, new rows go elsewhere or wait, a restart keeps it; resume sends the waiting rows', async () => {
    const { home, a, b, env } = await twoAccounts({
      extra: 'max_queue_delay = "1s"',
      // `second` holds every order `processing` for 6 s: they are in flight when the pause comes.
      b: { fulfilment: { processingShare: 1, processingMs: [6_000, 6_000], failShare: 0 } },
      env: { TOPUP_POLL_INTERVAL_MS: '200' },
    });
    let daemon = startDaemon(env);
    try {
      home.drop('first.csv', csv([['pid', 'userId'], ...pubg(5_200_000_100, 2)]));
      await expect.poll(() => ordersOf(b).length, { timeout: 30_000, interval: 50 }).toBe(2);
      expect(ordersOf(b).every((o) => o.status === 'processing')).toBe(true);

      const paused = await runCli(['account', 'pause', 'second', '--note', 'supplier asked us to hold'], env, { timeoutMs: 60_000 });
      expect(paused.stderr).toBe('');
      expect(paused.code).toBe(0);
      expect(paused.stdout).toMatch(/Account "second" is paused: no order is sent to it until topup account resume second/);
      expect(storedPause(home, 'second')?.kind).toBe('operator');
      const postsAtPause = posts(b);

      // A new file: every row goes to `main`, none to the paused cheaper account.
      home.drop('mid.csv', csv([['pid', 'userId'], ...pubg(5_200_000_200, 3)]));
      const mid = await resultOf(home, 'mid', 3);
      expect(mid.map((r) => [r.status, r.account])).toEqual(Array(3).fill(['completed', 'main']));

      // The rows in flight at the pause are followed to their end on `second`.
      const first = await resultOf(home, 'first', 2);
      expect(first.map((r) => [r.status, r.account])).toEqual(Array(2).fill(['completed', 'second']));
      expect(ordersOf(b).every((o) => o.status === 'completed')).toBe(true);

      // A row pinned to `second` waits: no POST reaches it.
      home.drop('pinned.csv', csv([['pid', 'userId', 'account'], ['B-PUBG-60', '5200000300', 'second']]));
      await new Promise((r) => setTimeout(r, 3_000));
      expect(posts(b)).toBe(postsAtPause);
      // The pause is still there after rows on the account ended (an order or poll going through does not end it).
      expect(storedPause(home, 'second')?.kind).toBe('operator');
    } finally {
      await daemon.stop();
    }

    // Stored: a restarted daemon keeps it, and the views say so.
    daemon = startDaemon(env);
    try {
      await new Promise((r) => setTimeout(r, 3_000));
      expect(posts(b)).toBe(2);
      const list = await runCli(['accounts', '--json'], env, { timeoutMs: 60_000 });
      expect(list.code).toBe(0);
      const accounts = (JSON.parse(list.stdout) as { accounts: { account: string; state: string; rowsWaiting: number; detail: string }[] }).accounts;
      expect(accounts.map((x) => [x.account, x.state])).toEqual([['main', 'sending'], ['second', 'paused by the operator']]);
      expect(accounts[1]!.rowsWaiting).toBe(1);
      expect(accounts[1]!.detail).toMatch(/paused by the operator since .*supplier asked us to hold.*topup account resume second/);
      const status = await runCli(['status'], env, { timeoutMs: 60_000 });
      expect(status.stdout).toMatch(/second: Sending paused by the operator since .*topup account resume second/);
      expect(status.stdout).toMatch(/second\s+paused by the operator/);

      const resumed = await runCli(['account', 'resume', 'second'], env, { timeoutMs: 60_000 });
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toMatch(/Account "second" is resumed/);
      expect(storedPause(home, 'second')).toBe(null);
      // The waiting pinned row is sent at once and completes there.
      const pinned = await resultOf(home, 'pinned', 1, 40_000);
      expect(pinned.map((r) => [r.status, r.account])).toEqual([['completed', 'second']]);
      expect(ordersOf(b)).toHaveLength(3);
      expect(ordersOf(a)).toHaveLength(3);
      const again = JSON.parse((await runCli(['accounts', '--json'], env, { timeoutMs: 60_000 })).stdout) as { accounts: { state: string }[] };
      expect(again.accounts.map((x) => x.state)).toEqual(['sending', 'sending']);
      // Audited by the one pause/resume operation the console's buttons also call (ops/account-pause.ts):
      // the same actions and words, the CLI's user as the actor.
      const db = new Database(join(home.dir, 'jobs', 'topup.db'), { readonly: true });
      const audit = db.prepare("SELECT actor, address, action, detail, outcome FROM audit WHERE action LIKE 'account %' ORDER BY id").all() as { actor: string; address: string | null; action: string; detail: string; outcome: string }[];
      db.close();
      expect(audit.map((e) => [e.action, e.outcome, e.address])).toEqual([['account paused', 'ok', null], ['account resumed', 'ok', null]]);
      expect(audit[0]!.actor).toMatch(/^topup account pause \(.+\)$/);
      expect(audit[0]!.detail).toBe('account "second" paused by the operator: supplier asked us to hold');
      expect(audit[1]!.actor).toMatch(/^topup account resume \(.+\)$/);
      expect(audit[1]!.detail).toMatch(/^account "second" resumed by the operator \(paused since \d{4}-\d\d-\d\dT/);
    } finally {
      await daemon.stop();
    }
  }, 180_000);

  it('a name the home does not have is refused, naming the accounts', async () => {
    const { env } = await twoAccounts();
    const r = await runCli(['account', 'pause', 'nope'], env, { timeoutMs: 60_000 });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/account "nope" is not in this home's accounts \(main, second\)/);
  }, 60_000);
});
