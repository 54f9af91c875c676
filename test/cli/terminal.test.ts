/**
 * A quieter terminal (issue 13): the real CLI on a real pseudo-terminal (util-linux `script`, the
 * terminal set to 80 columns with stty), and the same commands on pipes:
 *  - the submit line fits 80 columns and keeps USD and ETA;
 *  - a command in sandbox mode says its warning as a sentence on a terminal, nothing on a pipe;
 *  - the daemon's progress is one line per batch on a terminal, one JSON line on a pipe;
 *  - `status` shows sent and ETA; `history` and `order` show times;
 *  - after Ctrl-C, submit names who carries the batch on only when a daemon runs.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, cliEnv, csv, inProcessSandbox, runCli, startCli, startDaemon, tempHome, waitFor } from '../e2e/harness.js';
import { releaseAfterEach, released } from '../e2e/release.js';

releaseAfterEach();

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Runs the CLI on a pseudo-terminal `cols` wide; returns everything it wrote (stdout and stderr share the terminal). */
function onTerminal(args: string[], env: NodeJS.ProcessEnv, cols = 80, timeoutMs = 90_000): Promise<{ code: number | null; out: string }> {
  const cmd = `stty cols ${cols} rows 24; exec ${quote(process.execPath)} ${quote(CLI)} ${args.map(quote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...env, TERM: 'xterm' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out: ${out.slice(-2000)}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** What the terminal showed, as the pieces of text between carriage returns and newlines. */
const segments = (out: string): string[] => out.replace(ANSI, '').split(/\r|\n/).filter((s) => s.trim() !== '');
const rowsOf = (n: number, pid = 'PUBG-60'): string => csv([['pid', 'userId'], ...Array.from({ length: n }, (_, i) => [pid, `51${String(i).padStart(8, '0')}`])]);

describe.concurrent('on a terminal', () => {
  it('the submit line fits 80 columns and shows done/rows, USD and ETA', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const file = join(home.dir, 'bar.csv');
    writeFileSync(file, rowsOf(20));
    const r = await onTerminal(['submit', file], cliEnv(home, sb, { TOPUP_RATE_LIMITS: '8/1s' }));
    expect(r.code, r.out).toBe(0);
    const shown = segments(r.out);
    const bars = shown.filter((s) => /\d+\/20 \|/.test(s));
    expect(bars.length, r.out).toBeGreaterThan(1);
    for (const b of bars) expect(b.length, b).toBeLessThanOrEqual(79);
    expect(bars.at(-1)).toMatch(/\[#+\] 20\/20 \| sent 20 ok 20 \| \d+\.\d\d USD \| ETA 0s$/);
    expect(shown.some((s) => /^batch b\d{6}-[0-9a-f]{6}: 20 rows: 20 completed/.test(s))).toBe(true);
    // A log line written while the bar shows goes on a line of its own, never glued to the bar.
    expect(shown).toContainEqual(expect.stringMatching(/^batch finished \(batch: b\d{6}-[0-9a-f]{6}, file: bar\.csv/));
  }));

  it('a command in sandbox mode says its warning as a sentence on a terminal, and nothing on a pipe unless asked (issue 30)', released(async () => {
    const home = tempHome();
    const env = cliEnv(home, null);
    delete env.TOPUP_LOG_LEVEL; // as an operator runs it: warnings only
    const tty = await onTerminal(['balance'], env);
    expect(tty.code, tty.out).toBe(0);
    expect(tty.out).not.toContain('{"level"');
    expect(segments(tty.out)).toContainEqual(expect.stringMatching(/^warning: SANDBOX: no TOPUP_API_URL set, so orders go to the built-in sandbox; no real money is spent \(url: http:\/\/127\.0\.0\.1:\d+, answers: spec\)$/));
    const pipe = await runCli(['balance'], env);
    expect(pipe.code).toBe(0);
    // A script's stderr carries nothing it did not ask for: the sandbox notice is info there.
    expect(pipe.stderr).toBe('');
    const asked = await runCli(['balance'], { ...env, TOPUP_LOG_LEVEL: 'info' });
    expect(asked.stderr.trim().split('\n').map((l) => JSON.parse(l))).toContainEqual(expect.objectContaining({ level: 30, mode: 'SANDBOX', msg: expect.stringMatching(/^SANDBOX: no TOPUP_API_URL set/) }));
  }));

  it('the daemon says progress in one line per batch (counts, USD, ETA); on a pipe one JSON line', released(async () => {
    // Progress is said every 10 s: each daemon gets a batch that takes longer (2 orders a second).
    const [tty, pipe] = [tempHome(), tempHome()];
    const [sbTty, sbPipe] = [await inProcessSandbox(), await inProcessSandbox()];
    tty.drop('big.csv', rowsOf(24));
    pipe.drop('big.csv', rowsOf(24));
    const [r, piped] = await Promise.all([
      onTerminal(['daemon', '--once'], cliEnv(tty, sbTty, { TOPUP_RATE_LIMITS: '2/1s' })),
      runCli(['daemon', '--once'], cliEnv(pipe, sbPipe, { TOPUP_RATE_LIMITS: '2/1s' }), { timeoutMs: 90_000 }),
    ]);
    expect(r.code, r.out).toBe(0);
    const lines = segments(r.out);
    expect(r.out).not.toContain('{"level"');
    expect(lines.filter((l) => /^\s/.test(l)), 'no indented field blocks').toEqual([]);
    const progress = lines.filter((l) => l.includes(' progress b'));
    expect(progress.length, r.out).toBeGreaterThanOrEqual(1);
    for (const p of progress) {
      expect(p).toMatch(/^\d\d:\d\d:\d\d UTC INFO    progress b\d{6}-[0-9a-f]{6} \(big\.csv\): \d+\/24 done; sent \d+, completed \d+, cancelled 0, rejected 0, invalid 0; spent \d+\.\d\d USD; ETA (\d+s|\d+m\d\ds)$/);
    }
    expect(lines.length, r.out).toBeLessThan(40);

    expect(piped.code, piped.stderr).toBe(0);
    const json = piped.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const p = json.find((e) => e.msg === 'progress');
    expect(p).toMatchObject({ level: 30, file: 'big.csv', rows: 24, done: expect.any(Number), sent: expect.any(Number), counts: expect.objectContaining({ completed: expect.any(Number) }) });
    expect(typeof p.etaSec).toBe('number');
    expect(typeof p.spentUsd).toBe('number');
  }));
});

describe.concurrent('status, history and order; and who carries a stopped batch on', () => {
  it('status shows sent and ETA; Ctrl-C names a running daemon only when one runs', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb, { TOPUP_RATE_LIMITS: '3/1s' });
    const file = join(home.dir, 'slow.csv');
    // 120 rows at 3 calls/s take 40 s to send: long enough that the three status commands (a few
    // seconds each on a loaded machine) cannot outlast it, so Ctrl-C always meets a running batch.
    writeFileSync(file, rowsOf(120));
    const submit = startCli(['submit', file], env);
    const id = await waitFor('batch id', () => /batch (b\d{6}-[0-9a-f]{6})/.exec(submit.output())?.[1], 20_000);
    await waitFor('some rows sent', () => sb.admin.ledger().orders.length >= 6, 30_000, 100);

    const list = await runCli(['status'], env);
    expect(list.stdout).toMatch(/batch\s+file\s+state\s+done\s+sent\s+ok\s+cancelled\s+rejected\s+invalid\s+skipped\s+review\s+usd\s+eta\s+created UTC/);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+slow\\.csv\\s+running\\s+\\d+/120\\s+\\d+\\s+\\d+\\s+0\\s+0\\s+0\\s+0\\s+0\\s+\\d+\\.\\d\\d\\s+(\\d+s|\\d+m\\d\\ds)`));
    const one = await runCli(['status', id], env);
    expect(one.stdout).toMatch(/running; \d+\/120 done; sent \d+; .*; spent \d+\.\d\d USD; ETA (\d+s|\d+m\d\ds)\n/);
    expect(JSON.parse((await runCli(['status', '--json'], env)).stdout).batches[0]).toMatchObject({ id, sent: expect.any(Number), etaSec: expect.any(Number) });

    submit.kill('SIGINT');
    const code = await new Promise<number | null>((res) => submit.once('exit', (c) => res(c)));
    expect(code).toBe(130);
    expect(submit.output()).toMatch(/not finished \(stopped\); no daemon is running on this home, so it waits where it stopped .*topup daemon --once/);
    expect(submit.output()).not.toMatch(/carries it on/);

    // The daemon carries the stopped batch's ~100 rows on at the sandbox's own pace, so the second
    // batch's first send is not queued behind 30 s of them.
    const daemon = startDaemon({ ...env, TOPUP_RATE_LIMITS: '40/1s' });
    await waitFor('daemon start', () => daemon.output().includes('topup daemon started'), 20_000);
    const file2 = join(home.dir, 'slow2.csv');
    writeFileSync(file2, rowsOf(30, 'PUBG-325'));
    const submit2 = startCli(['submit', file2], env);
    await waitFor('batch id', () => /batch (b\d{6}-[0-9a-f]{6})/.exec(submit2.output())?.[1], 20_000);
    await waitFor('a row of it sent', () => sb.admin.ledger().orders.some((o) => o.pid === 'PUBG-325'), 30_000, 100);
    submit2.kill('SIGINT');
    expect(await new Promise<number | null>((res) => submit2.once('exit', (c) => res(c)))).toBe(130);
    expect(submit2.output()).toContain(`the daemon running on this home (pid ${daemon.child.pid}) carries it on.`);
    expect(await daemon.stop()).toBe(0);
  }), 150_000);

  it('history and order tables show when each order was created; order also when its row was sent', released(async () => {
    const home = tempHome();
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    const file = join(home.dir, 'two.csv');
    writeFileSync(file, rowsOf(2));
    expect((await runCli(['submit', file], env)).code).toBe(0);
    const h = await runCli(['history', '--limit', '2'], env);
    expect(h.stdout.split('\n')[0]).toMatch(/^created UTC\s+orderId\s+trxid\s+status/);
    expect(h.stdout.split('\n')[2]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\S+/);
    const id = JSON.parse((await runCli(['history', '--limit', '1', '--json'], env)).stdout).orders[0].orderId;
    const o = await runCli(['order', id], env);
    expect(o.stdout).toMatch(/^created UTC\s+orderId/);
    expect(o.stdout).toMatch(/placed by batch b\d{6}-[0-9a-f]{6}, line \d \(completed; sent \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, last changed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/);
  }));
});
