/**
 * New-user trial, issue 30 follow-up item 3: every `topup template` printed the example trxid
 * `SHOP-1001`, so a reseller who copied the rows of two templates into one file (or dropped two
 * files made from them) had one purchase's id twice: the second row is a repeat, never bought.
 * Each template now has its own example trxid, and says the trxid must be unique per purchase.
 * The real CLI against the in-process sandbox.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('topup template: an example trxid of its own', () => {
  it('two templates (and the same template twice) never share an example trxid; copied together they validate; the help and header say unique per purchase', async () => {
    const home = tempHome('topup-template-');
    const env = cliEnv(home, await inProcessSandbox());
    const runs = [['pubg'], ['mobilelegends'], ['pubg', '--pid', 'PUBG-325'], ['pubg']];
    const outs = [];
    for (const args of runs) {
      const r = await runCli(['template', ...args], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/unique per purchase/);
      outs.push(r.stdout.trim().split('\n'));
    }
    const trxids = outs.map((lines) => {
      const header = lines[0]!.split(',');
      return lines[1]!.split(',')[header.indexOf('trxid')]!;
    });
    expect(trxids.every((t) => t !== '' && t !== 'SHOP-1001'), trxids.join(' ')).toBe(true);
    expect(new Set(trxids).size, trxids.join(' ')).toBe(trxids.length);

    // The two PUBG templates' rows in one file: two purchases, not one repeated.
    const file = join(home.dir, 'both.csv');
    writeFileSync(file, `${outs[0]![0]}\n${outs[0]![1]}\n${outs[2]![1]}\n`);
    const v = await runCli(['validate', file, '--json'], env);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ rows: 2, validRows: 2, invalidRows: 0, problems: [] });

    const help = await runCli(['template', '--help'], env);
    expect(help.stdout).toMatch(/trxid[^\n]*unique per purchase/);
  }, 120_000);
});
