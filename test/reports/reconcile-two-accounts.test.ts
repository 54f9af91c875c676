/**
 * Issue 22 adversarial review: reconciliation (the daemon's TOPUP_RECONCILE_CRON job,
 * reports/reconcile.ts) with two accounts. It reads the history and balance of rt.account (the
 * first account) only, and matches every placed row of every account against it by order id
 * alone. Both suppliers number ORD1000001, so the row bought on `second` is compared with main's
 * ORD1000001 (another purchase): the report tells the reseller "the API charged a different
 * amount than the ledger holds" about an order that is fine. Real rows placed by the real CLI on
 * two real sandboxes; the job is run in-process on the same home (it has no command of its own).
 */
import { join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli } from '../e2e/harness.js';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/kernel/log.js';
import { openRuntime } from '../../src/runtime.js';
import { runReconcile } from '../../src/reports/reconcile.js';
import { twoAccounts } from '../accounts/two-sandboxes.js';

describe('reconciliation with two accounts', () => {
  it('two correct orders, one on each account, both numbered ORD1000001: no difference reported', async () => {
    const { home, a, env } = await twoAccounts({ a: { fulfilment: { failShare: 0, processingShare: 0 } }, b: { fulfilment: { failShare: 0, processingShare: 0 } } });
    const file = join(home.dir, 'both.csv');
    writeFileSync(file, csv([['pid', 'userId', 'zoneId'], ['ML-86', '123456789', '1234'], ['PUBG-60', '5123456709', '']]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    expect(r.code, r.stderr.slice(-1500)).toBe(0);
    expect(readResult(home, 'both').map((x) => [x.status, x.account, x.orderId])).toEqual([
      ['completed', 'main', 'ORD1000001'],
      ['completed', 'second', 'ORD1000001'],
    ]);
    const rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: '' }), silentLogger(), a.url);
    try {
      const rep = await runReconcile(rt, { now: Date.now() });
      const text = readFileSync(rep.file, 'utf8');
      expect(rep.differences, text).toBe(0);
      expect(text).not.toMatch(/amount-differs|missing-in-history|status-differs/);
    } finally {
      await rt.close();
    }
  }, 120_000);
});
