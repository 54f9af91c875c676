/**
 * Issue 21, reproduction 2, where the inbox cannot see the writer (another user's process, no
 * /proc): a writer keeps its handle open across the claim (the handle follows the file into
 * jobs/<batch>/) and writes on. Real parts: a runtime with its SQLite store in a temp home, an
 * inbox file claimed (moved) and stored by the real intake, this test process as the writer with
 * a real open file handle, results written by finishBatch.
 *
 *  - written after the move, before the rows were read whole: the file is refused whole before
 *    anything is stored (load.ts re-hashes what it read);
 *  - written after the rows were stored and sent: every line of the FINAL file ends with a result
 *    row, the ones never read `skipped` with why (late-lines.ts), and the result waits while the
 *    file is still being written;
 *  - written between settling and the claim: not claimed (claim.ts, settledHash).
 */
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, utimesSync, writeSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangedSinceSettled, claimFile } from '../../src/claim/claim.js';
import { loadBatch } from '../../src/claim/load.js';
import { loadConfig } from '../../src/config/config.js';
import { contentHash } from '../../src/intake/formats/index.js';
import { silentLogger } from '../../src/kernel/log.js';
import { finishBatch } from '../../src/outbox/finish.js';
import { outboxPaths } from '../../src/outbox/paths.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { inProcessSandbox, parseResult, releaseAll, tempHome, TEST_KEY, type TempHome } from '../e2e/harness.js';

let rt: Runtime | undefined;
let fd: number | undefined;
let proxy: Server | undefined;
afterEach(async () => {
  if (fd !== undefined) closeSync(fd);
  fd = undefined;
  if (proxy) await new Promise((r) => proxy!.close(r));
  proxy = undefined;
  await rt?.close();
  rt = undefined;
  await releaseAll();
});

const SETTLE_MS = 300;
const LINES = ['pid,userId\n', ...Array.from({ length: 20 }, (_, i) => `PUBG-60,51234${String(56700 + i)}\n`)];

async function runtime(url?: (sandbox: string) => Promise<string>): Promise<{ rt: Runtime; home: TempHome }> {
  const home = tempHome('topup-late-');
  const sb = await inProcessSandbox();
  const api = url ? await url(sb.url) : sb.url;
  rt = openRuntime(loadConfig({ TOPUP_HOME: home.dir, TOPUP_API_KEY: TEST_KEY, TOPUP_API_URL: api, TOPUP_SETTLE_MS: String(SETTLE_MS) }), silentLogger(), api);
  return { rt, home };
}

/**
 * The supplier's side, as the simulator's world had it (seed 3801): a forwarding proxy in front of
 * the sandbox that runs `onBalance` before it forwards a GET of the balance (the read finishBatch
 * makes after a batch), so a writer writes exactly while that read is on the network.
 */
