/**
 * A stop until a restart (the store's disk failed a write or a sync: dispatch/store-health.ts,
 * store/wal-sync.ts) said where an operator looks, and never as something that passes by itself:
 *  - `topup status` and `topup doctor` (the real CLI) read it from the running daemon's heartbeat
 *    (store/presence.ts storeStopped): the disk may answer well by now, so no look at it from
 *    another process can find it; it is gone once that daemon is;
 *  - the console's banner and the store-down notification say to check the disk and restart, not
 *    "resumes by itself", which they still say for a full or read-only store (it does resume).
 */
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { page, type PageCtx } from '../../src/console/layout.js';
import { html } from '../../src/console/html.js';
import { storeDownUntilRestart, type StoreDown } from '../../src/dispatch/store-health.js';
import { silentLogger } from '../../src/kernel/log.js';
import { Notifier } from '../../src/notify/notifier.js';
import { announceDaemon, runningDaemon } from '../../src/store/presence.js';
import { newOwnerId } from '../../src/store/owner.js';
import { openStore } from '../../src/store/store.js';
import { WAL_SYNC_FAILED } from '../../src/store/wal-sync.js';
import type { RunnerEventMap } from '../../src/engine/events.js';
import { cliEnv, runCli, tempHome, type TempHome } from '../e2e/harness.js';

let home: TempHome | undefined;
let server: Server | undefined;
afterEach(async () => {
  home?.remove();
  if (server) await new Promise((r) => server!.close(r));
  home = server = undefined;
});

const down = (code: string): StoreDown => ({ since: Date.parse('2026-11-28T10:00:00Z'), code, message: 'disk I/O error' });

describe('topup status and topup doctor', () => {
  it('say the running daemon\'s stop until a restart, with what to do, and no longer once that daemon is gone', async () => {
    home = tempHome();
    const store = openStore(join(home.jobs, 'topup.db'));
    // This test process plays the daemon: its heartbeat, as daemon.ts writes it (a live pid on this host).
    let stopped: StoreDown | null = null;
    const presence = announceDaemon(store.meta, newOwnerId(), { once: false, storeStopped: () => stopped });
    const env = cliEnv(home, null, { TOPUP_API_URL: 'http://127.0.0.1:9' });
    try {
      const before = await runCli(['status'], env);
      expect(before.stdout + before.stderr).not.toMatch(/store:/);
      stopped = down(WAL_SYNC_FAILED);
      presence.beat();
      expect(runningDaemon(store.meta)?.storeStopped).toEqual({ code: WAL_SYNC_FAILED, since: stopped.since });

      const status = await runCli(['status'], env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(new RegExp(`^store: the store's disk failed a write or a sync .*\\(${WAL_SYNC_FAILED}, the daemon pid ${process.pid}, since 2026-11-28 10:00:00 UTC\\): Sending stays stopped until the daemon is restarted: check the disk`, 'm'));
      expect(status.stdout).not.toMatch(/resumes by itself/);
      const json = await runCli(['status', '--json'], env);
      expect(JSON.parse(json.stdout).storeStopped).toMatchObject({ code: WAL_SYNC_FAILED, pid: process.pid });
      expect(json.stderr).toMatch(/until the daemon is restarted/);

      const doctor = await runCli(['doctor'], env);
      const line = doctor.stdout.split('\n').find((l) => /sending/.test(l) && /disk failed a write or a sync/.test(l));
      expect(line, doctor.stdout).toMatch(/FAIL/);
      expect(line).toMatch(/until the daemon is restarted: check the disk \(dmesg, SMART\)/);
    } finally {
      presence();
    }
    // The daemon gone (its presence removed at its stop; a restart writes one without the stop).
    const after = await runCli(['status'], env);
    expect(after.stdout + after.stderr).not.toMatch(/disk failed a write or a sync/);
    store.db.close();
  });
});

describe('the console banner and the store-down notification', () => {
  const ctx = (storeDown: StoreDown): PageCtx => ({
    path: '/', sandbox: false, sandboxBalanceUsd: null, readOnly: false, tokenRequired: false, actor: 'test', csrf: 'x', reviewRows: 0, pauses: [], storeDown, now: Date.now(),
  });
  const banner = (text: string): string => /<p class="banner warn" role="alert">([^<]*)<\/p>/.exec(text)?.[1] ?? '';

  it('say a failed write or sync stops sending until a restart (check the disk), and a full disk resumes by itself', async () => {
    const got: { event: string; text: string; data: Record<string, unknown> }[] = [];
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push(JSON.parse(body));
        res.end();
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const notifier = new Notifier(loadConfig({ TOPUP_HOME: '/tmp', TOPUP_WEBHOOK_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }), silentLogger());
    const runner = new EventEmitter<RunnerEventMap>();
    notifier.follow(runner);

    for (const code of [WAL_SYNC_FAILED, 'SQLITE_IOERR_WRITE']) {
      expect(storeDownUntilRestart(code)).toBe(true);
      const b = banner(page(ctx(down(code)), 'Overview', html``));
      expect(b).toMatch(/^Sending stopped: the store&#39;s disk failed a write or a sync/);
      expect(b).toMatch(/until the daemon is restarted: check the disk/);
      expect(b).not.toMatch(/resumes by itself|Nothing is lost/);
      runner.emit('store', down(code));
    }
    const full = banner(page(ctx(down('SQLITE_FULL')), 'Overview', html``));
    expect(full).toMatch(/the disk is full .*Nothing is lost; sending resumes by itself/);
    runner.emit('store', down('SQLITE_FULL'));
    await notifier.flush();

    const texts = got.filter((g) => g.event === 'store-down').map((g) => g.text);
    expect(texts).toHaveLength(3);
    for (const t of texts.slice(0, 2)) {
      expect(t).toMatch(/^Sending stopped: the store's disk failed a write or a sync .*Sending stays stopped until the daemon is restarted: check the disk \(dmesg, SMART\)/);
      expect(t).not.toMatch(/resumes by itself|Nothing is lost|Free space/);
    }
    expect(texts[2]).toMatch(/the disk is full \(SQLITE_FULL\)\. Nothing is lost; sending resumes by itself once the store can be written\. Free space on the disk of jobs\//);
    expect(got.filter((g) => g.event === 'store-down').map((g) => g.data.untilRestart)).toEqual([true, true, false]);
  });
});
