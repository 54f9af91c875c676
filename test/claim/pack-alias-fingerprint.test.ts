/**
 * Issue 22, adversarial review round 2: the purchase fingerprint of a pack tied by a [[pack]] entry
 * is `pack-alias:<index of the entry in accounts.toml>` (placement.ts packKey). The index is a
 * position in a file the reseller edits: adding an entry above another shifts every key below it.
 * Then, inside the 24 h repeat window (claim/repeats.ts), an edited re-drop of a purchase made
 * before the edit is not recognised (bought again), and a DIFFERENT pack for the same player that
 * now has the old index is skipped as a "repeat" of it (a customer's row silently not bought).
 * Real CLI, two real sandboxes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli } from '../e2e/harness.js';
import { catalogB, ordersOf, twoAccounts } from '../accounts/two-sandboxes.js';

describe('[[pack]] entries and the repeat window', () => {
  it('adding a [[pack]] entry above another neither re-buys a purchase of the 24 h window nor skips a different pack as its repeat', async () => {
    const c = catalogB();
    // The second supplier names both PUBG packs differently: [[pack]] entries tie them.
    const products = c.products.map((p) => (p.id === 'B-PUBG-60' ? { ...p, serviceName: 'UC 60 (fast)' } : p.id === 'B-PUBG-325' ? { ...p, serviceName: 'UC 325 (fast)' } : p));
    const { home, a, b, env } = await twoAccounts({ catalogB: { ...c, products } });
    const base = readFileSync(join(home.dir, 'accounts.toml'), 'utf8');
    const p60 = '\n[[pack]]\nmain = { pid = "PUBG-60" }\nsecond = { pid = "B-PUBG-60" }\n';
    const p325 = '\n[[pack]]\nmain = { pid = "PUBG-325" }\nsecond = { pid = "B-PUBG-325" }\n';
    writeFileSync(join(home.dir, 'accounts.toml'), `${base}${p60}`);

    const f1 = join(home.dir, 'first.csv');
    writeFileSync(f1, csv([['pid', 'userId'], ['PUBG-60', '5123456711']]));
    const r1 = await runCli(['submit', f1, '--json'], env, { timeoutMs: 60_000 });
    expect(r1.code, r1.stderr.slice(-1500)).toBe(0);
    expect(readResult(home, 'first').map((r) => r.status)).toEqual(['completed']);

    // The reseller ties one more pack, written above the first entry.
    writeFileSync(join(home.dir, 'accounts.toml'), `${base}${p325}${p60}`);
    const f2 = join(home.dir, 'second.csv');
    // Row 1 repeats the purchase above (edited re-drop); row 2 is a new purchase of another pack.
    writeFileSync(f2, csv([['pid', 'userId'], ['PUBG-60', '5123456711'], ['PUBG-325', '5123456711']]));
    const r2 = await runCli(['submit', f2, '--json'], env, { timeoutMs: 60_000 });
    const rows = readResult(home, 'second');
    expect(rows.map((r) => `${r.status}`), r2.stderr.slice(-1500)).toEqual(['skipped', 'completed']);
    const all = [...ordersOf(a), ...ordersOf(b)];
    expect(all.filter((o) => /PUBG-60$/.test(String(o.pid)))).toHaveLength(1);
    expect(all.filter((o) => /PUBG-325$/.test(String(o.pid)))).toHaveLength(1);
  }, 150_000);
});
