/**
 * Issue 31's "done when", with the real CLI (dist/cli.js) against a real sandbox on 127.0.0.1:
 * with checks on, a 600-row file with three mistyped ids is named by `topup validate` before
 * anything is spent (the three lines), after it runs the sandbox's ledger holds no order for
 * those three, the result carries playerName, and a second file with the same players makes no
 * new check calls. And the daemon checks by itself (no validate first), charging what the
 * sandbox's tariff says, which the summary shows.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const FAST = { rateLimits: [{ limit: 5000, windowMs: 1000 }] };
const ENV = { TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_PRICE_USD: '0.01', TOPUP_RATE_LIMITS: '2000/1s', TOPUP_MAX_IN_FLIGHT: '64' };
const checkCalls = (sb: { admin: { calls(): { route: string }[] } }): number => sb.admin.calls().filter((c) => c.route === 'POST /pubgvvfy').length;

describe('player checks, done when', () => {
  it('600 rows, three mistyped ids: validate names the three lines before anything is spent; none of them is ordered; the cache spares a second file every call', async () => {
    const home = tempHome('topup-players-600-');
    const typos = ['51000000499', '51000002990', '510000055']; // digits only: a letter is refused by the id format before any check
    const sb = await inProcessSandbox({ ...FAST, balanceUsd: 5000, players: { unknown: typos, checkPriceUsd: 0.01 } });
    const env = cliEnv(home, sb, ENV);
    const ids = Array.from({ length: 600 }, (_, i) => String(5100000000 + i));
    ids[49] = typos[0]!;
    ids[299] = typos[1]!;
    ids[554] = typos[2]!;
    const file = join(home.dir, 'day1.csv');
    writeFileSync(file, csv([['pid', 'userId'], ...ids.map((u) => ['PUBG-60', u])]));

    // Without --check-players: how many checks and what they may cost, before any is made.
    const q = await runCli(['validate', file], env, { timeoutMs: 120_000 });
    expect(q.stdout).toContain('600 players to check (0 answered before); 600 checks may cost up to 6.00 USD');
    expect(checkCalls(sb)).toBe(0);

    // With it: the three lines named (header is line 1), the file not called ready, no order placed.
    const v = await runCli(['validate', file, '--check-players'], env, { timeoutMs: 180_000 });
    expect(v.code, v.stdout + v.stderr).toBe(1);
    expect(v.stdout).toContain('PLAYER NOT FOUND on lines 51, 301, 556');
    // The counts agree: none was answered before this first run, and it ran the 600.
    expect(v.stdout).toContain('600 players to check (0 answered before)');
    expect(v.stdout).toMatch(/^\s*ran 600 checks$/m);
    expect(v.stdout).not.toContain('OK: ready to submit');
    expect(v.stdout).toMatch(/^\s*2\s+[A-Z][a-z]+[A-Z][a-z]+\d+\s*$/m);
    const json = JSON.parse((await runCli(['validate', file, '--json'], env, { timeoutMs: 120_000 })).stdout);
    expect(json.playerChecks.notFoundLines).toEqual([51, 301, 556]);
    expect(json.playerChecks.rows).toHaveLength(600);
    expect(json.validRows).toBe(597);
    expect(checkCalls(sb)).toBe(600);
    expect(sb.admin.ledger().orders).toHaveLength(0);
    expect(sb.admin.ledger().entries.filter((e) => e.kind === 'check')).toHaveLength(600);

    // It runs: the answers kept by validate decide; no new check; no order for the three.
    home.drop('day1.csv', csv([['pid', 'userId'], ...ids.map((u) => ['PUBG-60', u])]));
    const r = await runCli(['daemon', '--once'], env, { timeoutMs: 240_000 });
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    expect(checkCalls(sb)).toBe(600);
    const orders = sb.admin.ledger().orders;
    expect(orders).toHaveLength(597);
    for (const t of typos) expect(orders.filter((o) => o.userId === t)).toHaveLength(0);
    const rows = readResult(home, 'day1');
    expect(rows.filter((x) => x.status === 'completed')).toHaveLength(597);
    const held = rows.filter((x) => x.status === 'invalid');
    expect(held.map((x) => x.userId)).toEqual(typos);
    for (const h of held) {
      expect(h.playerName).toBe('not found');
      expect(h.error).toMatch(/player not found: .*nothing was sent and nothing was charged.*sendWithoutCheck/);
    }
    expect(rows[0]!.playerName).toMatch(/^[A-Z][a-z]+[A-Z][a-z]+\d+$/);
    expect(readSummary(home, 'day1').playerChecks).toEqual({ calls: 0, costUsd: 0, inDoubt: 0, inDoubtUsd: 0, notFoundRows: 3 });

    // A second file, the same players (another pack: not a repeat): no check call at all.
    home.drop('day2.csv', csv([['pid', 'userId'], ...ids.slice(0, 100).map((u) => ['PUBG-325', u])]));
    const r2 = await runCli(['daemon', '--once'], env, { timeoutMs: 240_000 });
    expect(r2.code, r2.stderr).toBe(0);
    expect(checkCalls(sb)).toBe(600);
    const rows2 = readResult(home, 'day2');
    expect(rows2.filter((x) => x.status === 'invalid').map((x) => x.userId)).toEqual([typos[0]]);
    expect(rows2[0]!.playerName).toBe(rows[0]!.playerName);
  }, 600_000);

  it('the daemon checks by itself before sending, charged by the tariff; a row marked sendWithoutCheck is sent unchecked', async () => {
    const home = tempHome('topup-players-daemon-');
    const sb = await inProcessSandbox({ ...FAST, players: { unknown: ['5200000003'], checkPriceUsd: 0.01 } });
    const env = cliEnv(home, sb, ENV);
    const rows = Array.from({ length: 20 }, (_, i) => ['PUBG-60', String(5200000000 + i), '']);
    rows[5] = ['PUBG-60', '5200000003', 'yes']; // the same unknown player, bought anyway on purpose
    home.drop('mixed.csv', csv([['pid', 'userId', 'sendWithoutCheck'], ...rows]));
    const r = await runCli(['daemon', '--once'], env, { timeoutMs: 240_000 });
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(0);
    const out = readResult(home, 'mixed');
    expect(out[3]).toMatchObject({ status: 'invalid', playerName: 'not found' });
    expect(out[5]).toMatchObject({ status: 'completed', playerName: '' });
    expect(out.filter((x) => x.status === 'completed')).toHaveLength(19);
    // 19 distinct players checked (line 7's row was not), each once, each charged 0.01 by the sandbox.
    expect(checkCalls(sb)).toBe(19);
    const charged = sb.admin.ledger().entries.filter((e) => e.kind === 'check');
    expect(charged).toHaveLength(19);
    expect(charged.every((e) => /^-CHK-PUBG-[0-9a-f]{16}$/.test(e.trxid!) && e.orderId === null)).toBe(true);
    expect(readSummary(home, 'mixed').playerChecks).toEqual({ calls: 19, costUsd: 0.19, inDoubt: 0, inDoubtUsd: 0, notFoundRows: 1 });
    expect(sb.admin.ledger().orders.filter((o) => o.userId === '5200000003')).toHaveLength(1);
  }, 300_000);
});
