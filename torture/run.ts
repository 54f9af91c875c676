/**
 * `npm run torture [-- --quick] [--seed N] [--only NAME[,NAME]] [--answers spec|real-world]`
 *
 * `--answers real-world` runs every scenario against a sandbox that answers like a real
 * deployment (numbers as strings, status aliases, 19-digit ids, HTML 502s, unrefunded cancels…;
 * see src/sandbox/real-world.ts); the judge reads the same ledger either way.
 *
 * Runs each scenario against the real `topup daemon` and a sandbox child process, prints the
 * figures table, writes torture/results/latest.json, and exits 1 when any figure misses its
 * target (printing the seed and the command that replays that scenario exactly).
 */
import { execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScenario, type AnswerStyle, type ScenarioResult } from './lib.js';
import { table, writeJson } from './report.js';
import { SCENARIOS } from './scenarios/index.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const quick = args.includes('--quick');
const seed = flag('--seed') !== undefined ? Number(flag('--seed')) : Math.floor(Math.random() * 2 ** 31);
const only = flag('--only')?.split(',');
const answers = (flag('--answers') ?? 'spec') as AnswerStyle;
const unknown = only?.filter((n) => !SCENARIOS.some((s) => s.name === n)) ?? [];
if (!Number.isSafeInteger(seed) || unknown.length > 0 || (answers !== 'spec' && answers !== 'real-world')) {
  process.stderr.write(`usage: torture/run.ts [--quick] [--seed N] [--only ${SCENARIOS.map((s) => s.name).join(',')}] [--answers spec|real-world]\n`);
  process.exit(2);
}

const chosen = SCENARIOS.filter((s) => !only || only.includes(s.name));
process.stderr.write(`torture: ${chosen.length} scenario(s), ${quick ? 'quick' : 'full'}, seed ${seed}, ${answers} answers\n`);
const started = Date.now();
const results: ScenarioResult[] = [];
for (const s of chosen) {
  process.stderr.write(`── ${s.name}: ${s.title}\n`);
  const r = await runScenario(s, { quick, seed, answers });
  results.push(r);
  process.stderr.write(`   ${r.ok ? 'ok' : 'FAILED'} in ${r.seconds} s${r.ok ? '' : ` — reproduce with: ${r.reproduce}`}\n`);
  if (r.error) process.stderr.write(`${r.error}\n`);
}
const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
// Which code was judged: the commit, and whether src/ differed from it.
const git = (args: string[]): string => {
  try {
    return execFileSync('git', args, { cwd: join(dirname(fileURLToPath(import.meta.url)), '..'), encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};
const build = { commit: git(['rev-parse', '--short', 'HEAD']), dirtySrc: git(['status', '--porcelain', '--', 'src']) !== '' };
const answersArg = answers === 'spec' ? '' : ` --answers ${answers}`;
writeJson(out, results, { command: `npm run torture --${quick ? ' --quick' : ''} --seed ${seed}${answersArg}`, build, seed, quick, answers, seconds: Math.round((Date.now() - started) / 1000), node: process.version, date: new Date().toISOString() });
process.stdout.write(`\n${table(results)}\n\ncommit ${build.commit}${build.dirtySrc ? ' + uncommitted src/' : ''} · seed ${seed} · ${answers} answers · ${Math.round((Date.now() - started) / 1000)} s · ${out}\n`);
const failed = results.filter((r) => !r.ok);
if (failed.length > 0) {
  process.stdout.write(`\nFAILED: ${failed.map((r) => r.name).join(', ')}. Reproduce exactly with:\n${failed.map((r) => `  ${r.reproduce}`).join('\n')}\n`);
  process.exit(1);
}
process.exit(0);
