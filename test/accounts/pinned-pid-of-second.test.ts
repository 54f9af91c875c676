/**
 * Issue 22 adversarial review: two suppliers number their pids independently, so one pid can name
 * two different packs (at `main` PUBG-60 is 60 UC; at `second` it is 325 UC). A reseller who
 * copies the pid from the second supplier's catalog and pins the row to it with an `account`
 * column means the second supplier's pack. The pid is looked up in main's catalog first
 * (mergedIndex, file order), so the row buys 60 UC (the pin then moves that pack to `second`):
 * the wrong purchase, paid for, with the result saying "completed". Real CLI, two real sandboxes.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli } from '../e2e/harness.js';
import { catalogB, ordersOf, twoAccounts } from './two-sandboxes.js';

describe('a pid that names different packs at the two accounts', () => {
  it('a row pinned to `second` with second\'s pid buys second\'s pack (or is refused as ambiguous), never main\'s pack of that pid', async () => {
    const c = catalogB();
    // At `second`, "PUBG-60" is its 325 UC pack (its 60 UC is B-PUBG-60).
    const products = c.products.map((p) => (p.id === 'B-PUBG-325' ? { ...p, id: 'PUBG-60' } : p));
    const { home, a, b, env } = await twoAccounts({ catalogB: { ...c, products } });
    const file = join(home.dir, 'from-second.csv');
    writeFileSync(file, csv([['pid', 'userId', 'account'], ['PUBG-60', '5123456703', 'second']]));
    await runCli(['submit', file, '--json'], env, { timeoutMs: 120_000 });
    const rows = readResult(home, 'from-second');
    const bought = [...ordersOf(a), ...ordersOf(b)].map((o) => `${String(o.pid)} ${String(o.packName ?? '')}`.trim());
    // Either the pack the reseller named at the account named (PUBG-60 at second = 325 UC), or nothing.
    if (rows[0]!.status === 'invalid') expect(bought).toEqual([]);
    else expect(bought).toEqual([expect.stringMatching(/^PUBG-60\b/)]);
    expect(ordersOf(b).every((o) => o.pid === 'PUBG-60')).toBe(true);
  });
});
