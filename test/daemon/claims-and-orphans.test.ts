/**
 * The bytes a batch orders from, and batches the database lost, with the real CLI killed by
 * SIGKILL at chosen instants (src/kernel/crash-points.ts) and judged by the sandbox's ledger:
 *  - a submitted file edited between its claim and its load is ordered from the bytes hashed;
 *  - a file whose bytes changed in jobs/ after its claim is refused whole;
 *  - a claim cut short before its move never takes a different file of the same name;
 *  - a deleted database: the unfinished batch in jobs/ is claimed again and finished, nothing
 *    charged twice; finished, submitted and --again batches are reported, not ordered.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync, appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, listOutbox, readResult, runCli, tempHome, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { judge, type Ledger } from '../../torture/lib.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

let home: TempHome;
let sb: RunningSandbox;
releaseAfterEach();

const rows = (prefix: string, n: number): string => csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => ['PUBG-60', `${prefix}${String(i).padStart(4, '0')}`])]);
const orderedUsers = (): string[] => sb.admin.ledger().orders.map((o) => String(o.userId)).sort();
const batchDirs = (h: TempHome): string[] => readdirSync(h.jobs).filter((d) => /^b\d{6}-[0-9a-f]{6}$/.test(d));
const deleteDatabase = (h: TempHome): void => {
  for (const f of ['topup.db', 'topup.db-wal', 'topup.db-shm']) rmSync(join(h.jobs, f), { force: true });
};

/**
 * `topup submit` of a 3-row file (users `<prefix>0000` to `<prefix>0002`) killed at `crashAt`, nothing ordered;
 * `whileKilled` looks at the home; the user then rewrites their file with 5 other rows, and
 * `daemon --once` finishes. Only the 3 claimed rows may be ordered.
 */
async function submitKilledThenEditedAndRun(crashAt: string, prefix: string, whileKilled?: () => void): Promise<{ file: string }> {
  home = tempHome();
  sb = await inProcessSandbox();
  const env = cliEnv(home, sb);
  const file = join(home.dir, 'mine.csv');
  writeFileSync(file, rows(prefix, 3));
  const killed = await runCli(['submit', file], { ...env, TOPUP_CRASH_AT: crashAt });
  expect(killed.signal).toBe('SIGKILL');
  expect(sb.admin.ledger().orders).toHaveLength(0);
  whileKilled?.();
  writeFileSync(file, rows('99000', 5)); // the user edits their file while the batch waits
  const r = await runCli(['daemon', '--once'], env);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(orderedUsers()).toEqual([0, 1, 2].map((i) => `${prefix}000${i}`));
  return { file };
}

