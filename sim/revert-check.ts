/**
 * `npx tsx sim/revert-check.ts [--schedules N] [--seed S] [--only ID] [--workers W] [--no-swarm]`
 *
 * For each revert of sim/reverts.ts: a scratch copy of this repository with that one fix undone,
 * the simulator run on it (2 workers) until it finds a violation or N schedules pass. Prints one
 * line per revert: found or not, after how many schedules (per worker) and how long, and the first
 * violation. The proof that the simulator looks where the money defects were.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REVERTS } from './reverts.js';

const ROOT = join(import.meta.dirname, '..');
const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const schedules = Number(arg('schedules', '3000'));
const seed = Number(arg('seed', '7'));
const only = arg('only', '');
/** Workers of each run (run.ts --workers; default: one per core), and `--no-swarm` passed on (every class of the revert's `faults` on in every schedule). */
const workers = arg('workers', '');
const noSwarm = process.argv.includes('--no-swarm');

for (const r of REVERTS) {
  if (only && r.id !== only) continue;
  const dir = mkdtempSync(join(tmpdir(), `topup-revert-${r.id}-`));
  try {
    for (const part of ['src', 'sim', 'test/fixtures', 'package.json', 'tsconfig.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    for (const e of r.edits) {
      const path = join(dir, e.file);
      const text = readFileSync(path, 'utf8');
      if (!text.includes(e.find)) throw new Error(`${r.id}: ${e.file} no longer has the text this revert replaces; update sim/reverts.ts`);
      writeFileSync(path, text.replace(e.find, e.replace));
    }
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', join(dir, 'tsconfig.json')], { cwd: dir, stdio: 'inherit' });
    const t0 = performance.now();
    const out = spawnSync(process.execPath, ['--import', 'tsx', join(dir, 'sim/run.ts'), '--seed', String(seed), '--schedules', String(schedules), '--accounts', r.accounts ?? 'mixed', '--api-orders', r.apiOrders ?? 'mixed', ...(r.faults ? ['--faults', r.faults] : []), ...(workers ? ['--workers', workers] : []), ...(noSwarm ? ['--no-swarm'] : []), '--json'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 });
    const s = (performance.now() - t0) / 1000;
    const line = out.stdout.split('\n').find((l) => l.startsWith('{'));
    if (!line) throw new Error(`${r.id}: the simulator printed no report (exit ${out.status}): ${out.stderr.slice(-2000)}`);
    const rep = JSON.parse(line) as { schedules: number; failures: { seed: number; afterRuns: number; violations: string[] }[] };
    const f = rep.failures[0];
    process.stdout.write(
      f
        ? `${r.id}: FOUND by worker seed ${f.seed} after ${f.afterRuns} schedules (${s.toFixed(0)} s with shrinking): ${f.violations[0]?.slice(0, 300)}\n`
        : `${r.id}: not found in ${rep.schedules} schedules (${s.toFixed(0)} s)\n`,
    );
  } finally {
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  }
}
