/**
 * Issue 22, "done when", with two real sandboxes as two accounts (different pids and prices, one
 * lacking a game) and the real CLI: rows are placed per the routing rule; an account in maintenance
 * hands its rows to the other; an account losing answers keeps its rows (the same trxid is resent
 * there), and nothing is bought on the other as well; a first send refused because the account no
 * longer sells the pack moves to the other with a new trxid; every row is bought once across both
 * ledgers.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, runCli, startDaemon, tempHome, TEST_KEY, waitFor, type TempHome } from '../e2e/harness.js';
import { defaultCatalog } from '../../src/sandbox/default-catalog.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

/** Sandbox B: the same packs under other pids ("B-" + pid), 10 % cheaper, and no Mobile Legends. */
function catalogB(dir: string): string {
  const c = defaultCatalog();
  const products = c.products
    .filter((p) => p.slug !== 'mobilelegends')
    .map((p) => ({ ...p, id: `B-${p.id}`, price: Math.round(p.price * 90) / 100 }));
  const file = join(dir, 'catalog-b.json');
  writeFileSync(file, JSON.stringify({ services: c.services.filter((s) => s.slug !== 'mobilelegends'), products }));
  return file;
}

function accountsFile(home: TempHome, a: RunningSandbox, b: RunningSandbox, extra = ''): void {
  mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
  writeFileSync(join(home.dir, 'keys', 'main.key'), TEST_KEY, { mode: 0o600 });
  writeFileSync(join(home.dir, 'keys', 'second.key'), TEST_KEY, { mode: 0o600 });
  writeFileSync(
    join(home.dir, 'accounts.toml'),
    `${extra}\n[[account]]\nname = "main"\nurl = "${a.url}"\nkey_file = "keys/main.key"\n\n[[account]]\nname = "second"\nurl = "${b.url}"\nkey_file = "keys/second.key"\n`,
  );
}

async function world(extra = '') {
  const home = tempHome('two-accounts-');
  const a = await inProcessSandbox();
  const b = await inProcessSandbox({ catalogFile: catalogB(home.dir) });
  accountsFile(home, a, b, extra);
  const env = cliEnv(home, null, { TOPUP_API_KEY: '' });
  return { home, a, b, env };
}

const pubg = (n: number) => Array.from({ length: n }, (_, i) => ['PUBG-60', String(5_123_456_000 + i)]);
const trxids = (sb: RunningSandbox) => sb.admin.ledger().orders.map((o) => String(o.trxid));

