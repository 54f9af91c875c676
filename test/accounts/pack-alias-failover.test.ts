/**
 * Issue 22 adversarial review: a pack the two suppliers name differently, tied by a [[pack]] entry
 * of accounts.toml. Placement honours the entry (the row goes to the cheaper `second`), but a move
 * does not: moveRow (dispatch/failover.ts) builds its Router from the OTHER accounts' catalogs
 * only, and the [[pack]] lookup (routing.ts aliasAt) can only recognise the row's own pack through
 * its own account's catalog, which is left out; the fallback (same slug and pack name) fails by
 * definition. So with `second` in maintenance, the row that docs/accounts.md says goes to `main`
 * after max_queue_delay never moves (and a first send refused there is rejected instead of moved).
 * Real CLI, two real sandboxes.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli } from '../e2e/harness.js';
import { catalogB, ordersOf, twoAccounts } from './two-sandboxes.js';

describe('failover of a pack known under two names ([[pack]])', () => {
  it('an account in maintenance hands the row to the other account that sells the same pack under another name', async () => {
    const c = catalogB();
    const products = c.products.map((p) => (p.id === 'B-PUBG-60' ? { ...p, serviceName: 'UC 60 (fast)' } : p));
    const pack = '\n[[pack]]\nmain = { pid = "PUBG-60" }\nsecond = { pid = "B-PUBG-60" }\n';
    const { home, a, b, env } = await twoAccounts({ catalogB: { ...c, products }, extra: 'max_queue_delay = "1s"' });
    writeFileSync(join(home.dir, 'accounts.toml'), `${String((await import('node:fs')).readFileSync(join(home.dir, 'accounts.toml')))}${pack}`);
    b.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const file = join(home.dir, 'alias.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456708']]));
    const r = await runCli(['submit', file, '--json'], env, { timeoutMs: 45_000 });
    expect(r.code, r.stderr.slice(-1500)).toBe(0);
    const rows = readResult(home, 'alias');
    expect(rows.map((x) => [x.status, x.account])).toEqual([['completed', 'main']]);
    expect(rows[0]!.refusedBy).toMatch(/^second \(trxid/);
    expect(ordersOf(b)).toHaveLength(0);
    expect(ordersOf(a)).toHaveLength(1);
  }, 90_000);
});
