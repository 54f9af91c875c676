/**
 * How processes stop and know of each other: releasers run last-first and all of them even when
 * one fails; the one stop-signal handler (a real child process signalled) stops gracefully on the
 * first signal and exits 130 on the second; a daemon's presence in the store is believed only while
 * it is fresh and its process lives.
 */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Releasers } from '../../src/kernel/shutdown.js';
import { announceDaemon, runningDaemon } from '../../src/store/presence.js';
import { openDb, type Db } from '../../src/store/db.js';
import { MetaStore } from '../../src/store/meta.js';
import { ROOT, waitFor } from '../e2e/harness.js';

describe('releasers', () => {
  it('release last-first, each awaited; one that fails does not keep the others from running; twice is once', async () => {
    const done: string[] = [];
    const r = new Releasers();
    r.add('sandbox', () => void done.push('sandbox'));
    r.add('store', async () => {
      await new Promise((res) => setTimeout(res, 20));
      done.push('store');
    });
    r.add('broken', () => {
      throw new Error('stuck');
    });
    r.add('watcher', () => void done.push('watcher'));
    await r.releaseAll();
    await r.releaseAll();
    expect(done).toEqual(['watcher', 'store', 'sandbox']);
  });
});

describe('the stop-signal handler', () => {
  it('first signal: the graceful stop is asked for; second: exit 130 at once', async () => {
    const code = `
      const { onStopSignals } = await import(${JSON.stringify(join(ROOT, 'dist/kernel/shutdown.js'))});
      onStopSignals((s) => console.log('first ' + s), (s) => console.log('second ' + s));
      console.log('ready');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('exit', (c) => res(c)));
    await waitFor('ready', () => out.includes('ready'), 10_000);
    child.kill('SIGINT');
    await waitFor('first', () => out.includes('first SIGINT'), 10_000);
    expect(child.exitCode).toBeNull(); // still running: the graceful stop is the caller's
    child.kill('SIGTERM');
    expect(await exited).toBe(130);
    expect(out).toContain('second SIGTERM');
  });
});

describe('daemon presence', () => {
  let dir: string;
  let db: Db;
  afterEach(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is seen while the daemon beats, gone when it stops, stale after 3 beats, and dead with its process', () => {
    dir = mkdtempSync(join(tmpdir(), 'presence-'));
    db = openDb(join(dir, 'topup.db'));
    const meta = new MetaStore(db);
    expect(runningDaemon(meta)).toBeNull();
    // A daemon of another process on this machine that is alive (our parent, vitest's runner).
    const owner = `${hostname()}:${process.ppid}:abcdef`;
    const stop = announceDaemon(meta, owner, { once: false });
    expect(runningDaemon(meta)).toMatchObject({ owner, once: false });
    expect(runningDaemon(meta, Date.now() + 31_000)).toBeNull(); // no beat for 3 heartbeats
    stop();
    expect(runningDaemon(meta)).toBeNull();
    // Killed with SIGKILL: its record stays, its process is gone.
    meta.setJson('daemon.presence', { owner: `${hostname()}:999999999:abcdef`, pid: 999999999, host: hostname(), at: Date.now(), once: false });
    expect(runningDaemon(meta)).toBeNull();
  });
});
