/**
 * Issue 29, "the untrue re-drop row": a batch cancelled part-way (some rows bought), the same file
 * dropped again. The rows never sent are bought (their trxids were given up by the cancel); the
 * rows bought before hold their trxids, and were reported `invalid` with "generated trxid … was
 * already used by batch …; a new purchase needs a new trxid": advice that buys them a second time.
 * A row bought before is reported as what it is: bought, in which batch, as which order, and it is
 * never advised to be bought again. Real CLI, real daemon, the sandbox's ledger.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult, listOutbox } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const rows = csv([['pid', 'userId'], ...Array.from({ length: 8 }, (_, i) => ['PUBG-60', `51234${String(20000 + i)}`])]);

function firstBatch(jobs: string): { id: string; orders: { line: number; order_id: string; state: string; trxid: string }[] } {
  const db = new Database(join(jobs, 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    const b = db.prepare('SELECT id FROM batches ORDER BY seq LIMIT 1').get() as { id: string };
    const orders = db.prepare('SELECT line, order_id, state, trxid FROM rows WHERE batch_id = ? AND order_id IS NOT NULL ORDER BY idx').all(b.id) as never;
    return { id: b.id, orders };
  } finally {
    db.close();
  }
}

it('a batch cancelled part-way, dropped again: the unsent rows are bought, the bought ones reported as bought (batch, order), never advised to be bought again', async () => {
  const home = tempHome();
  const sb = await inProcessSandbox();
  const env = cliEnv(home, sb, { TOPUP_RATE_LIMITS: '1/2s' });
  const daemon = startDaemon(env);
  home.drop('day.csv', rows);
  await waitFor('two orders', () => sb.admin.ledger().orders.length >= 2, 30_000, 10);
  const { id } = firstBatch(home.jobs);
  expect((await runCli(['cancel', id], env)).code).toBe(0);
  await waitForResult(home, 'day');
  expect(await daemon.stop()).toBe(0);
  const bought = firstBatch(home.jobs).orders;
  expect(bought.length).toBeGreaterThanOrEqual(2);
  expect(bought.length).toBeLessThan(8);
  const ledgerBefore = sb.admin.ledger().orders.length;
  expect(ledgerBefore).toBe(bought.length);

  home.drop('day.csv', rows);
  expect((await runCli(['daemon', '--once'], cliEnv(home, sb))).code).toBe(0);
  const again = listOutbox(home).find((n) => n.endsWith('.result.csv') && n !== 'day.result.csv')!;
  expect(again).toBeDefined();
  const result = readResult(home, again.replace(/\.result\.csv$/, ''));
  expect(result).toHaveLength(8);

  // Every purchase exactly once in the supplier's ledger: 8 in all, no trxid twice.
  const ledger = sb.admin.ledger().orders;
  expect(ledger).toHaveLength(8);
  expect(new Set(ledger.map((o) => o.trxid)).size).toBe(8);

  const boughtLines = new Set(bought.map((b) => b.line));
  result.forEach((r, i) => {
    const line = i + 2;
    if (!boughtLines.has(line)) {
      expect(r.status, `line ${line}`).toBe('completed');
      return;
    }
    const earlier = bought.find((b) => b.line === line)!;
    // Not `invalid`, and no advice to buy it again with a new trxid.
    expect(r.status, `line ${line}: ${r.error}`).toBe('skipped');
    expect(r.error).not.toMatch(/new trxid|buy it again|order it again/i);
    expect(r.error).toContain(`already bought`);
    expect(r.error).toContain(`batch ${id}`);
    expect(r.error).toContain(`order ${earlier.order_id}`);
    expect(r.error).toContain(earlier.state);
    expect(r.error).toContain(earlier.trxid);
  });
});
