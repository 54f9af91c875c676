import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, readSummary, runCli, tempHome, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

let home: TempHome;
let sb: RunningSandbox;
releaseAfterEach();

describe('topup daemon --once', () => {
  it('takes a file from the inbox, places every valid row, and writes one result row per input row', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    home.drop('orders.csv', csv([['pid', 'userId', 'note'], ['PUBG-60', '5123456789', 'a'], ['FFMENA-100', '12', 'bad id'], ['PUBG-325', '5123456789', 'c']]));
    const r = await runCli(['daemon', '--once'], cliEnv(home, sb));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const rows = readResult(home, 'orders');
    expect(rows.map((x) => x.status)).toEqual(['completed', 'invalid', 'completed']);
    expect(rows[1]!.error).toMatch(/userId/);
    const s = readSummary(home, 'orders');
    expect(s.counts.completed).toBe(2);
    expect(s.spentUsd).toBeCloseTo(0.92 + 4.55, 2);
    const ledger = sb.admin.ledger();
    expect(ledger.orders).toHaveLength(2);
  });
});