describe('two accounts', () => {
  it('cheapest: packs both sell go to the cheaper account (its own pid and price), a pack only one sells goes there; each row bought once', async () => {
    const { home, a, b, env } = await world();
    const file = join(home.dir, 'mixed.csv');
    writeFileSync(file, csv([['pid', 'userId', 'zoneId'], ...pubg(6).map((r) => [...r, '']), ['ML-86', '123456789', '1234'], ['ML-86', '123456790', '1234']]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const rows = readResult(home, 'mixed');
    expect(rows.map((x) => x.status)).toEqual(Array(8).fill('completed'));
    expect(rows.map((x) => x.account)).toEqual([...Array(6).fill('second'), 'main', 'main']);
    expect(b.admin.ledger().orders.map((o) => o.pid)).toEqual(Array(6).fill('B-PUBG-60'));
    expect(b.admin.ledger().orders.map((o) => Number(o.amountUsd))).toEqual(Array(6).fill(0.83));
    expect(a.admin.ledger().orders.map((o) => o.pid)).toEqual(['ML-86', 'ML-86']);
    expect(new Set([...trxids(a), ...trxids(b)]).size).toBe(8);
    // The summary's balance after is each account's, and their sum (every account of the home).
    const summary = readSummary(home, 'mixed');
    expect(summary.balanceAtEndByAccount).toEqual({ main: a.admin.account().balanceUsd, second: b.admin.account().balanceUsd });
    expect(summary.balanceAtEndUsd).toBeCloseTo(a.admin.account().balanceUsd + b.admin.account().balanceUsd, 2);
    expect(summary.balanceAfterUsd).toBeCloseTo(summary.balanceBeforeUsd - summary.spentUsd, 2);
  });

  it('priority: the first account that sells the pack, even at a higher price; an `account` column pins a row', async () => {
    const { home, a, b, env } = await world('routing = "priority"');
    const file = join(home.dir, 'pinned.csv');
    writeFileSync(file, csv([['pid', 'userId', 'account'], ['PUBG-60', '5123456001', ''], ['PUBG-60', '5123456002', 'second'], ['PUBG-60', '5123456003', 'nobody']]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    const rows = readResult(home, 'pinned');
    expect(rows.map((x) => [x.status, x.result_account])).toEqual([['completed', 'main'], ['completed', 'second'], ['invalid', '']]);
    expect(rows[2]!.error).toMatch(/account: "nobody" is not one of this home's accounts \(main, second\)/);
    expect(a.admin.ledger().orders).toHaveLength(1);
    expect(b.admin.ledger().orders).toHaveLength(1);
    expect(r.code).not.toBe(null);
    // The summary says how the account column was read: a pin, not a column of the reseller's own.
    const col = readSummary(home, 'pinned').columns.find((c: { column: string }) => c.column === 'account');
    expect(col.note).toMatch(/supplier account each row is placed on/);
  });

  it('an account in maintenance: after max_queue_delay its rows (never sent, or turned away before any order) go to the other, with new trxids', async () => {
    const { home, a, b, env } = await world('max_queue_delay = "1s"');
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const file = join(home.dir, 'maint.csv');
    // Three rows: all placed on the cheaper `second` (its queue stays under 1 s at 200/min).
    writeFileSync(file, csv([['pid', 'userId'], ...pubg(3)]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const rows = readResult(home, 'maint');
    expect(rows.map((x) => [x.status, x.account])).toEqual(Array(3).fill(['completed', 'main']));
    for (const row of rows) {
      // Sent under a new trxid (its own plus the account); the result keeps its own in `trxid`.
      expect(row.sentTrxid).toBe(`${row.trxid}-main`);
      expect(row.refusedBy).toMatch(/^second \(trxid [^)]+\): second was in maintenance \(MAINTENANCE\)/);
    }
    expect(b.admin.ledger().orders).toHaveLength(0);
    expect(a.admin.ledger().orders).toHaveLength(3);
  });

  it('an account losing 30 % of answers keeps its rows (resent there with the same trxid): nothing is bought on the other as well', async () => {
    const { home, a, b, env } = await world();
    b.admin.setFaults({ lostResponseShare: 0.3, seed: 7 });
    const file = join(home.dir, 'lossy.csv');
    writeFileSync(file, csv([['pid', 'userId'], ...pubg(20)]));
    const r = await runCli(['submit', file, '--json'], { ...env, TOPUP_REQUEST_TIMEOUT_MS: '1000' }, { timeoutMs: 180_000 });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const rows = readResult(home, 'lossy');
    expect(rows.map((x) => [x.status, x.account])).toEqual(Array(20).fill(['completed', 'second']));
    expect(rows.every((x) => x.refusedBy === '')).toBe(true);
    expect(a.admin.ledger().orders).toHaveLength(0);
    const bought = trxids(b);
    expect(bought).toHaveLength(20);
    expect(new Set(bought)).toEqual(new Set(rows.map((x) => x.sentTrxid)));
    expect(rows.every((x) => x.sentTrxid === x.trxid)).toBe(true);
    // Answers were lost, and the rows were resent there (more sends than orders).
    expect(b.admin.calls().filter((c) => c.method === 'POST').length).toBeGreaterThan(20);
  });

  it('a first send refused because the account stopped selling the pack moves to the other account with a new trxid; the refusal is in the result', async () => {
    const { home, a, b, env } = await world();
    const daemon = startDaemon({ ...env, TOPUP_CATALOG_MAX_AGE_MS: '600000' });
    try {
      home.drop('first.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456100']]));
      await expect.poll(() => { try { return readResult(home, 'first').length; } catch { return 0; } }, { timeout: 30_000 }).toBe(1);
      // The daemon's catalog still lists B-PUBG-60 as active (cached); the supplier has disabled it.
      b.admin.setProduct({ id: 'B-PUBG-60', status: 'inactive' });
      home.drop('second.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456101'], ['PUBG-60', '5123456102']]));
      await expect.poll(() => { try { return readResult(home, 'second').length; } catch { return 0; } }, { timeout: 30_000 }).toBe(2);
    } finally {
      await daemon.stop();
    }
    const rows = readResult(home, 'second');
    expect(rows.map((x) => [x.status, x.account])).toEqual([['completed', 'main'], ['completed', 'main']]);
    for (const row of rows) {
      expect(row.sentTrxid).toBe(`${row.trxid}-main`);
      expect(row.refusedBy).toMatch(/^second \(trxid [^)]+\): second refused it/);
    }
    expect(b.admin.ledger().orders).toHaveLength(1);
    expect(a.admin.ledger().orders).toHaveLength(2);
  });
});

