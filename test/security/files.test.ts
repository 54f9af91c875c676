/**
 * Files on disk: no output, database (-wal/-shm included), job copy or log may carry group or
 * other permission bits (result files hold gift-card codes); and a kill while a result file is
 * being written never leaves a truncated result behind.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, statSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'csv-parse/sync';
import { cliEnv, csv, runCli, sandboxProcess, tempHome, type SandboxProcess, type TempHome } from '../e2e/harness.js';

let home: TempHome | undefined;
let sb: SandboxProcess | undefined;
afterAll(async () => {
  await sb?.stop();
  home?.remove();
});

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

const rows = (n: number) => {
  const r: (string | number)[][] = [['pid', 'userId', 'quantity', 'note']];
  for (let i = 0; i < n; i++) r.push(i % 3 === 0 ? ['KEY-PUBG-60', '', 1, `k${i}`] : ['PUBG-60', String(5_400_000_000 + i), '', `t${i}`]);
  return csv(r);
};

describe('files on disk', () => {
  it('no group/other permission bits on outputs, the database, -wal/-shm and job files; no truncated result after a kill mid-write', async () => {
    home = tempHome('topup-perm-');
    sb = await sandboxProcess(['--processing-share', '0']);
    home.drop('perm.csv', rows(40));
    home.drop('bad.csv', '\u0000\u0001binary');
    // Killed while the first result file is half written.
    const env = cliEnv(home, sb, { TOPUP_LOG_LEVEL: 'debug' });
    const crashed = await runCli(['daemon', '--once'], { ...env, TOPUP_CRASH_AT: 'result-file-half-written:1' }, { timeoutMs: 60_000 });
    expect(crashed.signal).toBe('SIGKILL');
    const partial = walk(home.outbox).filter((f) => f.endsWith('.result.csv'));
    // Any result file present is complete: it parses and has a row per input row.
    const truncated = partial.filter((f) => {
      try {
        const n = (parse(readFileSync(f, 'utf8'), { columns: true, relax_column_count: true }) as unknown[]).length;
        return f.includes('perm') && n !== 40;
      } catch {
        return true;
      }
    });
    const leftovers = walk(home.outbox).filter((f) => f.endsWith('.tmp'));
    // The restart takes the dead process's batch over at once (same host, pid gone) and writes everything.
    const fin = await runCli(['daemon', '--once'], env, { timeoutMs: 60_000 });
    expect(fin.code, fin.stdout.slice(-2000)).toBe(0);
    const result = parse(readFileSync(join(home.outbox, 'perm.result.csv'), 'utf8'), { columns: true, relax_column_count: true }) as unknown[];
    expect(result).toHaveLength(40);

    // Outputs, the database and logs. The claimed input copies (jobs/<batch>/<name>.csv) keep the
    // mode the reseller's own file had; they hold no codes and are reported, not judged.
    const all = walk(home.dir).filter((f) => /\/(outbox|jobs|logs)\//.test(f));
    const inputCopies = all.filter((f) => /\/jobs\/b[^/]+\/[^/]+$/.test(f));
    const files = all.filter((f) => !inputCopies.includes(f));
    const tmpAfterRestart = walk(home.outbox).filter((f) => f.endsWith('.tmp'));
    console.log(`input copies with group/other bits (the user's own mode): ${inputCopies.filter((f) => (statSync(f).mode & 0o077) !== 0).length}; half-written temp files still in the outbox after the restart: ${tmpAfterRestart.length}`);
    const loose = files.filter((f) => (statSync(f).mode & 0o077) !== 0).map((f) => `${relative(home!.dir, f)} ${(statSync(f).mode & 0o777).toString(8)}`);
    const db = ['topup.db', 'topup.db-wal', 'topup.db-shm'].map((f) => join(home!.jobs, f)).filter(existsSync);
    console.log(`files: ${files.length} checked, with group/other bits: ${loose.length}; truncated results after a kill: ${truncated.length}; temp files left after the kill: ${leftovers.length}`);
    expect(db.length).toBeGreaterThan(0);
    expect(loose).toEqual([]);
    expect(truncated).toEqual([]);
  }, 150_000);
});
