/**
 * Issue 31's adversarial review, attack 4: two processes check the same players at once — two
 * `topup validate --check-players` runs of one file, and a daemon loading the file while a
 * validate checks it — while the supplier is slow to answer (it holds each answer 3 s) and
 * charges each check. Each process used to send its own check of every player: each player was
 * charged twice. Now a check is recorded `sent` before it leaves, one per player for every process
 * on the store (a unique index): the second process waits for the first one's answer, and the
 * cache is the same for both. Real CLI processes, real SQLite, real sandbox.
 */
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const PLAYERS = ['5300000701', '5300000702', '5300000703'];

describe('two processes checking the same players at once', () => {
  it('two validates: each player is checked (and charged) once, both see every name', async () => {
    const home = tempHome('topup-players-two-');
    const sb = await inProcessSandbox({ balanceUsd: 100, players: { checkPriceUsd: 0.02, script: PLAYERS.map(() => ({ holdMs: 3000 })) } });
    const env = cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_PRICE_USD: '0.02' });
    const file = join(home.dir, 'same.csv');
    writeFileSync(file, csv([['pid', 'userId'], ...PLAYERS.map((p) => ['PUBG-60', p])]));
    const [a, b] = await Promise.all([runCli(['validate', '--check-players', '--json', file], env), runCli(['validate', '--check-players', '--json', file], env)]);
    const qa = JSON.parse(a.stdout).playerChecks;
    const qb = JSON.parse(b.stdout).playerChecks;
    const names = (q: { rows: { line: number; playerName?: string | null }[] }) => q.rows.map((r) => r.playerName);
    expect(names(qa).every((n: unknown) => typeof n === 'string' && n !== '')).toBe(true);
    expect(names(qb)).toEqual(names(qa));
    const checks = sb.admin.calls().filter((c) => c.route === 'POST /pubgvvfy');
    expect(checks).toHaveLength(PLAYERS.length);
    expect(sb.admin.ledger().entries.filter((e) => e.kind === 'check')).toHaveLength(PLAYERS.length);
    const db = new Database(join(home.jobs, 'topup.db'), { readonly: true });
    expect((db.prepare('SELECT count(*) AS n FROM player_check_calls').get() as { n: number }).n).toBe(PLAYERS.length);
    expect((db.prepare('SELECT count(*) AS n FROM player_checks').get() as { n: number }).n).toBe(PLAYERS.length);
    db.close();
  }, 120_000);

  it('a daemon loading the file while a validate checks it: one check per player, the batch runs', async () => {
    const home = tempHome('topup-players-two-d-');
    const sb = await inProcessSandbox({ balanceUsd: 100, players: { checkPriceUsd: 0.02, script: PLAYERS.map(() => ({ holdMs: 4000 })) } });
    const env = cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all', TOPUP_PLAYER_CHECK_PRICE_USD: '0.02' });
    const rows = csv([['pid', 'userId'], ...PLAYERS.map((p) => ['PUBG-60', p])]);
    const file = join(home.dir, 'same.csv');
    writeFileSync(file, rows);
    const d = startDaemon(env);
    home.drop('same.csv', rows);
    const v = await runCli(['validate', '--check-players', '--json', file], env);
    expect(v.code, v.stderr).toBeLessThanOrEqual(1);
    await waitForResult(home, 'same', 90_000);
    expect(await d.stop()).toBe(0);
    expect(readResult(home, 'same').map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(sb.admin.calls().filter((c) => c.route === 'POST /pubgvvfy')).toHaveLength(PLAYERS.length);
  }, 150_000);
});
