/**
 * Issue 30's leftovers (the last trial): two `topup review resolve` of the same batch a moment
 * apart wrote `<name>.v2.result.csv` and `<name>.v3.result.csv`, and the reseller had to work out
 * which one was current. Now the results after review decisions go to one file,
 * `<name>.reviewed.result.csv` (and `.reviewed.summary.json`), rewritten whole at each decision;
 * its summary's `version` counts the decisions. The first result, handed out when the batch
 * ended, is never changed: byte for byte the same after both decisions (docs/results.md "Later
 * versions").
 *
 * Real parts: the daemon (dist/cli.js, `daemon --once`) against the in-process sandbox answering
 * every send 500 (so both rows go to review: nothing says whether they were charged), then the
 * real CLI's `topup review resolve`, twice.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, parseResult, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

describe('two review decisions a moment apart leave one current result', () => {
  it('resolve, resolve: <name>.result.csv untouched, one <name>.reviewed.result.csv with both decisions, no .v2/.v3', async () => {
    const home = tempHome('topup-resolve-twice-');
    const sb = await inProcessSandbox({ faults: { error5xxBeforeShare: 1 } });
    const env = cliEnv(home, sb, { TOPUP_REVIEW_AFTER_MS: '2000', TOPUP_REQUEST_TIMEOUT_MS: '1000' });
    home.drop('stuck.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456789'], ['PUBG-60', '5123456790']]));
    const run = await runCli(['daemon', '--once'], env, { timeoutMs: 90_000 });
    expect(run.code, run.stdout.slice(-2000)).toBe(0);
    const firstPath = join(home.outbox, 'stuck.result.csv');
    const first = readFileSync(firstPath);
    expect(parseResult(first.toString('utf8')).map((r) => r.status)).toEqual(['review', 'review']);

    const listed = JSON.parse((await runCli(['review', '--json'], env)).stdout) as { batchId: string; line: number }[];
    expect(listed.map((r) => r.line).sort()).toEqual([2, 3]);
    const batch = listed[0]!.batchId;

    const one = await runCli(['review', 'resolve', `${batch}:2`, '--not-charged', '--by', 'ana'], env);
    expect(one.code, one.stderr).toBe(0);
    const two = await runCli(['review', 'resolve', `${batch}:3`, '--not-charged', '--by', 'ana'], env);
    expect(two.code, two.stderr).toBe(0);
    const reviewed = join(home.outbox, 'stuck.reviewed.result.csv');
    expect(one.stdout).toContain(reviewed);
    expect(two.stdout).toContain(reviewed);

    // One current result, at one name; no version files beside it.
    const files = readdirSync(home.outbox).filter((f) => !f.startsWith('.')).sort();
    expect(files.filter((f) => /\.v\d+\./.test(f))).toEqual([]);
    expect(files.filter((f) => f.startsWith('stuck.'))).toEqual(['stuck.result.csv', 'stuck.reviewed.result.csv', 'stuck.reviewed.summary.json', 'stuck.summary.json']);
    expect(parseResult(readFileSync(reviewed, 'utf8')).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    const summary = JSON.parse(readFileSync(join(home.outbox, 'stuck.reviewed.summary.json'), 'utf8')) as { version: number; resultFile: string; review: unknown[]; resolved: { line: number }[] };
    expect(summary).toMatchObject({ version: 3, resultFile: reviewed, review: [] });
    expect(summary.resolved.map((r) => r.line).sort()).toEqual([2, 3]);
    // The file handed out when the batch ended is never written again.
    expect(readFileSync(firstPath).equals(first)).toBe(true);
    expect(JSON.parse(readFileSync(join(home.outbox, 'stuck.summary.json'), 'utf8'))).toMatchObject({ version: 1 });
    // Nothing was bought: both rows were refused with 500s before any order was created.
    expect(sb.admin.ledger().orders).toEqual([]);
  }, 120_000);
});
