/**
 * Issue 32 item 4: a store that cannot be written is said once, in every place an operator looks:
 * the log (one line), `topup status` (which looks at the disk itself: the daemon cannot write what
 * it knows), the console's banner, /metrics (topup_store_writable 0, with its code; alerted by
 * deploy/prometheus/topup-alerts.yml TopupStoreUnwritable) and a notification (store-down, then
 * store-up when sending resumes). A full disk (a small tmpfs, as test/dispatch/full-disk.test.ts),
 * and a store file deleted under a running daemon.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, runCli, startDaemon, tempHome, waitFor, waitForResult, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

function tryMount(dir: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err).trim();
  }
}

const mounts: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const m of mounts.splice(0)) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'pipe' });
    } catch {
      /* already gone */
    }
    rmSync(m, { recursive: true, force: true });
  }
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

const mountDir = mkdtempSync(join(tmpdir(), 'topup-storedown-'));
const cannot = tryMount(mountDir);
if (cannot === null) execFileSync('umount', [mountDir]);

function fill(dir: string): string {
  const path = join(dir, 'filler.bin');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return path;
}

/** A receiver of the operator notifications (TOPUP_WEBHOOK_URL). */
async function hooks(): Promise<{ url: string; got: { event: string; text: string; data: Record<string, unknown> }[] }> {
  const got: { event: string; text: string; data: Record<string, unknown> }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push(JSON.parse(body));
      res.end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

function writable(metrics: string): string[] {
  return metrics.split('\n').filter((l) => l.startsWith('topup_store_writable'));
}

async function consoleOf(daemon: ReturnType<typeof startDaemon>): Promise<string> {
  return (await waitFor('the console address', () => /console: open (http:\/\/[^\s]+\/) in a browser/.exec(daemon.output())?.[1], 30_000, 20)).replace(/\/$/, '');
}

it.skipIf(cannot !== null)(`a full disk: one log line, topup status, the console, /metrics and a notification say so; all say it is over when space returns${cannot ? ` (skipped: mount -t tmpfs failed: ${cannot})` : ''}`, async () => {
  expect(tryMount(mountDir)).toBeNull();
  mounts.push(mountDir);
  const dir = join(mountDir, 'home');
  mkdirSync(join(dir, 'inbox'), { recursive: true, mode: 0o700 });
  const home = { dir, inbox: join(dir, 'inbox'), outbox: join(dir, 'outbox'), jobs: join(dir, 'jobs') } as TempHome;
  const sb = await inProcessSandbox();
  const hook = await hooks();
  const env = cliEnv(home, sb, { TOPUP_RATE_LIMITS: '20/1s', TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_WEBHOOK_URL: hook.url });
  const daemon = startDaemon(env);
  const url = await consoleOf(daemon);
  expect(writable(await (await fetch(`${url}/metrics`)).text())).toEqual(['topup_store_writable{code="none"} 1']);
  const rows = 80;
  writeFileSync(join(home.inbox, 'full.csv'), csv([['pid', 'userId'], ...Array.from({ length: rows }, (_, i) => ['PUBG-60', `5123${String(500000 + i)}`])]), { mode: 0o600 });
  await waitFor('first orders', () => sb.admin.ledger().orders.length >= 5, 30_000, 10);
  const filler = fill(mountDir);
  const before = daemon.output().length;
  await waitFor('the store found full', () => /the store cannot be written: the disk is full/.test(daemon.output().slice(before)), 20_000, 50);

  // /metrics: 0, with the code; the console's banner; topup status (from the disk); the notification.
  const m = writable(await (await fetch(`${url}/metrics`)).text());
  expect(m).toHaveLength(1);
  expect(m[0]).toMatch(/^topup_store_writable\{code="(SQLITE_FULL|SQLITE_IOERR\w*)"\} 0$/);
  const page = await (await fetch(`${url}/`)).text();
  expect(page).toMatch(/Sending stopped: the store cannot be written/);
  const status = await runCli(['status'], env);
  expect(status.stdout + status.stderr).toMatch(/store: the store cannot be written: the disk is full \(\d+ KiB free on /);
  await waitFor('the store-down notification', () => hook.got.find((n) => n.event === 'store-down'), 10_000, 50);
  expect(hook.got.filter((n) => n.event === 'store-down')).toHaveLength(1);
  expect(hook.got.find((n) => n.event === 'store-down')!.text).toMatch(/^Sending stopped: the store cannot be written/);
  // One line said it (and no spin: a handful of lines in all while it lasts).
  await new Promise((r) => setTimeout(r, 3_000));
  const during = daemon.output().slice(before);
  expect(during.match(/the store cannot be written: the disk is full: sending stopped/g)).toHaveLength(1);
  expect(during.split('\n').filter((l) => l.trim() !== '').length).toBeLessThan(100);

  rmSync(filler);
  await waitFor('the store-up notification', () => hook.got.find((n) => n.event === 'store-up'), 30_000, 50);
  expect(writable(await (await fetch(`${url}/metrics`)).text())).toEqual(['topup_store_writable{code="none"} 1']);
  expect(await (await fetch(`${url}/`)).text()).not.toMatch(/Sending stopped: the store cannot be written/);
  expect((await runCli(['status'], env)).stdout).not.toMatch(/store: the store cannot be written/);
  await waitForResult(home, 'full', 60_000);
  expect(new Set(sb.admin.ledger().orders.map((o) => o.trxid)).size).toBe(rows);
  expect(sb.admin.ledger().orders).toHaveLength(rows);
  expect(await daemon.stop()).toBe(0);
}, 150_000);

it('a store file deleted under a running daemon: sending stops, and status, /metrics and a notification say the file is gone', async () => {
  const home = tempHome('storedown-gone-');
  const sb = await inProcessSandbox();
  const hook = await hooks();
  const env = cliEnv(home, sb, { TOPUP_RATE_LIMITS: '5/1s', TOPUP_CONSOLE: '127.0.0.1:0', TOPUP_WEBHOOK_URL: hook.url });
  const daemon = startDaemon(env);
  const url = await consoleOf(daemon);
  home.drop('gone.csv', csv([['pid', 'userId'], ...Array.from({ length: 40 }, (_, i) => ['PUBG-60', `5123${String(600000 + i)}`])]));
  await waitFor('first orders', () => sb.admin.ledger().orders.length >= 3, 30_000, 10);
  // The mark file exists after the daemon's first seconds (it says this home had a store).
  await waitFor('the mark file', () => { try { return execFileSync('ls', ['-a', home.dir]).toString().includes('.topup-store-mark'); } catch { return false; } }, 15_000, 50);
  for (const s of ['', '-wal', '-shm']) rmSync(join(home.jobs, `topup.db${s}`), { force: true });
  await waitFor('the store found gone', () => /the store cannot be written: its file was moved or deleted while open/.test(daemon.output()), 20_000, 50);
  const bought = sb.admin.ledger().orders.length;
  const scrape = await fetch(`${url}/metrics`);
  const text = await scrape.text();
  expect(writable(text), `${scrape.status}: ${text.slice(0, 500)}`).toEqual(['topup_store_writable{code="SQLITE_READONLY_DBMOVED"} 0']);
  const status = await runCli(['status'], env);
  expect(status.stdout).toMatch(/store: the store cannot be written: its file is gone or unreadable \(.*topup\.db is missing; this home ran a store before\)/);
  expect(status.code).not.toBe(0);
  // topup status did not make an empty store in its place.
  expect(execFileSync('ls', [home.jobs]).toString()).not.toMatch(/^topup\.db$/m);
  await waitFor('the store-down notification', () => hook.got.find((n) => n.event === 'store-down'), 10_000, 50);
  expect(hook.got.find((n) => n.event === 'store-down')!.text).toMatch(/moved or deleted/);
  // Nothing more is sent on a store that cannot record it.
  await new Promise((r) => setTimeout(r, 3_000));
  expect(sb.admin.ledger().orders.length).toBeLessThanOrEqual(bought + 5);
  await daemon.stop().catch(() => undefined);
}, 120_000);
