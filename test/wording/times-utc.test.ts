/**
 * New-user trial, issue 30 follow-up item 7: every time topup keeps is UTC, but `topup status`'s
 * pause line (`… since 2026-11-28 06:14:26`), the daemon's terminal lines (`14:03:15 INFO …`, in
 * the machine's local time at that) and several table columns printed times without saying so. A
 * reseller in Jakarta read them as local time, seven hours off. Every time a person reads is now
 * marked UTC. The real CLI on a real store, with the child's time zone set to Asia/Jakarta.
 */
import { describe, expect, it } from 'vitest';
import { cliEnv, inProcessSandbox, runCli, tempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';
import { openStore } from '../../src/store/store.js';
import { Pauses } from '../../src/account/pauses.js';
import { textLine } from '../../src/kernel/log.js';

releaseAfterEach();

describe('times a person reads are marked UTC', () => {
  it('the daemon\'s terminal line gives the UTC time and says so, whatever the machine\'s zone', () => {
    const tz = process.env.TZ;
    process.env.TZ = 'Asia/Jakarta';
    try {
      const line = textLine(JSON.stringify({ level: 30, time: Date.UTC(2026, 10, 28, 3, 4, 5), msg: 'took batch' }), { time: true });
      expect(line).toBe('03:04:05 UTC INFO    took batch');
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it('topup status says the pause time in UTC; token list says its columns are UTC', async () => {
    const home = tempHome('topup-utc-');
    const env = cliEnv(home, await inProcessSandbox(), { TZ: 'Asia/Jakarta' });
    const made = await runCli(['token', 'create', '--scope', 'orders:read', '--name', 'shop', '--json'], env);
    expect(made.code, made.stderr).toBe(0);

    const store = openStore(`${home.jobs}/topup.db`);
    try {
      new Pauses(store.meta, 60_000).pause('maintenance', 'MAINTENANCE', 'the API is in maintenance');
    } finally {
      store.db.close();
    }
    const since = (() => {
      const s = openStore(`${home.jobs}/topup.db`);
      try {
        return Pauses.read(s.meta)!.since;
      } finally {
        s.db.close();
      }
    })();
    const utc = new Date(since).toISOString().replace('T', ' ').slice(0, 19);
    const st = await runCli(['status'], env);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toContain(`Orders paused by the API: MAINTENANCE since ${utc} UTC`);

    const list = await runCli(['token', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/created UTC\s+last used UTC/);
  }, 120_000);
});
