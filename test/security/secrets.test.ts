/**
 * Canaries: the test API key (TEST_KEY) and the delivered gift-card codes must never show up
 * where they do not belong, with the error paths forced: 5xx answers, lost answers, an auth
 * failure with a second canary key, a crash at the response, debug logging, and a webhook.
 * Key: 0 hits anywhere (stdout/stderr, logs, results, summaries, notifications, snapshots).
 * Codes: only in result files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cliEnv, csv, ROOT, runCli, sandboxProcess, TEST_KEY, tempHome, type SandboxProcess, type TempHome } from '../e2e/harness.js';

const WRONG_KEY = 'canary-WRONGKEY-0d9e8f7a6b';
let home: TempHome;
let sb: SandboxProcess;
let hook: Server;
const notifications: string[] = [];
const outputs: { what: string; text: string }[] = [];

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

beforeAll(async () => {
  home = tempHome('topup-canary-');
  sb = await sandboxProcess(['--processing-share', '0.3', '--processing-ms', '200-600', '--fail-share', '0.2', '--seed', '5']);
  await sb.admin('POST', 'faults', { error5xxAfterShare: 0.2, lostResponseShare: 0.2, error5xxBeforeShare: 0.1 });
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      notifications.push(`${JSON.stringify(req.headers)}\n${body}`);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  const env = (extra: NodeJS.ProcessEnv = {}) => cliEnv(home, sb, { TOPUP_LOG_LEVEL: 'trace', TOPUP_WEBHOOK_URL: hookUrl, TOPUP_REQUEST_TIMEOUT_MS: '1500', ...extra });
  const rows: (string | number)[][] = [['pid', 'userId', 'quantity', 'note']];
  for (let i = 0; i < 24; i++) rows.push(i % 2 ? ['KEY-PUBG-60', '', 2, `k${i}`] : ['STEAM-5', '', 1, `s${i}`]);
  for (let i = 0; i < 6; i++) rows.push(['PUBG-60', i % 3 ? String(5_300_000_000 + i) : '99999', '', `t${i}`]);
  home.drop('cards.csv', csv(rows));
  // An auth failure with another canary key: the daemon must not echo it either.
  const bad = await runCli(['daemon', '--once'], env({ TOPUP_API_KEY: WRONG_KEY }), { timeoutMs: 30_000 }).catch((e: Error) => ({ stdout: e.message, stderr: '', code: null, signal: null }));
  outputs.push({ what: 'auth failure run', text: bad.stdout + bad.stderr });
  // A crash right after an answer arrives, then the run to the end.
  const crash = await runCli(['daemon', '--once'], env({ TOPUP_CRASH_AT: 'response-received:4' }), { timeoutMs: 60_000 });
  outputs.push({ what: 'crashed run', text: crash.stdout + crash.stderr });
  // The killed daemon's batch is taken over at once: its owner (this host, that pid) is dead.
  const fin = await runCli(['daemon', '--once'], env(), { timeoutMs: 90_000 });
  outputs.push({ what: 'final run', text: fin.stdout + fin.stderr });
  await new Promise((r) => setTimeout(r, 500));
}, 180_000);

afterAll(async () => {
  await sb?.stop();
  await new Promise((r) => (hook ? hook.close(r) : r(undefined)));
  home?.remove();
});

describe('canary key and codes', () => {
  it('delivered codes', async () => {
    const ledger = await sb.admin('GET', 'ledger');
    const codes: string[] = ledger.orders.flatMap((o: { codes?: string[] }) => o.codes ?? []);
    expect(codes.length).toBeGreaterThan(10);
    const files = walk(home.dir).filter((f) => !/\.db(-wal|-shm|-journal)?$/.test(f));
    const keyHits: string[] = [];
    const codeHits: string[] = [];
    const check = (what: string, text: string, codesAllowed: boolean) => {
      if (text.includes(TEST_KEY) || text.includes(WRONG_KEY)) keyHits.push(what);
      if (!codesAllowed && codes.some((c) => text.includes(c))) codeHits.push(what);
    };
    for (const o of outputs) check(o.what, o.text, false);
    for (const f of files) check(relative(home.dir, f), readFileSync(f, 'latin1'), /\.result\.csv$/.test(f) && !f.includes('/jobs/'));
    notifications.forEach((n, i) => check(`notification ${i}`, n, false));
    // Test snapshots in the repository.
    for (const f of walk(join(ROOT, 'test')).filter((p) => p.includes('__snapshots__'))) check(relative(ROOT, f), readFileSync(f, 'utf8'), false);
    console.log(`canaries: key hits ${keyHits.length}, code hits outside result files ${codeHits.length} (${files.length} files, ${outputs.length} outputs, ${notifications.length} notifications)`);
    expect(keyHits).toEqual([]);
    expect(codeHits).toEqual([]);
    // The codes did reach the result file (otherwise the check above proves nothing).
    const result = readFileSync(join(home.outbox, 'cards.result.csv'), 'utf8');
    expect(codes.filter((c) => result.includes(c)).length).toBeGreaterThan(0);
    expect(statSync(join(home.outbox, 'cards.result.csv')).size).toBeGreaterThan(0);
  });
});