async function balanceProxy(target: string, onBalance: () => void): Promise<string> {
  const to = new URL(target);
  proxy = createServer((req, res) => {
    if (req.method === 'GET' && /balance/.test(req.url ?? '')) onBalance();
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${to.pathname === '/' ? '' : to.pathname}`;
}

/** The writer: the header and rows 1–10 through a handle it keeps. */
function startWriting(home: TempHome): string {
  const path = join(home.inbox, 'stall.csv');
  fd = openSync(path, 'w');
  for (const line of LINES.slice(0, 11)) writeSync(fd, line);
  return path;
}

const writeRest = (): void => {
  for (const line of LINES.slice(11)) writeSync(fd!, line);
};

describe('a writer that keeps its handle open across the claim', () => {
  it('writes after the move, before the rows are read whole: the file is refused whole, nothing stored', async () => {
    const { rt, home } = await runtime();
    const path = startWriting(home);
    const batch = await claimFile(rt, path, { own: true });
    expect(existsSync(path)).toBe(false);
    writeRest(); // lands in jobs/<batch>/stall.csv: the handle followed the rename
    expect(readFileSync(join(home.dir, batch.jobFile), 'utf8')).toBe(LINES.join(''));
    expect(await loadBatch(rt, batch)).toMatchObject({ loaded: false, reason: 'file-error' });
    const after = rt.batches.get(batch.id)!;
    expect(after.state).toBe('failed');
    expect(rt.rows.counts(batch.id).pending).toBe(0);
    const error = readFileSync(outboxPaths(rt, after).errorFile, 'utf8');
    expect(error).toMatch(/refused stall\.csv .*: the file changed after it was claimed/);
    expect(error).toMatch(/none of its rows was ordered/);
    expect(error).toMatch(/Nothing was sent and nothing was charged/);
  });

  it('writes after the rows were stored and sent: every line of the final file ends with a result row, the late ones skipped with why', async () => {
    const { rt, home } = await runtime();
    const path = startWriting(home);
    const claimed = await claimFile(rt, path, { own: true });
    expect(await loadBatch(rt, claimed)).toMatchObject({ loaded: true, rows: 10 });
    const now = Date.now();
    for (let idx = 0; idx < 10; idx++) {
      expect(rt.rows.markSending(claimed.id, idx, { owner: rt.owner, now }, now + 60_000)).toBe(true);
      expect(rt.rows.placed(claimed.id, idx, { orderId: `ORD-${idx}`, status: 'completed', amountUsd: 0.92 }, now, now + 60_000)).toBe(true);
    }
    writeRest();
    const batch = rt.batches.get(claimed.id)!;
    expect(await finishBatch(rt, batch)).toBeNull();
    // Still open for writing (by this very process): the result waits, however long it has been quiet.
    await sleep(SETTLE_MS * 2);
    expect(await finishBatch(rt, batch)).toBeNull();
    expect(rt.batches.get(batch.id)!.state).toBe('open');
    closeSync(fd!);
    fd = undefined;
    await sleep(SETTLE_MS); // the next look
    const summary = (await finishBatch(rt, batch))!;
    expect(summary).not.toBeNull();
    expect(rt.batches.get(batch.id)!.state).toBe('done');
    const rows = parseResult(readFileSync(outboxPaths(rt, batch).resultFile, 'utf8'));
    expect(rows.map((r) => r.userId)).toEqual(LINES.slice(1).map((l) => l.trim().split(',')[1]));
    expect(rows.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill('completed'));
    expect(rows.slice(10).map((r) => r.status)).toEqual(Array(10).fill('skipped'));
    expect(rows.slice(10).map((r) => r.orderId)).toEqual(Array(10).fill(''));
    expect(rows[10]!.error).toMatch(/^not ordered: line 12 was written into the file after topup had read it .*never sent/);
    expect(summary.rows).toBe(20);
    expect(summary.counts).toMatchObject({ completed: 10, skipped: 10 });
    expect(summary.changedAfterRead!.lines).toEqual([12, 13, 14, 15, 16, 17, 18, 19, 20, 21]);
    expect(summary.changedAfterRead!.note).toMatch(/stall\.csv changed after its rows were read .*10 lines of the file as it is now were never ordered/);
    expect(JSON.parse(readFileSync(outboxPaths(rt, batch).summaryFile, 'utf8')).counts.skipped).toBe(10);
  });

  it('lines written while the balance after the batch is read are in the result too (seed 3801)', async () => {
    let armed: (() => void) | null = null;
    const { rt, home } = await runtime((sb) => balanceProxy(sb, () => {
      const write = armed;
      armed = null;
      write?.();
    }));
    const path = home.drop('two.csv', LINES.slice(0, 11).join(''));
    const claimed = await claimFile(rt, path, { own: true });
    expect(await loadBatch(rt, claimed)).toMatchObject({ loaded: true, rows: 10 });
    const now = Date.now();
    for (let idx = 0; idx < 10; idx++) {
      expect(rt.rows.markSending(claimed.id, idx, { owner: rt.owner, now }, now + 60_000)).toBe(true);
      expect(rt.rows.placed(claimed.id, idx, { orderId: `ORD-${idx}`, status: 'completed', amountUsd: 0.92 }, now, now + 60_000)).toBe(true);
    }
    const job = join(home.dir, claimed.jobFile);
    // A writer that is done (its mtime an hour back: nothing to wait for): one line before the
    // result's look at the file, two more while the balance after the batch is being read.
    const written = (lines: string[]): void => {
      appendFileSync(job, lines.join(''));
      const past = new Date(Date.now() - 3_600_000);
      utimesSync(job, past, past);
    };
    written(LINES.slice(11, 12));
    armed = () => written(LINES.slice(12, 14));
    const summary = (await finishBatch(rt, rt.batches.get(claimed.id)!))!;
    expect(armed).toBeNull(); // the balance was read, and the writer wrote during it
    expect(summary).not.toBeNull();
    const rows = parseResult(readFileSync(outboxPaths(rt, claimed).resultFile, 'utf8'));
    // Every line of the final file has its result row: 10 ordered, 3 never ordered.
    expect(readFileSync(job, 'utf8')).toBe(LINES.slice(0, 14).join(''));
    expect(rows.map((r) => r.userId)).toEqual(LINES.slice(1, 14).map((l) => l.trim().split(',')[1]));
    expect(rows.slice(10).map((r) => r.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(summary.counts).toMatchObject({ completed: 10, skipped: 3 });
    expect(summary.changedAfterRead!.lines).toEqual([12, 13, 14]);
  });

  it('a line changed after it was read is listed again, as never ordered in that version', async () => {
    const { rt, home } = await runtime();
    const path = startWriting(home);
    writeRest();
    const claimed = await claimFile(rt, path, { own: true });
    expect(await loadBatch(rt, claimed)).toMatchObject({ loaded: true, rows: 20 });
    // Row 3 overwritten in place, same length: another player.
    const offset = LINES.slice(0, 3).join('').length;
    writeSync(fd!, 'PUBG-60,5999999999\n', offset);
    closeSync(fd!);
    fd = undefined;
    const now = Date.now();
    for (let idx = 0; idx < 20; idx++) {
      rt.rows.markSending(claimed.id, idx, { owner: rt.owner, now }, now + 60_000);
      rt.rows.placed(claimed.id, idx, { orderId: `ORD-${idx}`, status: 'completed', amountUsd: 0.92 }, now, now + 60_000);
    }
    // Closed, but written to within TOPUP_SETTLE_MS: the result waits for it to hold still.
    expect(await finishBatch(rt, rt.batches.get(claimed.id)!)).toBeNull();
    await sleep(SETTLE_MS + 100);
    const summary = (await finishBatch(rt, rt.batches.get(claimed.id)!))!;
    const rows = parseResult(readFileSync(outboxPaths(rt, claimed).resultFile, 'utf8'));
    expect(rows).toHaveLength(21);
    expect(rows[2]!.userId).toBe('5123456702'); // what was ordered
    expect(rows[20]!).toMatchObject({ userId: '5999999999', status: 'skipped' });
    expect(rows[20]!.error).toMatch(/line 4 was changed after topup read the file \(line 4 above is the row as it was read/);
    expect(summary.counts).toMatchObject({ completed: 20, skipped: 1 });
  });
});

it('a file written to between settling and its claim is not claimed: it stays in the inbox to settle again', async () => {
  const { rt, home } = await runtime();
  const path = home.drop('x.csv', LINES.slice(0, 11).join(''));
  const settled = await contentHash(path);
  home.drop('x.csv', LINES.join(''));
  await expect(claimFile(rt, path, { settledHash: settled })).rejects.toBeInstanceOf(ChangedSinceSettled);
  expect(readFileSync(path, 'utf8')).toBe(LINES.join(''));
  expect(rt.batches.list({})).toEqual([]);
  // With the bytes it settled with, it is claimed.
  await expect(claimFile(rt, path, { settledHash: await contentHash(path) })).resolves.toMatchObject({ sourceName: 'x.csv' });
});
