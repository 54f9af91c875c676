/**
 * A new-user trial read "All 1 rows are valid", "1 rows of …", "(lines 3)": a count of one reads
 * in the singular. `topup validate` is the real CLI against a real in-process sandbox; the
 * retry, run-covered and console texts are the functions that build them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, releaseAll, runCli, tempHome } from '../e2e/harness.js';
import { linesLabel, counted } from '../../src/kernel/counts.js';
import { retryCreatedText } from '../../src/commands/retry.js';

afterAll(releaseAll);

describe('counts of one read in the singular', () => {
  it('topup validate of a one-row file: "All 1 row is valid."', async () => {
    const home = tempHome('topup-singular-');
    const env = cliEnv(home, await inProcessSandbox());
    const one = join(home.dir, 'one.csv');
    writeFileSync(one, csv([['pid', 'userId'], ['PUBG-60', '5123456789']]));
    const r = await runCli(['validate', one], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('All 1 row is valid.');
    expect(r.stdout).not.toContain('1 rows');
    const two = join(home.dir, 'two.csv');
    writeFileSync(two, csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-60', '5123456788']]));
    expect((await runCli(['validate', two], env)).stdout).toContain('All 2 rows are valid.');
  }, 90_000);

  it('counted and linesLabel', () => {
    expect([counted(0, 'row'), counted(1, 'row'), counted(2, 'row'), counted(1, 'game')]).toEqual(['0 rows', '1 row', '2 rows', '1 game']);
    expect([linesLabel([3]), linesLabel([3, 5]), linesLabel([2, 3], '2-3')]).toEqual(['line 3', 'lines 3, 5', 'lines 2-3']);
  });

  it('topup retry: "1 row of B (line 3)", and the wait the daemon really has', () => {
    const one = retryCreatedText({ id: 'b2', jobFile: 'jobs/b2.csv' }, 'b1', 1, [3], true);
    expect(one).toContain('new batch b2: 1 row of b1 (line 3) with fresh trxids');
    // An idle daemon looks for batches it does not hold every 30 s (engine/stages/leases.ts).
    expect(one).toContain('The daemon running on this home starts it within 30 s.');
    expect(one).not.toContain('within seconds');
    expect(retryCreatedText({ id: 'b2', jobFile: 'jobs/b2.csv' }, 'b1', 2, [3, 4], false)).toContain('2 rows of b1 (lines 3, 4)');
  });
});