describe('faults per account', () => {
  it('one account whose key is revoked mid-batch, one out of balance, one healthy: every row final, each bought once across the three ledgers; the revoked account keeps what it placed, its other rows move on, and the broke one hands on what it refused', async () => {
    const home = tempHome('three-accounts-');
    const a = await inProcessSandbox({ rateLimits: [{ limit: 2, windowMs: 1_000 }] });
    const b = await inProcessSandbox({ balanceUsd: 1 });
    const c = await inProcessSandbox();
    mkdirSync(join(home.dir, 'keys'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home.dir, 'keys', 'k'), TEST_KEY, { mode: 0o600 });
    const acct = (name: string, sb: RunningSandbox, extra = '') => `[[account]]\nname = "${name}"\nurl = "${sb.url}"\nkey_file = "keys/k"\n${extra}\n`;
    writeFileSync(join(home.dir, 'accounts.toml'), `routing = "priority"\nmax_queue_delay = "1s"\n${acct('revoked', a, 'rate_limits = "2/1s"')}${acct('broke', b)}${acct('healthy', c)}`);
    const env = { ...cliEnv(home, null, { TOPUP_API_KEY: '' }), TOPUP_REQUEST_TIMEOUT_MS: '2000' };
    const file = join(home.dir, 'twelve.csv');
    const players = Array.from({ length: 12 }, (_, i) => String(5_123_457_000 + i));
    writeFileSync(file, csv([['pid', 'userId'], ...players.map((p) => ['PUBG-60', p])]));
    const run = runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    // The key stops working after the first 3 orders; it works again once the other rows have moved
    // on and been bought (broke's one, then healthy's), not after a fixed time.
    await expect.poll(() => a.admin.ledger().orders.length, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(3);
    a.admin.setAccount({ state: 'api_disabled' });
    const boughtSoFar = (): number => [a, b, c].reduce((n, sb) => n + sb.admin.ledger().orders.length, 0);
    await waitFor('every row bought somewhere while the key is revoked', () => boughtSoFar() >= players.length, 60_000, 50).catch((err: Error) => {
      throw new Error(`${err.message}: ${[a, b, c].map((sb) => sb.admin.ledger().orders.length).join(' / ')} bought`);
    });
    a.admin.setAccount({ state: 'active' });
    const r = await run;
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const rows = readResult(home, 'twelve');
    expect(rows.map((x) => x.status)).toEqual(Array(12).fill('completed'));
    const bought = [a, b, c].flatMap((sb) => sb.admin.ledger().orders.map((o) => String(o.userId)));
    expect(bought.sort()).toEqual([...players].sort());
    expect(b.admin.ledger().orders).toHaveLength(1); // 0.92 of its 1 USD, then INSUFFICIENT BALANCE
    // Rows that moved carry a new trxid and say who refused them; rows that stayed on `revoked`
    // (sent, answer in doubt) kept their trxid.
    for (const row of rows) {
      if (row.account === 'revoked') expect(row.refusedBy).toBe('');
      else if (row.refusedBy !== '') expect(row.sentTrxid).toMatch(new RegExp(`-${row.account}$`));
    }
    expect(rows.some((x) => x.account === 'healthy' && /broke \(trxid [^)]+-broke\): broke refused it: INSUFFICIENT/.test(x.refusedBy ?? ''))).toBe(true);
  }, 150_000);
});
