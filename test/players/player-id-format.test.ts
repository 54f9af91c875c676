/**
 * New-user trial, issue 30 follow-up item 2: a Mobile Legends `userId` such as `bad!` was accepted
 * by validate and bought. Mobile Legends user and zone ids and PUBG Mobile player ids are digits
 * (the supplier's player checks take them as such: /work/shared/real-supplier.md `playerId "5…"`;
 * the spec's zone is numeric); any other id is an invalid row naming the field and the line, in a
 * CSV, in a workbook, and at `POST /api/v1/orders` (422 naming the field). Nothing is bought for it.
 * Real parts: the CLI as a child process, the in-process sandbox, a daemon serving the order API.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { csv, readResult, runCli } from '../e2e/harness.js';
import { shop, start } from '../e2e/daemon.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

const ROWS: string[][] = [
  ['pid', 'userId', 'zoneId', 'trxid'],
  ['ML-86', 'bad!', '2005', 'FMT-1'], // line 2: not digits
  ['PUBG-60', '51234x789', '', 'FMT-2'], // line 3: not digits
  ['ML-86', '777888999', '2005', 'FMT-3'],
  ['PUBG-60', '5123456789', '', 'FMT-4'],
];

function expectProblems(out: string): void {
  // validate's table: line, column, problem.
  expect(out).toMatch(/^\s*2\s+userId\s+a Mobile Legends id is digits only \(got "bad!"\)$/m);
  expect(out).toMatch(/^\s*3\s+userId\s+a PUBG Mobile id is digits only \(got "51234x789"\)$/m);
  expect(out).not.toMatch(/^\s*[45]\s+userId/m);
}

describe('player ids per game', () => {
  it('a Mobile Legends or PUBG id that is not digits is an invalid row in a CSV and a workbook, and is never bought', async () => {
    const { home, sb, env } = await shop({ TOPUP_ORDER_API_TOKEN: '', TOPUP_CONSOLE: 'off' }, {}, 'topup-idfmt-');
    const file = join(home.dir, 'ids.csv');
    writeFileSync(file, csv(ROWS));
    const v = await runCli(['validate', file], env);
    expect(v.code, v.stderr).not.toBe(0);
    expectProblems(v.stdout + v.stderr);

    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('orders');
    for (const r of ROWS) ws.addRow(r);
    const book = join(home.dir, 'ids.xlsx');
    await wb.xlsx.writeFile(book);
    const vb = await runCli(['validate', book], env);
    expect(vb.code, vb.stderr).not.toBe(0);
    expectProblems(vb.stdout + vb.stderr);

    home.drop('ids.csv', csv(ROWS));
    expect((await runCli(['daemon', '--once'], env)).code).toBeGreaterThanOrEqual(0);
    const result = readResult(home, 'ids');
    expect(result.map((r) => r.status)).toEqual(['invalid', 'invalid', 'completed', 'completed']);
    expect(result[0]!.error).toMatch(/userId/);
    expect(sb.admin.ledger().orders.map((o) => o.trxid).sort()).toEqual(['FMT-3', 'FMT-4']);
  }, 180_000);

  it('POST /api/v1/orders answers 422 naming userId (and zoneId) for an id that is not digits', async () => {
    const { sb, env } = await shop({}, {}, 'topup-idfmt-api-');
    const { daemon, call } = await start(env, { started: true });
    const ml = await call('POST', '/api/v1/orders', { body: { pid: 'ML-86', userId: 'bad!', zoneId: '2005', trxid: 'API-FMT-1' } });
    expect(ml.status, ml.text).toBe(422);
    expect(ml.text).toContain('userId');
    const zone = await call('POST', '/api/v1/orders', { body: { pid: 'ML-86', userId: '777888999', zoneId: '20a5', trxid: 'API-FMT-2' } });
    expect(zone.status, zone.text).toBe(422);
    expect(zone.text).toContain('zoneId');
    const pubg = await call('POST', '/api/v1/orders', { body: { pid: 'PUBG-60', userId: 'player-one', trxid: 'API-FMT-3' } });
    expect(pubg.status, pubg.text).toBe(422);
    expect(pubg.text).toContain('userId');
    // A player check of such an id is refused before any call (it could only spend the rate budget).
    const tok = await runCli(['token', 'create', '--scope', 'players:check', '--name', 'checkout', '--json'], env);
    expect(tok.code, tok.stderr).toBe(0);
    const checker = JSON.parse(tok.stdout).token as string;
    const chk = await call('POST', '/api/v1/players/check', { token: checker, body: { slug: 'mobilelegends', userId: 'bad!', zoneId: '2005' } });
    expect(chk.status, chk.text).toBe(422);
    expect(chk.text).toContain('userId');
    expect(sb.admin.calls().filter((c) => c.route === 'POST /mlvfy')).toHaveLength(0);
    const ok = await call('POST', '/api/v1/orders', { body: { pid: 'ML-86', userId: '777888999', zoneId: '2005', trxid: 'API-FMT-4' } });
    expect(ok.status, ok.text).toBe(202);
    await daemon.stop();
    const bought = sb.admin.ledger().orders.map((o) => String(o.trxid));
    for (const t of ['API-FMT-1', 'API-FMT-2', 'API-FMT-3']) expect(bought).not.toContain(t);
  }, 180_000);
});
