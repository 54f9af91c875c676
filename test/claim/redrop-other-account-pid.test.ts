/**
 * Issue 22 adversarial review: the repeat guard (claim/repeats.ts) fingerprints a purchase by the
 * pid "as the file names it". With two accounts, one purchase has two pids (each supplier's own),
 * and docs/accounts.md says a pid of ANY account names its pack. So an edited re-drop of a file
 * that names the pack by the other account's pid (the reseller re-exported the file from the
 * second supplier's template, or a colleague did) is not seen as a repeat: the same top-up for the
 * same player is bought again. Real CLI, two real sandboxes, real SQLite.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli } from '../e2e/harness.js';
import { ordersOf, twoAccounts } from '../accounts/two-sandboxes.js';

describe('edited re-drop naming the pack by the other account\'s pid', () => {
  it('the second file repeats the first purchase (same pack, same player): skipped, not bought again', async () => {
    const { home, a, b, env } = await twoAccounts();
    const first = join(home.dir, 'evening.csv');
    // Written from main's template: PUBG-60. Cheapest routing places it on `second` (B-PUBG-60).
    writeFileSync(first, csv([['pid', 'userId'], ['PUBG-60', '5123456701']]));
    const r1 = await runCli(['submit', first, '--json'], env, { timeoutMs: 120_000 });
    expect(r1.code, r1.stderr.slice(-2000)).toBe(0);
    expect(readResult(home, 'evening').map((x) => [x.status, x.account])).toEqual([['completed', 'second']]);

    // The same purchase again, an hour later, from the second supplier's template (its pid), with a
    // note column added: an edited re-drop, the case the repeat guard exists for.
    const again = join(home.dir, 'evening-fixed.csv');
    writeFileSync(again, csv([['pid', 'userId', 'note'], ['B-PUBG-60', '5123456701', 'resent']]));
    await runCli(['submit', again, '--json'], env, { timeoutMs: 120_000 });
    const rows = readResult(home, 'evening-fixed');
    expect(rows.map((x) => x.status)).toEqual(['skipped']);
    // One purchase, one order across both ledgers.
    expect(ordersOf(a).length + ordersOf(b).length).toBe(1);
  });

  it('the same purchase named by slug + pack in one file and by the second account\'s pid in its re-drop: skipped', async () => {
    const { home, a, b, env } = await twoAccounts();
    const first = join(home.dir, 'night.csv');
    writeFileSync(first, csv([['slug', 'pack', 'userId'], ['pubg', '60 UC', '5123456702']]));
    const r1 = await runCli(['submit', first, '--json'], env, { timeoutMs: 120_000 });
    expect(r1.code, r1.stderr.slice(-2000)).toBe(0);
    expect(readResult(home, 'night').map((x) => x.status)).toEqual(['completed']);
    const again = join(home.dir, 'night-2.csv');
    writeFileSync(again, csv([['pid', 'userId', 'note'], ['B-PUBG-60', '5123456702', 'x']]));
    await runCli(['submit', again, '--json'], env, { timeoutMs: 120_000 });
    expect(readResult(home, 'night-2').map((x) => x.status)).toEqual(['skipped']);
    expect(ordersOf(a).length + ordersOf(b).length).toBe(1);
  });

  it('control (passes on the code under review): the re-drop naming the same pid as the first file is skipped', async () => {
    const { home, a, b, env } = await twoAccounts();
    const first = join(home.dir, 'control.csv');
    writeFileSync(first, csv([['pid', 'userId'], ['PUBG-60', '5123456710']]));
    expect((await runCli(['submit', first, '--json'], env, { timeoutMs: 120_000 })).code).toBe(0);
    const again = join(home.dir, 'control-2.csv');
    writeFileSync(again, csv([['pid', 'userId', 'note'], ['PUBG-60', '5123456710', 'x']]));
    await runCli(['submit', again, '--json'], env, { timeoutMs: 120_000 });
    expect(readResult(home, 'control-2').map((x) => x.status)).toEqual(['skipped']);
    expect(ordersOf(a).length + ordersOf(b).length).toBe(1);
  });
});
