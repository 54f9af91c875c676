/**
 * Issue 21, reproduction 2: a copy that pauses is never taken half-written. Real slow writers (a
 * child process writing a CSV line by line, with pauses) into the inbox of a running daemon (the
 * real CLI), at the default settings unless a test says otherwise; each file must end with all
 * 20 rows ordered at the sandbox, in one batch, never a partial batch.
 *
 *  - the writer: keeps the file open, pauses 2.5 s after row 10 (failed before: a 10-row
 *    batch, rows 11–20 written into the claimed copy and never ordered);
 *  - a writer that closes the file after every line (nothing open to see) and pauses up to 10 s:
 *    only the settle window (TOPUP_SETTLE_MS, default 12 s) can hold it;
 *  - a writer that keeps the file open and pauses for longer than the settle window: only the
 *    open-for-writing check (intake/writers.ts) can hold it;
 *  - a writer that writes `x.csv.part` slowly and renames it to `x.csv`: ignored while it is
 *    written, taken soon after the rename (the short window for files renamed in).
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, listOutbox, readResult, runCli, startDaemon, tempHome, waitFor, waitForResult, type DaemonProcess, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';

releaseAfterEach();

/** The header and 20 orders, each for a player of its own (no row repeats another). */
const LINES = ['pid,userId\n', ...Array.from({ length: 20 }, (_, i) => `PUBG-60,51234${String(56700 + i)}\n`)];

interface Plan {
  /** Where the lines are written. */
  path: string;
  /** After how many order rows to pause, and for how long (ms). */
  pauses: Record<number, number>;
  /** Keep one handle open for the whole copy (as `cp`, an SFTP server, Python's `open`); else open, append, close per line (as `echo >> file`). */
  hold: boolean;
  /** Rename the file here when done (a `.part` convention). */
  renameTo?: string;
}

/** The writer: a child process of its own, so the daemon sees a real other process writing. */
const WRITER = `
const fs = require('fs');
const plan = JSON.parse(process.argv[1]);
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const fd = plan.hold ? fs.openSync(plan.path, 'w') : undefined;
plan.lines.forEach((line, i) => {
  if (fd !== undefined) fs.writeSync(fd, line);
  else fs.appendFileSync(plan.path, line);
  const pause = plan.pauses[i];
  if (pause) sleep(pause);
});
if (fd !== undefined) fs.closeSync(fd);
if (plan.renameTo) fs.renameSync(plan.path, plan.renameTo);
process.stdout.write('written at ' + Date.now() + '\\n');
`;

function write(plan: Plan): Promise<number> {
  const child = spawn(process.execPath, ['-e', WRITER, JSON.stringify({ ...plan, lines: LINES })], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      const at = /written at (\d+)/.exec(out);
      if (code === 0 && at) resolve(Number(at[1]));
      else reject(new Error(`writer exited ${code}: ${out}`));
    });
  });
}

async function running(extra: NodeJS.ProcessEnv = {}): Promise<{ home: TempHome; sb: RunningSandbox; daemon: DaemonProcess }> {
  const home = tempHome('topup-slow-');
  const sb = await inProcessSandbox();
  const env = cliEnv(home, sb, extra);
  // The default settle window, as a reseller runs it, unless the test sets one.
  if (extra.TOPUP_SETTLE_MS === undefined) delete env.TOPUP_SETTLE_MS;
  const daemon = startDaemon(env);
  await waitFor('daemon start', () => daemon.output().includes('topup daemon started'));
  return { home, sb, daemon };
}

/** All 20 rows ordered, once each, in one batch whose claimed copy holds the whole file. */
function expectWhole(home: TempHome, sb: RunningSandbox, name: string): void {
  const rows = readResult(home, name);
  expect(rows.map((r) => r.userId)).toEqual(LINES.slice(1).map((l) => l.trim().split(',')[1]));
  expect(rows.every((r) => r.status === 'completed')).toBe(true);
  expect(sb.admin.ledger().orders).toHaveLength(20);
  expect(listOutbox(home).filter((f) => f.endsWith('.error.txt'))).toEqual([]);
  const batches = readdirSync(home.jobs).filter((d) => d.startsWith('b'));
  expect(batches).toHaveLength(1);
  expect(readFileSync(join(home.jobs, batches[0]!, `${name}.csv`), 'utf8')).toBe(LINES.join(''));
}

