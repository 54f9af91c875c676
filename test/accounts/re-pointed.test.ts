/**
 * Issue 29, defect 2 (reproduced by an adversarial review against a supplier with a ledger): "the
 * same account" was only a name. A row's first send on account `second` creates an order whose
 * answer is lost, and every answer after it too (the row `resending`, same trxid); the daemon is
 * stopped; accounts.toml is edited so that `second` points at another host; on restart the
 * in-doubt trxid was sent there and charged again. Now the start is refused with the rows named and
 * what to do, and nothing reaches the other host; a rename (same URL and key, new name) keeps the
 * rows with their account; `topup accounts confirm` is the operator's audited way to say "the same
 * supplier account". Three real sandboxes (B and C sell the same packs), the real daemon and CLI.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, TEST_KEY, waitFor, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { defaultCatalog } from '../../src/sandbox/default-catalog.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

/** The same packs under other pids ("B-" + pid), 10 % cheaper: cheapest routing sends PUBG-60 rows to the account using it. */
function catalogB(dir: string): string {
  const c = defaultCatalog();
  const products = c.products.map((p) => ({ ...p, id: `B-${p.id}`, price: Math.round(p.price * 90) / 100 }));
  const file = join(dir, 'catalog-b.json');
  writeFileSync(file, JSON.stringify({ services: c.services, products }));
  return file;
}

function accounts(home: TempHome, main: RunningSandbox, second: RunningSandbox, secondName = 'second'): void {
  mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home.dir, 'keys', 'main.key'), TEST_KEY, { mode: 0o600 });
  writeFileSync(join(home.dir, 'keys', 'second.key'), TEST_KEY, { mode: 0o600 });
  writeFileSync(join(home.dir, 'accounts.toml'), `[[account]]\nname = "main"\nurl = "${main.url}"\nkey_file = "keys/main.key"\n\n[[account]]\nname = "${secondName}"\nurl = "${second.url}"\nkey_file = "keys/second.key"\n`);
}

const posts = (sb: RunningSandbox) => sb.admin.calls().filter((c) => c.method === 'POST' && /orders/.test(c.route)).length;

function rowOf(home: TempHome): { state: string; account: string; trxid: string; attempts: number; sent_origin: string | null; sent_key_fp: string | null } {
  const db = new Database(join(home.jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT * FROM rows').get() as never;
  } finally {
    db.close();
  }
}

/** One row sent on `second` (B), created there, every answer lost: the daemon stopped with the row in doubt. */
async function inDoubtOnSecond() {
  const home = tempHome('re-pointed-');
  const a = await inProcessSandbox();
  const b = await inProcessSandbox({ catalogFile: catalogB(home.dir) });
  const c = await inProcessSandbox({ catalogFile: catalogB(home.dir) });
  accounts(home, a, b);
  const env = cliEnv(home, null, { TOPUP_API_KEY: '', TOPUP_REQUEST_TIMEOUT_MS: '800' });
  b.admin.setFaults({ lostResponseShare: 1 });
  const daemon = startDaemon(env);
  home.drop('shop.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
  await waitFor('the order created at B, its answer lost', () => b.admin.ledger().orders.length === 1, 60_000, 10);
  // Then B stops answering anything: no resend, no history read can tell that the order exists.
  b.admin.setFaults({ blackhole: true });
  await waitFor('the row resent in doubt', () => {
    const r = rowOf(home);
    return r !== undefined && r.state === 'resending' && r.attempts >= 2;
  }, 60_000, 100);
  await daemon.stop();
  const row = rowOf(home);
  expect(row).toMatchObject({ state: 'resending', account: 'second' });
  return { home, a, b, c, env, trxid: row.trxid };
}

describe('an account is its endpoint and key, not its name', () => {
  it('re-pointing an account that holds a row in doubt to another host refuses the start, naming the row and what to do; nothing reaches the other host', async () => {
    const { home, a, b, c, env, trxid } = await inDoubtOnSecond();
    accounts(home, a, c); // `second` now names C
    const r = await runCli(['daemon', '--once'], env, { timeoutMs: 60_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(3);
    expect(r.stderr).toContain(`account "second" now names ${new URL(c.url).origin}`);
    expect(r.stderr).toContain(`1 unsettled row was sent to ${new URL(b.url).origin}`);
    expect(r.stderr).toContain(`trxid ${trxid}`);
    expect(r.stderr).toContain('topup accounts confirm second');
    expect(r.stderr).not.toContain(TEST_KEY);
    // A command that could send is refused as well.
    const s = await runCli(['balance'], env);
    expect(s.code).toBe(3);
    expect(posts(c)).toBe(0);
    expect(c.admin.ledger().orders).toHaveLength(0);
    // Every send recorded where it went and with which key (a fingerprint: never the key).
    const row = rowOf(home);
    expect(row).toMatchObject({ state: 'resending', account: 'second', sent_origin: new URL(b.url).origin });
    expect(row.sent_key_fp).toMatch(/^[0-9a-f]{16}$/);
    // Pointed back, the row is settled where it was sent: one order, one charge, at B.
    b.admin.setFaults({ lostResponseShare: 0, blackhole: false });
    accounts(home, a, b);
    const back = await runCli(['daemon', '--once'], env, { timeoutMs: 60_000 });
    expect(back.code, back.stderr.slice(-2000)).toBe(0);
    expect(readResult(home, 'shop').map((x) => [x.status, x.account])).toEqual([['completed', 'second']]);
    expect(b.admin.ledger().orders).toHaveLength(1);
    expect(c.admin.ledger().orders).toHaveLength(0);
  });

  it('a renamed account (the same URL and key under a new name) keeps its rows: they are settled there under the new name', async () => {
    const { home, a, b, c, env } = await inDoubtOnSecond();
    b.admin.setFaults({ lostResponseShare: 0, blackhole: false });
    accounts(home, a, b, 'backup');
    const r = await runCli(['daemon', '--once'], env, { timeoutMs: 60_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stderr + r.stdout).toMatch(/account \\*"second\\*" is named \\*"backup\\*" now/);
    expect(readResult(home, 'shop').map((x) => [x.status, x.account])).toEqual([['completed', 'backup']]);
    expect(b.admin.ledger().orders).toHaveLength(1);
    expect(c.admin.ledger().orders).toHaveLength(0);
    expect(a.admin.ledger().orders).toHaveLength(0);
  });

  it('`topup accounts confirm second` is the operator\'s audited word that it is the same supplier account: the start then goes on', async () => {
    const { home, a, c, env } = await inDoubtOnSecond();
    accounts(home, a, c);
    const confirm = await runCli(['accounts', 'confirm', 'second', '--json'], env);
    expect(confirm.code, confirm.stderr).toBe(0);
    expect(JSON.parse(confirm.stdout)).toMatchObject({ account: 'second', origin: new URL(c.url).origin, rows: 1 });
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    const audit = db.prepare(`SELECT action, detail FROM audit WHERE action = 'account confirmed'`).all() as { detail: string }[];
    db.close();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.detail).toMatch(/1 unsettled rows sent to http:\/\/127\.0\.0\.1:\d+ \(key [0-9a-f]{16}\) follow it/);
    const r = await runCli(['daemon', '--once'], env, { timeoutMs: 60_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(readResult(home, 'shop').map((x) => x.status)).toEqual(['completed']);
  });
});