describe('a batch orders from the bytes it hashed', () => {
  it('a submitted file edited (then deleted) after its claim is still ordered from the bytes claimed', async () => {
    const { file } = await submitKilledThenEditedAndRun('claimed:1', '51000');
    expect(readResult(home, 'mine').map((x) => x.userId)).toEqual(['510000000', '510000001', '510000002']);
    rmSync(file);
    expect(readdirSync(join(home.jobs, batchDirs(home)[0]!))).toContain('mine.csv'); // the copy the batch was read from
  });

  it('a file whose bytes changed in jobs/ after its claim is refused whole: nothing ordered, the way out explained', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('x.csv', rows('53000', 2));
    expect((await runCli(['daemon', '--once'], { ...env, TOPUP_CRASH_AT: 'claimed:1' })).signal).toBe('SIGKILL');
    const [id] = batchDirs(home);
    appendFileSync(join(home.jobs, id!, 'x.csv'), 'PUBG-60,5300000099\n');
    const r = await runCli(['daemon', '--once'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(0);
    expect(readFileSync(join(home.outbox, 'x.error.txt'), 'utf8')).toMatch(/changed after it was claimed[\s\S]*Nothing was sent and nothing was charged[\s\S]*drop the file into the inbox again/);
  });

  it('a claim cut short before its move does not take a different file dropped under the same name: that one is a batch of its own', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    home.drop('x.csv', rows('54000', 2));
    expect((await runCli(['daemon', '--once'], { ...env, TOPUP_CRASH_AT: 'claim-committed:1' })).signal).toBe('SIGKILL');
    expect(existsSync(join(home.inbox, 'x.csv'))).toBe(true); // killed between the record and the move
    home.drop('x.csv', rows('55000', 3)); // replaced by a different file of the same name
    const r = await runCli(['daemon', '--once'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(orderedUsers()).toEqual(['550000000', '550000001', '550000002']);
    expect(readFileSync(join(home.outbox, 'x.error.txt'), 'utf8')).toMatch(/replaced in the inbox by a different file/);
    const own = listOutbox(home).find((f) => /^x\.b\d{6}-[0-9a-f]{6}\.result\.csv$/.test(f))!;
    expect(readResult(home, own.replace(/\.result\.csv$/, '')).map((x) => x.status)).toEqual(['completed', 'completed', 'completed']);
  });

  it('a submit killed between its claim and its move: the daemon goes on from its copy; the file the user edits meanwhile is not read', async () => {
    await submitKilledThenEditedAndRun('claim-committed:1', '57000', () => {
      expect(readdirSync(home.jobs).filter((d) => d.startsWith('.submit-'))).toHaveLength(1); // its copy, not moved yet
    });
    expect(readResult(home, 'mine').map((x) => x.status)).toEqual(['completed', 'completed', 'completed']);
    expect(readdirSync(home.jobs).filter((d) => d.startsWith('.submit-'))).toEqual([]);
    expect(existsSync(join(home.outbox, 'mine.error.txt'))).toBe(false);
  });
});

describe('a deleted database', () => {
  it('the unfinished batch in jobs/ is claimed again and finished: every row once, nothing charged twice', async () => {
    home = tempHome();
    sb = await inProcessSandbox({ fulfilment: { processingShare: 0.5, processingMs: [100, 300], failShare: 0 } });
    const env = cliEnv(home, sb);
    home.drop('lost.csv', rows('56000', 10));
    expect((await runCli(['daemon', '--once'], { ...env, TOPUP_CRASH_AT: 'response-received:4' })).signal).toBe('SIGKILL');
    const placed = sb.admin.ledger().orders.length;
    expect(placed).toBeGreaterThanOrEqual(4);
    deleteDatabase(home);
    const r = await runCli(['daemon', '--once'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/jobs\/ held a batch the database does not know .*claimed again/);
    const v = judge(join(home.outbox, 'lost.result.csv'), 10, sb.admin.ledger() as unknown as Ledger);
    expect(v).toMatchObject({ resultRows: 10, doubleCharges: 0, rowsWithoutResult: 0, chargesWithoutResult: 0, mismatches: 0, wronglyNotCharged: 0 });
    expect(sb.admin.ledger().orders).toHaveLength(10);
  });

  it('finished, submitted and --again batches are reported with what to do, never ordered by themselves', async () => {
    home = tempHome();
    sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const done = join(home.dir, 'done.csv');
    writeFileSync(done, rows('57000', 2));
    expect((await runCli(['submit', done], env)).code).toBe(0);
    const again = await runCli(['submit', '--again', done], { ...env, TOPUP_CRASH_AT: 'claimed:1' });
    expect(again.signal).toBe('SIGKILL');
    const other = join(home.dir, 'other.csv');
    writeFileSync(other, rows('58000', 2));
    expect((await runCli(['submit', other], { ...env, TOPUP_CRASH_AT: 'claimed:1' })).signal).toBe('SIGKILL');
    expect(batchDirs(home)).toHaveLength(3);
    deleteDatabase(home);

    const doc = await runCli(['doctor', '--json'], env);
    const checks = JSON.parse(doc.stdout).checks;
    expect(checks.find((c: any) => c.name === 'database size')).toMatchObject({ ok: true, detail: expect.stringMatching(/^database \d+\.\d MB, write-ahead log/) });
    const check = checks.find((c: any) => c.name === 'batch folders');
    expect(check).toMatchObject({ ok: false, fatal: false });
    expect(check.detail).toMatch(/3 batch folder\(s\) in jobs\/ the database does not know .*; 1 of them finished/);
    expect(check.detail).toMatch(/--again batch whose trxids came from the lost database record/);
    expect(check.detail).toMatch(/to finish it: topup submit \S+other\.csv/);

    const r = await runCli(['daemon', '--once'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(2); // only the first submit's
    expect(r.stdout).toMatch(/1 batch folder\(s\) the database does not know whose batches finished/);
    expect(r.stdout.match(/jobs\/ holds a batch folder the database does not know/g)).toHaveLength(2);
  });
});
