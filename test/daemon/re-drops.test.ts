/**
 * Issue 14 (money): an edited re-drop of a finished file (one row added, a column added) bought
 * every earlier row again, and `validate` said "OK: ready to submit". Now a row without its own
 * trxid repeating a purchase placed within TOPUP_REPEAT_WINDOW is skipped, named, and bought again
 * only on purpose (topup retry BATCH --repeats). The real CLI, the real sandbox and its ledger.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { registerIdentity } from '../../src/kernel/identity.js';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';

releaseAfterEach();

const FIRST = [['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-325', '5123456790'], ['PUBG-60', '5123456791']];

describe.concurrent('edited re-drops are never bought twice', () => {
  it('an edited copy (a row and a column added) buys only the new row; validate says so first; retry --repeats buys the rest on purpose', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('shop.csv', csv(FIRST));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(3);

    // The reseller opens it, adds a note column and a fourth order, saves under another name.
    const edited = csv([
      ['pid', 'userId', 'note'],
      ['PUBG-60', '5123456789', 'again?'],
      ['PUBG-325', ' 5123456790 ', ''],
      ['PUBG-60', '5123456791', ''],
      ['PUBG-60', '5123456799', 'new customer'],
    ]);
    const path = join(home.dir, 'shop-v2.csv');
    writeFileSync(path, edited);
    const v = await runCli(['validate', path, '--json'], env);
    expect(v.code).toBe(1);
    const quote = JSON.parse(v.stdout);
    expect(quote).toMatchObject({ validRows: 1, invalidRows: 3 });
    expect(quote.problems.map((p: { line: number }) => p.line)).toEqual([2, 3, 4]);
    expect(quote.problems[0].problem).toMatch(/^repeats line 2 of batch b\S+ \(shop\.csv; order \S+, completed, .*\): not bought again/);

    home.drop('shop-v2.csv', edited);
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(4);
    const rows = readResult(home, 'shop-v2');
    expect(rows.map((r) => r.status)).toEqual(['skipped', 'skipped', 'skipped', 'completed']);
    expect(rows[1]!.error).toMatch(/repeats line 3 of batch .* To buy it again on purpose: topup retry (b\S+) --repeats/);
    const batchId = readSummary(home, 'shop-v2').batchId as string;

    const retry = await runCli(['retry', batchId, '--repeats', '--run', '--json'], env);
    expect(retry.code, retry.stderr).toBe(0);
    expect(JSON.parse(retry.stdout)).toMatchObject({ rows: 3, counts: { completed: 3 } });
    expect(sb.admin.ledger().orders).toHaveLength(7);
  }));

  it('rows with their own trxid keep the trxid rule; refused and refunded rows may be dropped again; --again orders everything', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ fulfilment: { failShare: 0 } });
    const env = cliEnv(home, sb);
    home.drop('a.csv', csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456789', 'SHOP-1'], ['PUBG-60', '5123456780', ''], ['NOPE-1', '5123456781', '']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2);
    // Same purchases again, now with their own new trxids: the reseller's own numbering decides.
    home.drop('b.csv', csv([['pid', 'userId', 'trxid'], ['PUBG-60', '5123456789', 'SHOP-2'], ['PUBG-60', '5123456780', 'SHOP-3']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'b').map((r) => r.status)).toEqual(['completed', 'completed']);
    expect(sb.admin.ledger().orders).toHaveLength(4);
    // --again: ordered on purpose, nothing skipped as a repeat.
    const file = join(home.dir, 'c.csv');
    writeFileSync(file, csv([['pid', 'userId'], ['PUBG-60', '5123456780']]));
    const again = await runCli(['submit', file, '--again', '--json'], env);
    expect(JSON.parse(again.stdout).counts).toMatchObject({ completed: 1, skipped: 0 });
    const plain = await runCli(['submit', join(home.dir, 'c.csv'), '--json'], env);
    expect(JSON.parse(plain.stdout).counts).toMatchObject({ skipped: 1 });
  }));

  it('a cancelled and refunded row dropped again is bought again (that is how a reseller tries again)', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox({ fulfilment: { failShare: 1 } });
    const env = cliEnv(home, sb);
    home.drop('x.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'x')[0]).toMatchObject({ status: 'cancelled', refunded: 'true' });
    // The sandbox fails orders only for the player id, which a re-drop does not buy again (one rule
    // with topup retry: test/daemon/repeats-and-cancels.test.ts). The supplier's reason here is another.
    const db = new Database(join(home.jobs, 'topup.db'));
    registerIdentity(db); // a connection that writes rows needs the trxid fold its indexes use
    db.prepare(`UPDATE rows SET error = 'PROVIDER ERROR' WHERE state = 'cancelled'`).run();
    db.close();
    sb.admin.setFulfilment({ failShare: 0 });
    home.drop('x2.csv', csv([['pid', 'userId', 'n'], ['PUBG-60', '5123456789', '1']]));
    expect((await runCli(['daemon', '--once'], env)).code).toBe(0);
    expect(readResult(home, 'x2')[0]!.status).toBe('completed');
  }));
});
