/**
 * Issue 31's adversarial review, attack 5: the odd answers a supplier gives a player check, each
 * through the real client against the real sandbox on 127.0.0.1 (its `script` answers exactly as
 * told), then names that try to be formulas, terminal sequences, extra lines, or very long,
 * through a real daemon's result file and a real `topup validate`.
 *
 * Decided (docs/player-checks.md, "Odd answers"): only an answer that SAYS the player does not
 * exist blocks a row; only one that says success or names the player lets it be sent; everything
 * else holds the row (the batch waits) and says what the supplier said.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTrxid } from '../../src/kernel/identity.js';
import { NAME_MAX_LENGTH } from '../../src/api/player-check.js';
import { setup } from '../api/helpers.js';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, waitForResult } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

let n = 0;
const tx = () => checkTrxid('pubg', (0xabc000 + ++n).toString(16).padStart(16, '0'));

const LONG = 'Ω'.repeat(500);
const CASES: { what: string; status: number; body: Record<string, unknown> | string; outcome: string; charged: string; name?: string | undefined }[] = [
  { what: '200 with an HTML page', status: 200, body: '<html><body>Welcome</body></html>', outcome: 'in-doubt', charged: 'maybe' },
  { what: 'success:true without a name', status: 200, body: { success: true }, outcome: 'found', charged: 'yes', name: undefined },
  { what: 'success:true with an empty name', status: 200, body: { success: true, playerName: '   ' }, outcome: 'found', charged: 'yes', name: undefined },
  { what: 'name instead of playerName', status: 200, body: { success: true, name: 'Kiki' }, outcome: 'found', charged: 'yes', name: 'Kiki' },
  { what: 'playerName beside name', status: 200, body: { success: true, playerName: 'Real', name: 'Other' }, outcome: 'found', charged: 'yes', name: 'Real' },
  { what: 'a name with a terminal sequence and new lines', status: 200, body: { success: true, playerName: '\u001b[2J\u001b[31mBob\r\nPLAYER NOT FOUND on lines 1\u202e' }, outcome: 'found', charged: 'yes', name: '[2J [31mBob PLAYER NOT FOUND on lines 1' },
  { what: 'a very long name', status: 200, body: { success: true, playerName: LONG }, outcome: 'found', charged: 'yes', name: `${'Ω'.repeat(NAME_MAX_LENGTH - 1)}…` },
  { what: 'a 200 whose name says nothing and no success', status: 200, body: { ok: 1 }, outcome: 'in-doubt', charged: 'maybe' },
  { what: '404 with a not-found body', status: 404, body: { success: false, error: 'Player not found' }, outcome: 'not-found', charged: 'yes' },
  { what: '404 page without a body naming the player', status: 404, body: '<h1>Not Found</h1>', outcome: 'refused', charged: 'no' },
  { what: '404 JSON that names no player', status: 404, body: { error: 'Cannot POST /pubgvvfy' }, outcome: 'refused', charged: 'no' },
  { what: '200 success:false in unknown words', status: 200, body: { success: false, error: 'Pemain tidak ada' }, outcome: 'refused', charged: 'maybe' },
  { what: '422 in unknown words', status: 422, body: { success: false, error: 'Zone mismatch' }, outcome: 'refused', charged: 'maybe' },
  { what: '200 success:false saying not found in words', status: 200, body: { success: false, error: 'User ID not found' }, outcome: 'not-found', charged: 'yes' },
  { what: 'a 502 HTML page', status: 502, body: '<html>Bad gateway</html>', outcome: 'in-doubt', charged: 'maybe' },
  { what: 'a 401 of the key', status: 401, body: { success: false, error: 'INVALID API KEY' }, outcome: 'refused', charged: 'no' },
  { what: 'a refusal for balance', status: 400, body: { success: false, code: 'INSUFFICIENT_BALANCE', error: 'INSUFFICIENT BALANCE' }, outcome: 'refused', charged: 'no' },
  { what: 'a documented maintenance', status: 503, body: { success: false, code: 'MAINTENANCE', error: 'MAINTENANCE' }, outcome: 'in-doubt', charged: 'no' },
  { what: 'a 503 in words', status: 503, body: { success: false, error: 'Service Unavailable' }, outcome: 'in-doubt', charged: 'maybe' },
  { what: 'a 429', status: 429, body: { success: false, error: 'TOO MANY REQUESTS' }, outcome: 'rate-limited', charged: 'no' },
];

describe('odd answers to a player check, read one way each', () => {
  it('found only when the supplier says so, not found only when it says that, the rest held; what may have been charged', async () => {
    const { api } = await setup({ players: { script: CASES.map((c) => ({ status: c.status, body: c.body, ...(c.status === 429 ? { headers: { 'retry-after': '0' } } : {}) })) } });
    for (const c of CASES) {
      const r = await api.checkPlayer({ kind: 'pubg', playerId: '5300000501', trxid: tx() });
      expect({ what: c.what, outcome: r.outcome, charged: r.charged, name: r.name }).toEqual({ what: c.what, outcome: c.outcome, charged: c.charged, name: c.name });
    }
  });

  it('names that try to be formulas or terminal text are one safe line in validate, and formula-safe in the result file', async () => {
    const home = tempHome('topup-players-odd-');
    const names: Record<string, string> = {
      '5300000601': '=HYPERLINK("http://evil.example","click")',
      '5300000602': '+1+1',
      '5300000603': '@SUM(A1)',
      '5300000604': "-2+3\u001b]0;owned\u0007\nline two",
    };
    const sb = await inProcessSandbox({ players: { script: Object.entries(names).map(([player, playerName]) => ({ player, status: 200, body: { success: true, playerName } })) } });
    const env = cliEnv(home, sb, { TOPUP_PLAYER_CHECKS: 'all' });
    const rows = [['pid', 'userId'], ...Object.keys(names).map((id) => ['PUBG-60', id])];
    const file = join(home.dir, 'odd.csv');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, csv(rows));
    const v = await runCli(['validate', '--check-players', file], env);
    expect(v.code, v.stderr).toBe(0);
    // No control character of the supplier's reaches the terminal; each name is on its own row of the table.
    expect(v.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(v.stdout).not.toMatch(/^line two/m);
    expect(v.stdout).toContain('-2+3 ]0;owned line two');
    const d = startDaemon(env);
    home.drop('odd.csv', csv(rows));
    await waitForResult(home, 'odd', 90_000);
    expect(await d.stop()).toBe(0);
    const got = readResult(home, 'odd');
    expect(got.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    const text = readFileSync(join(home.outbox, 'odd.result.csv'), 'utf8');
    // Every name that a spreadsheet would run starts with the text mark.
    for (const r of got) expect(r.playerName, r.userId).toMatch(/^'[=+@-]/);
    expect(text).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
  }, 180_000);
});