// The four daemons below each wait out a writer's pauses and a settle window (seconds of
// nothing to do, the behaviour under test): they run side by side, each with its own home,
// sandbox and daemon, released when its own test ends (released()).
describe.concurrent('issue 21 (2): a slow copy is never taken half-written', () => {
  it('the issue\'s writer: the file kept open, a 2.5 s pause after row 10, default settings: all 20 rows in one batch', released(async () => {
    const { home, sb, daemon } = await running();
    await write({ path: join(home.inbox, 'stall.csv'), pauses: { 10: 2500 }, hold: true });
    await waitForResult(home, 'stall', 60_000);
    expectWhole(home, sb, 'stall');
    expect(await daemon.stop()).toBe(0);
  }), 90_000);

  it('a writer that closes the file after every line and pauses up to 10 s: held by the settle window alone', released(async () => {
    const { home, sb, daemon } = await running();
    await write({ path: join(home.inbox, 'lines.csv'), pauses: { 5: 4000, 10: 10_000, 15: 2500 }, hold: false });
    await waitForResult(home, 'lines', 60_000);
    expectWhole(home, sb, 'lines');
    expect(await daemon.stop()).toBe(0);
  }), 120_000);

  it('a writer that keeps the file open and pauses for longer than TOPUP_SETTLE_MS: held because it is open for writing, and the log says by whom', released(async () => {
    const { home, sb, daemon } = await running({ TOPUP_SETTLE_MS: '2000' });
    await write({ path: join(home.inbox, 'held.csv'), pauses: { 10: 6000 }, hold: true });
    await waitForResult(home, 'held', 60_000);
    expectWhole(home, sb, 'held');
    expect(daemon.output()).toMatch(/process \d+ \(node\) has it open for writing; waiting until it is closed/);
    expect(await daemon.stop()).toBe(0);
  }), 90_000);

  it('x.csv.part written slowly is left alone; renamed to x.csv it is taken at once (the short window), whole', released(async () => {
    const { home, sb, daemon } = await running();
    const renamedAt = await write({ path: join(home.inbox, 'upload.csv.part'), pauses: { 10: 2500 }, hold: false, renameTo: join(home.inbox, 'upload.csv') });
    await waitFor('the 20 orders', () => sb.admin.ledger().orders.length >= 20, 30_000, 20);
    // Renamed in whole: taken after the 1 s window, not after the 12 s of a file written in place.
    expect(Date.now() - renamedAt).toBeLessThan(8_000);
    await waitForResult(home, 'upload');
    expectWhole(home, sb, 'upload');
    expect(existsSync(join(home.inbox, 'upload.csv.part'))).toBe(false);
    expect(await daemon.stop()).toBe(0);
  }), 90_000);
});

describe('topup submit FILE', () => {
  it('refuses a file some process holds open for writing (it may be half written), and takes it once it is closed', async () => {
    const home = tempHome('topup-slow-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const file = join(home.dir, 'copying.csv');
    // This test process is the writer: the header and rows 1-10 written, the copy not finished.
    const fd = openSync(file, 'w');
    try {
      for (const line of LINES.slice(0, 11)) writeSync(fd, line);
      const refused = await runCli(['submit', file], env);
      expect(refused.code).toBe(7);
      expect(refused.stderr).toMatch(new RegExp(`process ${process.pid} \\(\\S+\\) has it open for writing, so it may not be complete yet; nothing was submitted`));
      expect(sb.admin.ledger().orders).toHaveLength(0);
      expect(readdirSync(home.jobs).filter((d) => d.startsWith('b'))).toEqual([]);
      for (const line of LINES.slice(11)) writeSync(fd, line);
    } finally {
      closeSync(fd);
    }
    const ok = await runCli(['submit', file], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(sb.admin.ledger().orders).toHaveLength(20);
  });
});
