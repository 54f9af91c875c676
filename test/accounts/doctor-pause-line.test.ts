/**
 * `topup doctor`'s pause line says one true thing, from the store. A new-user trial: after the
 * sandbox's maintenance was cleared, the line said "sending; last paused, probed …: answered …, but
 * an order met MAINTENANCE 2 s ago: still paused" — sending and still paused at once (it quoted the
 * last read probe, made while the pause held). A real daemon against a real sandbox, maintenance
 * injected and cleared; the doctor is the real CLI.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cliEnv, csv, inProcessSandbox, readResult, runCli, startDaemon, tempHome, type TempHome } from '../e2e/harness.js';
import { releaseAfterEach } from '../e2e/release.js';

releaseAfterEach();

function meta<T>(home: TempHome, key: string): T | null {
  const db = new Database(join(home.dir, 'jobs', 'topup.db'), { readonly: true, fileMustExist: true });
  try {
    const r = db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return r ? (JSON.parse(r.value) as T) : null;
  } catch {
    return null;
  } finally {
    db.close();
  }
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

async function pauseLine(env: NodeJS.ProcessEnv): Promise<{ ok: boolean; detail: string }> {
  const doctor = await runCli(['doctor', '--json'], env, { timeoutMs: 60_000 });
  const report = JSON.parse(doctor.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
  return report.checks.find((c) => c.name === 'pause')!;
}

describe('topup doctor: the pause line after a maintenance', () => {
  it('while paused it says paused; once the maintenance cleared and an order went through, it says sending since then, and nothing about being paused still', { timeout: 150_000 }, async () => {
    const home = tempHome('doctor-pause-');
    const sb = await inProcessSandbox();
    const env = cliEnv(home, sb);
    sb.admin.setFaults({ maintenance: { code: 'MAINTENANCE' } });
    const daemon = startDaemon(env);
    try {
      home.drop('one.csv', csv([['pid', 'userId'], ['PUBG-60', '5123456780']]));
      // The row's order probes keep meeting the maintenance, so the read probe (after 10 s) is
      // answered but leaves the pause: its record says "still paused", as in the trial.
      await expect.poll(() => meta<{ outcome: string }>(home, 'dispatch.probe:default')?.outcome ?? '', { timeout: 45_000, interval: 200 }).toMatch(/still paused$/);
      const since = meta<{ since: number }>(home, 'dispatch.pause')!.since;
      const paused = await pauseLine(env);
      expect(paused.ok).toBe(false);
      expect(paused.detail).toMatch(new RegExp(`^maintenance MAINTENANCE: orders paused by the API since ${iso(since)}`));

      sb.admin.setFaults({ maintenance: null });
      await expect.poll(() => { try { return readResult(home, 'one').map((r) => r.status); } catch { return []; } }, { timeout: 60_000, interval: 200 }).toEqual(['completed']);
      expect(meta(home, 'dispatch.pause')).toBe(null);

      const line = await pauseLine(env);
      expect(line.ok).toBe(true);
      expect(line.detail).not.toMatch(/still paused/);
      expect(line.detail).toMatch(/^sending since \S+; the last pause \(maintenance MAINTENANCE, from \S+\) ended then$/);
      // Every figure in it is the store's: the pause's start, and when it ended.
      const ended = meta<{ code: string; since: number; endedAt: number }>(home, 'dispatch.last_pause:default');
      expect(ended).toMatchObject({ code: 'MAINTENANCE', since });
      expect(line.detail).toBe(`sending since ${iso(ended!.endedAt)}; the last pause (maintenance MAINTENANCE, from ${iso(since)}) ended then`);
    } finally {
      await daemon.stop();
    }
  });
});
