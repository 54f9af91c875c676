/**
 * `npm run mutate:sim -- [--sample N|all] [--sample-seed K] [--per-file K] [--seed S] [--schedules B]
 *   [--max-per-mutant K] [--faults a,b] [--no-faults c,d] [--no-swarm] [--workers W]
 *   [--files a.ts,b.ts:10-40] [--mutant ID,…] [--hang-ms MS] [--mutant-minutes M] [--max-minutes M]
 *   [--out DIR] [--resume] [--merge a.json,b.json] [--list] [--draw-only] [--no-typecheck] [--keep]`
 *
 * Mutation testing with the simulator as the only test (issue 29 §4): how much of the money path's
 * behaviour would the simulator notice if it were wrong?
 *
 * 1. A scratch copy of the tree (src/, sim/, test/fixtures/, package.json, tsconfig.json,
 *    node_modules as a link) in which the money-path files (MONEY_PATH, or `--files`) are replaced
 *    by Stryker's instrumented copies (@stryker-mutator/instrumenter, the one `npm run mutate`
 *    uses): every mutant behind a switch, `stryMutAct_9fa48("id")`, off unless the process's env
 *    names it in `__STRYKER_ACTIVE_MUTANT__`. Ids are stable for a given code: the default files
 *    are always instrumented, in this order, whatever `--files` selects.
 * 2. Every mutant is listed (id, file, line, mutator, original → replacement); those on lines
 *    marked `// Stryker disable` are left out, as Stryker does.
 * 3. A seeded sample of N (every file gets `--per-file` first, the rest drawn uniformly).
 * 4. Compile check (sim/mutate-typecheck.ts): a mutant its file's types refuse is counted
 *    neither way, as Stryker's TypeScript checker does.
 * 5. The baseline: the B schedules of seed S (the values `npm run simulate -- --seed S --schedules
 *    B --workers 1 [--faults …]` runs) on the instrumented code with no mutant active. A schedule
 *    the unmutated code fails judges no mutant (listed in the report); Stryker's coverage counters
 *    say which schedules reach which mutant, and each schedule's simulated events its cost. Cached
 *    in DIR by the tree's hash, seed, budget and world.
 * 6. Each sampled mutant in a process of its own (sim/mutate-child.ts), `--workers` at a time: the
 *    schedules that reach it (a schedule that never runs the mutated code runs exactly as in the
 *    baseline: the simulator is deterministic), all of them for a static mutant (module-level: in
 *    force everywhere), cheapest first (at most `--max-per-mutant`), stopping at the first that fails. No schedule reaching it: `no
 *    coverage` (survived, not run). A schedule still running after `--hang-ms`: `timeout`,
 *    counted killed (as Stryker does: a mutant that hangs the engine is noticed). The process
 *    dying after its modules loaded: `crashed`, killed. A module that cannot load: `load error`,
 *    neither way.
 * 7. Score = killed ÷ (killed + survived), per file and over the sample, and an estimate for the
 *    whole of the files (each file's score weighted by its mutants). Written to DIR/mutate-sim.json
 *    and DIR/mutate-sim.md (a table and every survivor), after every mutant (a run stopped from
 *    outside keeps what it measured), and printed. `--resume` keeps the verdicts of DIR's
 *    mutate-sim.json that still hold (kills; survivors of the same src/ and sim/) and runs the
 *    rest; `--merge` writes one report (DIR/mutate-sim-merged.*) of several runs' files.
 *
 * `--mutant 812` (or `--mutant src/poll/verify.ts:120:9`, line and column as listed) runs just
 * those mutants: a replay. `--list` lists the mutants and runs nothing.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Instrumenter } from '@stryker-mutator/instrumenter';
import { MutantTypeChecker, offsetOf } from './mutate-typecheck.js';

const ROOT = join(import.meta.dirname, '..');

/**
 * The money path of issue 29 §4. `file:from-to` mutates those lines only (1-based, inclusive): in
 * src/outbox/ the money columns of the result (amountUsd, refunded, netUsd) and the summary's sums.
 */
export const MONEY_PATH = [
  'src/api/classify.ts',
  'src/api/client.ts',
  'src/api/read.ts',
  'src/dispatch/sender.ts',
  'src/dispatch/failover.ts',
  'src/dispatch/order-match.ts',
  'src/poll/poller.ts',
  'src/poll/verify.ts',
  'src/poll/review-recheck.ts',
  'src/claim/load.ts',
  'src/claim/repeats.ts',
  'src/store/rows.ts',
  'src/store/migrations.ts',
  'src/store/cost.ts',
  'src/ops/cancel.ts',
  'src/ops/retry.ts',
  'src/ops/review.ts',
  'src/orders/desk.ts',
  'src/account/funds.ts',
  'src/outbox/results.ts:99-115',
  'src/outbox/summary.ts:95-131',
  // Last, so the ids of the files above stay as they were: the order id's spellings, read by classify, client, schemas and failover (issue 29).
  'src/api/order-id.ts',
];

export type Verdict = 'killed' | 'timeout' | 'crashed' | 'survived' | 'no coverage' | 'compile error' | 'load error' | 'unconfirmed' | 'not run';
/** Counted as killed / as survived in the score; the rest count neither way. */
const KILLED: Verdict[] = ['killed', 'timeout', 'crashed'];
const SURVIVED: Verdict[] = ['survived', 'no coverage'];

export interface MutantInfo {
  id: string;
  file: string;
  /** 1-based, as an editor shows them. */
  line: number;
  column: number;
  mutator: string;
  original: string;
  replacement: string;
  /** 0-based span, as the instrumenter gives it (the compile check applies it). */
  span: { start: { line: number; column: number }; end: { line: number; column: number } };
  /** Set for a mutant on a line marked `// Stryker disable` (never sampled). */
  ignored?: string;
}

export interface MutantResult {
  mutant: MutantInfo;
  verdict: Verdict;
  /** The schedules that reach it in the baseline (static: all). */
  covering: number;
  isStatic: boolean;
  /** Schedules run before the verdict. */
  ran: number;
  /** The failing schedule's index among the budget's (killed). */
  schedule?: number;
  detail?: string;
  ms: number;
}

interface Args {
  sample: number | 'all';
  sampleSeed: number;
  perFile: number;
  seed: number;
  schedules: number;
  workers: number;
  files: string[] | null;
  mutants: string[] | null;
  hangMs: number;
  /** Wall-time cap per mutant (0: none): past it, a mutant not yet killed survived the schedules run so far. */
  mutantMinutes: number;
  maxMinutes: number;
  out: string;
  list: boolean;
  /** Draw the sample (and run its compile check, cached), print it, run nothing. */
  drawOnly: boolean;
  typecheck: boolean;
  keep: boolean;
  /** The world (`npm run simulate`'s `--faults`, `--no-faults`, `--no-swarm`). */
  faults?: string;
  noFaults?: string;
  swarm: boolean;
  /** At most this many schedules per mutant (0: every one that reaches it), the cheapest first. */
  maxPerMutant: number;
  /** Keep the verdicts of DIR/mutate-sim.json that still hold, run the rest. */
  resume: boolean;
  /** Result files (mutate-sim.json) to merge into DIR's report; runs nothing. */
  merge: string[] | null;
}

/** The world's flags as the child takes them. */
export function worldArgs(a: Pick<Args, 'faults' | 'noFaults' | 'swarm'>): string[] {
  return [...(a.faults !== undefined ? ['--faults', a.faults] : []), ...(a.noFaults !== undefined ? ['--no-faults', a.noFaults] : []), ...(a.swarm ? [] : ['--no-swarm'])];
}

export function parseArgs(argv: string[]): Args {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const num = (name: string, dflt: number): number => {
    const v = Number(get(name) ?? dflt);
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${name}: a number, got ${get(name)}`);
    return v;
  };
  const list = (name: string): string[] | null => (get(name) === undefined ? null : get(name)!.split(',').map((s) => s.trim()).filter(Boolean));
  return {
    sample: get('sample') === 'all' ? 'all' : num('sample', 150),
    sampleSeed: num('sample-seed', 1),
    perFile: num('per-file', 3),
    seed: num('seed', 20261127),
    schedules: Math.max(1, num('schedules', 1000)),
    workers: Math.max(1, num('workers', 2)),
    files: list('files'),
    mutants: list('mutant'),
    hangMs: num('hang-ms', 60_000),
    mutantMinutes: num('mutant-minutes', 0),
    maxMinutes: num('max-minutes', 0),
    out: get('out') ?? join(ROOT, 'reports', 'mutation-sim'),
    list: argv.includes('--list'),
    drawOnly: argv.includes('--draw-only'),
    typecheck: !argv.includes('--no-typecheck'),
    keep: argv.includes('--keep'),
    ...(get('faults') !== undefined ? { faults: get('faults')! } : {}),
    ...(get('no-faults') !== undefined ? { noFaults: get('no-faults')! } : {}),
    swarm: !argv.includes('--no-swarm'),
    maxPerMutant: num('max-per-mutant', 0),
    resume: argv.includes('--resume'),
    merge: list('merge'),
  };
}

interface FileSpec {
  file: string;
  /** 1-based inclusive line range, or the whole file. */
  lines: [number, number] | null;
}

export function parseFileSpec(spec: string): FileSpec {
  const m = /^(.*?):(\d+)-(\d+)$/.exec(spec);
  return m ? { file: m[1]!, lines: [Number(m[2]), Number(m[3])] } : { file: spec, lines: null };
}

const quietLogger = {
  debug: () => {},
  info: () => {},
  trace: () => {},
  warn: (...a: unknown[]) => console.warn(...a),
  error: (...a: unknown[]) => console.error(...a),
  fatal: (...a: unknown[]) => console.error(...a),
  isTraceEnabled: () => false,
  isDebugEnabled: () => false,
  isInfoEnabled: () => false,
  isWarnEnabled: () => true,
  isErrorEnabled: () => true,
  isFatalEnabled: () => true,
};

/** The first line of a piece of code, cut to `max` characters (a block's text is long). */
function short(code: string, max = 70): string {
  const lines = code.split('\n');
  const first = lines[0]!.trim();
  const s = lines.length > 1 ? `${first} …` : first;
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * The scratch tree with the money-path files (and `extra`) instrumented. Returns its path and
 * every mutant, numbered as the instrumenter numbers them (in MONEY_PATH's order, then `extra`).
 */
export async function instrumentTree(extra: string[] = [], only?: string[]): Promise<{ dir: string; mutants: MutantInfo[]; specs: FileSpec[] }> {
  // `only` (the tool's own test): just these files, numbered from 0 (ids then differ from a full run's).
  const specs = (only ?? [...MONEY_PATH, ...extra.filter((e) => !MONEY_PATH.includes(e))]).map(parseFileSpec);
  const dir = mkdtempSync(join(tmpdir(), 'topup-mutate-'));
  for (const part of ['src', 'sim', 'test/fixtures', 'package.json', 'tsconfig.json']) cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const sources = new Map(specs.map((s) => [s.file, readFileSync(join(ROOT, s.file), 'utf8')]));
  const instrumenter = new Instrumenter(quietLogger as never);
  const result = await instrumenter.instrument(
    specs.map((s) => ({
      name: s.file,
      content: sources.get(s.file)!,
      // The instrumenter's ranges are 0-based lines; `end` is exclusive at column 0 of the next.
      mutate: s.lines ? [{ start: { line: s.lines[0] - 1, column: 0 }, end: { line: s.lines[1], column: 0 } }] : true,
    })),
    { plugins: null, excludedMutations: [], ignorers: [] },
  );
  for (const f of result.files) writeFileSync(join(dir, f.name), f.content);
  const mutants = result.mutants.map((m): MutantInfo => {
    const text = sources.get(m.fileName)!;
    const span = { start: m.location.start, end: m.location.end };
    const original = text.slice(offsetOf(text, span.start), offsetOf(text, span.end));
    return {
      id: m.id,
      file: m.fileName,
      line: span.start.line + 1,
      column: span.start.column + 1,
      mutator: m.mutatorName,
      original,
      replacement: m.replacement ?? '',
      span,
      ...(m.status === 'Ignored' ? { ignored: m.statusReason ?? 'disabled' } : {}),
    };
  });
  return { dir, mutants, specs };
}

/** mulberry32: a small seeded PRNG, so a sample is the same for the same seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(xs: T[], rand: () => number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/**
 * A seeded sample of n: `perFile` from every file first (so each file has a score), then the rest
 * uniformly from what is left. `accept` (the compile check) is asked of each candidate in the
 * drawn order; one it refuses is not counted in n (a sample of n mutants that compile) and is
 * returned in `refused`. Returned in id order.
 */
export function drawSample(mutants: MutantInfo[], n: number, seed: number, perFile: number, accept: (m: MutantInfo) => boolean = () => true): { sample: MutantInfo[]; refused: MutantInfo[] } {
  const rand = prng(seed);
  const pool = shuffled(mutants, rand);
  const taken = new Set<MutantInfo>();
  const seen = new Set<MutantInfo>();
  const refused: MutantInfo[] = [];
  const perFileCount = new Map<string, number>();
  const consider = (m: MutantInfo): void => {
    if (seen.has(m)) return;
    seen.add(m);
    if (!accept(m)) {
      refused.push(m);
      return;
    }
    taken.add(m);
    perFileCount.set(m.file, (perFileCount.get(m.file) ?? 0) + 1);
  };
  for (const m of pool) {
    if (taken.size >= n) break;
    if ((perFileCount.get(m.file) ?? 0) < perFile) consider(m);
  }
  for (const m of pool) {
    if (taken.size >= n) break;
    consider(m);
  }
  const byId = (a: MutantInfo, b: MutantInfo): number => Number(a.id) - Number(b.id);
  return { sample: [...taken].sort(byId), refused: refused.sort(byId) };
}

interface Coverage {
  static: string[];
  perMutant: Record<string, number[]>;
  times: number[];
  /** Each schedule's simulated events in the baseline: the deterministic cost a mutant's schedules are ordered by. */
  events?: number[];
  /** Schedules the unmutated code fails: left out of every mutant's (they cannot judge one). */
  failed?: { schedule: number; violation: string }[];
}

interface ChildOutcome {
  loaded: boolean;
  result: null | { verdict: string; schedule?: number; ran?: number; cut?: boolean; violations?: string[] };
  hung: boolean;
  code: number | null;
  stderr: string;
  progressed: number;
}

/** Runs sim/mutate-child.ts in the scratch tree; a schedule that takes longer than `hangMs` ends it. */
function runChild(dir: string, args: string[], env: Record<string, string>, hangMs: number | ((done: number) => number), onProgress?: (n: number) => void): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--max-old-space-size=1536', '--import', 'tsx', join(dir, 'sim', 'mutate-child.ts'), ...args], {
      cwd: dir,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: ChildOutcome = { loaded: false, result: null, hung: false, code: null, stderr: '', progressed: 0 };
    let buf = '';
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(
        () => {
          out.hung = true;
          child.kill('SIGKILL');
        },
        typeof hangMs === 'number' ? hangMs : hangMs(out.progressed),
      );
    };
    arm();
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const msg = JSON.parse(line) as { loaded?: boolean; progress?: number; result?: ChildOutcome['result'] };
        if (msg.loaded) out.loaded = true;
        if (msg.progress !== undefined) {
          out.progressed++;
          onProgress?.(out.progressed);
        }
        if (msg.result) out.result = msg.result;
        arm();
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      out.stderr = (out.stderr + d.toString()).slice(-4000);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      out.code = code;
      resolve(out);
    });
  });
}

function hashTree(dir: string, extra: string): string {
  const h = createHash('sha256').update(extra);
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      // The parent's own files do not change what the schedules do (the child does).
      if (/^mutate(-typecheck)?\.ts$/.test(name)) continue;
      if (statSync(p).isDirectory()) walk(p);
      else h.update(relative(dir, p)).update(readFileSync(p));
    }
  };
  for (const part of ['src', 'sim', 'test/fixtures']) walk(join(dir, part));
  return h.digest('hex').slice(0, 16);
}

/**
 * The baseline run (no mutant), split over `workers` processes: must pass every schedule; gives
 * which schedules reach which mutant, and what each schedule cost.
 */
export async function baseline(dir: string, files: string[], seed: number, schedules: number, outDir: string, hangMs: number, workers: number, world: string[] = []): Promise<Coverage & { cached: boolean; ms: number }> {
  mkdirSync(outDir, { recursive: true });
  const cache = join(outDir, `baseline-${hashTree(dir, `${seed}/${schedules}/${world.join(' ')}`)}.json`);
  if (existsSync(cache)) return { ...(JSON.parse(readFileSync(cache, 'utf8')) as Coverage), cached: true, ms: 0 };
  const t0 = performance.now();
  let progressed = 0;
  const parts = Array.from({ length: Math.min(workers, schedules) }, (_, w) => Array.from({ length: schedules }, (_, i) => i).filter((i) => i % workers === w));
  const outs = await Promise.all(
    parts.map(async (part, w) => {
      const only = join(dir, `baseline-only-${w}.json`);
      const covFile = join(dir, `baseline-coverage-${w}.json`);
      writeFileSync(only, JSON.stringify(part));
      const out = await runChild(dir, ['--baseline', '--seed', String(seed), '--schedules', String(schedules), '--files', files.join(','), '--only', only, '--coverage-out', covFile, ...world], {}, hangMs, () => {
        if (++progressed % 25 === 0) process.stderr.write(`\rbaseline: ${progressed}/${schedules} schedules`);
      });
      return { out, covFile };
    }),
  );
  process.stderr.write('\n');
  const cov: Coverage = { static: [], perMutant: {}, times: [], events: [], failed: [] };
  for (const { out, covFile } of outs) {
    if (out.result?.verdict !== 'baseline-passed') throw new Error(`the baseline run did not finish (exit ${out.code}${out.hung ? ', a schedule hung' : ''}): ${out.stderr}`);
    const part = JSON.parse(readFileSync(covFile, 'utf8')) as { static: string[]; perMutant: Record<string, number[]>; times: [number, number][]; events: [number, number][]; failed: { schedule: number; violation: string }[] };
    cov.static = [...new Set([...cov.static, ...part.static])];
    for (const [id, list] of Object.entries(part.perMutant)) (cov.perMutant[id] ??= []).push(...list);
    for (const [i, ms] of part.times) cov.times[i] = ms;
    for (const [i, n] of part.events) cov.events![i] = n;
    cov.failed!.push(...part.failed);
  }
  cov.failed!.sort((x, y) => x.schedule - y.schedule);
  for (const list of Object.values(cov.perMutant)) list.sort((x, y) => x - y);
  writeFileSync(cache, JSON.stringify(cov));
  return { ...cov, cached: false, ms: performance.now() - t0 };
}

/**
 * The schedules to run for a mutant: each that reaches it, and the one before (work it left), but
 * none the unmutated code fails; cheapest first (by the baseline's simulated events, deterministic;
 * then by index), so a mutant the simulator kills is usually killed by a short schedule, and
 * `maxPerMutant` (0: no cap) keeps the cheapest that many.
 */
export function coveringSchedules(id: string, cov: Coverage, schedules: number, maxPerMutant = 0): { isStatic: boolean; order: number[] } {
  const bad = new Set((cov.failed ?? []).map((f) => f.schedule));
  const isStatic = cov.static.includes(id);
  const set = new Set<number>();
  if (isStatic) for (let i = 0; i < schedules; i++) set.add(i);
  for (const i of cov.perMutant[id] ?? []) {
    if (i < schedules) set.add(i);
    if (i > 0) set.add(i - 1);
  }
  const cost = (i: number): number => cov.events?.[i] ?? 0;
  const order = [...set].filter((i) => !bad.has(i)).sort((a, b) => cost(a) - cost(b) || a - b);
  return { isStatic, order: maxPerMutant > 0 ? order.slice(0, maxPerMutant) : order };
}

export async function runMutant(dir: string, files: string[], m: MutantInfo, cov: Coverage, a: Pick<Args, 'seed' | 'schedules' | 'hangMs' | 'mutantMinutes'> & Partial<Pick<Args, 'faults' | 'noFaults' | 'swarm' | 'maxPerMutant'>>): Promise<MutantResult> {
  const t0 = performance.now();
  const { isStatic, order } = coveringSchedules(m.id, cov, a.schedules, a.maxPerMutant ?? 0);
  const base = { mutant: m, covering: order.length, isStatic };
  if (order.length === 0) return { ...base, verdict: 'no coverage', ran: 0, ms: 0 };
  const only = join(dir, `only-${m.id}.json`);
  writeFileSync(only, JSON.stringify(order));
  const args = ['--seed', String(a.seed), '--schedules', String(a.schedules), '--files', files.join(','), '--only', only, ...(isStatic ? ['--static'] : []), '--cap-ms', String(a.mutantMinutes * 60_000), ...worldArgs({ swarm: true, ...a })];
  // The next schedule's limit: --hang-ms, or five times what it took in the baseline if more (on a
  // busy machine a long schedule is not a hang). Loading the modules counts as the first's.
  const limit = (done: number): number => Math.max(a.hangMs, 5 * (cov.times[order[Math.min(done, order.length - 1)]!] ?? 0));
  const out = await runChild(dir, args, { __STRYKER_ACTIVE_MUTANT__: m.id }, limit);
  rmSync(only, { force: true });
  const ms = performance.now() - t0;
  if (!out.loaded) {
    if (out.hung) return { ...base, verdict: 'timeout', ran: 0, detail: 'hung while its modules loaded', ms };
    return { ...base, verdict: 'load error', ran: 0, detail: out.stderr.split('\n').find((l) => /Error/.test(l))?.slice(0, 300) ?? out.stderr.slice(-300), ms };
  }
  if (out.result) {
    const r = out.result;
    if (r.verdict === 'survived') return { ...base, verdict: 'survived', ran: r.ran ?? order.length, ...(r.cut ? { detail: `time cap: ${r.ran} of ${order.length} schedules run` } : {}), ms };
    return { ...base, verdict: r.verdict === 'unconfirmed' ? 'unconfirmed' : 'killed', ran: r.ran ?? 0, schedule: r.schedule!, detail: r.violations?.[0]?.slice(0, 400), ms };
  }
  if (out.hung) return { ...base, verdict: 'timeout', ran: out.progressed, detail: `schedule ${order[out.progressed]} ran longer than ${limit(out.progressed)} ms (${cov.times[order[out.progressed]!] ?? '?'} ms in the baseline)`, ms };
  return { ...base, verdict: 'crashed', ran: out.progressed, detail: `the simulator's process died (exit ${out.code}): ${out.stderr.split('\n').find((l) => /Error/.test(l))?.slice(0, 300) ?? out.stderr.slice(-300)}`, ms };
}

export interface FileScore {
  file: string;
  mutants: number;
  sampled: number;
  killed: number;
  survived: number;
  noCoverage: number;
  neither: number;
  score: number | null;
}

export function scores(all: MutantInfo[], results: MutantResult[]): { files: FileScore[]; sample: number | null; estimate: number | null } {
  const files = [...new Set(all.map((m) => m.file))].map((file): FileScore => {
    const rs = results.filter((r) => r.mutant.file === file);
    const killed = rs.filter((r) => KILLED.includes(r.verdict)).length;
    const survived = rs.filter((r) => SURVIVED.includes(r.verdict)).length;
    return {
      file,
      mutants: all.filter((m) => m.file === file && !m.ignored).length,
      sampled: rs.length,
      killed,
      survived,
      noCoverage: rs.filter((r) => r.verdict === 'no coverage').length,
      neither: rs.length - killed - survived,
      score: killed + survived === 0 ? null : killed / (killed + survived),
    };
  });
  const k = files.reduce((s, f) => s + f.killed, 0);
  const sv = files.reduce((s, f) => s + f.survived, 0);
  const scored = files.filter((f) => f.score !== null);
  const weight = scored.reduce((s, f) => s + f.mutants, 0);
  return {
    files,
    sample: k + sv === 0 ? null : k / (k + sv),
    estimate: weight === 0 ? null : scored.reduce((s, f) => s + f.score! * f.mutants, 0) / weight,
  };
}

const pct = (x: number | null): string => (x === null ? '–' : `${(100 * x).toFixed(1)} %`);
const cell = (s: string): string => `\`${s.replace(/`/g, "'").replace(/\|/g, '\\|')}\``;

export function markdown(all: MutantInfo[], results: MutantResult[], meta: Record<string, unknown>): string {
  const s = scores(all, results);
  const lines = [
    `# npm run mutate:sim`,
    '',
    ...Object.entries(meta).map(([k, v]) => `- ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`),
    '',
    `Score over the sample: **${pct(s.sample)}** (killed ÷ (killed + survived)); estimate for the files (each file's score weighted by its mutants): **${pct(s.estimate)}**.`,
    '',
    '| file | mutants | sampled | killed | survived | of which no coverage | neither | score |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
    ...s.files.map((f) => `| ${f.file} | ${f.mutants} | ${f.sampled} | ${f.killed} | ${f.survived} | ${f.noCoverage} | ${f.neither} | ${pct(f.score)} |`),
    '',
    '## Survivors',
    '',
    '| id | where | mutator | original → replacement | schedules reaching it |',
    '|--:|---|---|---|--:|',
    ...results
      .filter((r) => SURVIVED.includes(r.verdict))
      .map((r) => `| ${r.mutant.id} | ${r.mutant.file}:${r.mutant.line}:${r.mutant.column} | ${r.mutant.mutator} | ${cell(short(r.mutant.original))} → ${cell(short(r.mutant.replacement))} | ${r.verdict === 'no coverage' ? 'none' : r.covering}${r.isStatic ? ' (static)' : ''}${r.detail ? ` (${r.detail})` : ''} |`),
    '',
    '## Counted neither way',
    '',
    ...results.filter((r) => !KILLED.includes(r.verdict) && !SURVIVED.includes(r.verdict)).map((r) => `- ${r.mutant.id} ${r.mutant.file}:${r.mutant.line} ${r.mutant.mutator} ${cell(short(r.mutant.original))} → ${cell(short(r.mutant.replacement))}: ${r.verdict}${r.detail ? ` (${short(r.detail, 200)})` : ''}`),
    '',
    '## Killed',
    '',
    '| id | where | mutator | verdict | schedules run | failing schedule | first violation |',
    '|--:|---|---|---|--:|--:|---|',
    ...results.filter((r) => KILLED.includes(r.verdict)).map((r) => `| ${r.mutant.id} | ${r.mutant.file}:${r.mutant.line} | ${r.mutant.mutator} | ${r.verdict} | ${r.ran} | ${r.schedule ?? ''} | ${cell(short(r.detail ?? '', 120))} |`),
    '',
  ];
  return lines.join('\n');
}

/**
 * A verdict of an earlier run kept by `--resume`: the same mutant (id, place and text: ids move
 * when the code does), and a verdict that holds: killed, timeout, crashed, load error, or
 * survived / no coverage on the same model and engine (src/, sim/). A survivor of an earlier
 * model, a mutant not run, cut by the time cap or unconfirmed is run again.
 */
export function stillHolds(r: MutantResult & { tree?: string }, toRun: MutantInfo[], tree: string): boolean {
  const m = toRun.find((x) => x.id === r.mutant.id);
  if (!m || m.file !== r.mutant.file || m.line !== r.mutant.line || m.column !== r.mutant.column || m.replacement !== r.mutant.replacement) return false;
  if (KILLED.includes(r.verdict) || r.verdict === 'load error') return true;
  if (SURVIVED.includes(r.verdict)) return r.tree === tree && !(r.detail ?? '').startsWith('time cap');
  return false;
}

/** `--merge a.json,b.json`: one report of several runs' results (a later file's verdict of a mutant wins unless it was not run). */
export function mergeResults(files: string[]): MutantResult[] {
  const by = new Map<string, MutantResult>();
  for (const f of files) {
    const { results } = JSON.parse(readFileSync(f, 'utf8')) as { results: MutantResult[] };
    for (const r of results) {
      const key = `${r.mutant.id}@${r.mutant.file}:${r.mutant.line}:${r.mutant.column}:${r.mutant.replacement}`;
      if (r.verdict === 'not run' && by.has(key)) continue;
      by.set(key, r);
    }
  }
  return [...by.values()].sort((x, y) => Number(x.mutant.id) - Number(y.mutant.id));
}

function matches(m: MutantInfo, sel: string): boolean {
  if (/^\d+$/.test(sel)) return m.id === sel;
  const [file, line, column] = sel.split(':');
  return m.file === file && String(m.line) === line && (column === undefined || String(m.column) === column);
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const fileFilter = a.files?.map(parseFileSpec) ?? null;
  const { dir, mutants, specs } = await instrumentTree(a.files?.filter((f) => !MONEY_PATH.includes(f) && !MONEY_PATH.map((x) => parseFileSpec(x).file).includes(parseFileSpec(f).file)) ?? []);
  try {
    const live = mutants.filter((m) => !m.ignored);
    process.stderr.write(`${mutants.length} mutants in ${specs.length} files (${mutants.length - live.length} on lines marked // Stryker disable); scratch tree ${dir}\n`);
    const inFiles = (m: MutantInfo): boolean => fileFilter === null || fileFilter.some((f) => f.file === m.file && (f.lines === null || (m.line >= f.lines[0] && m.line <= f.lines[1])));
    if (a.merge) {
      const merged = mergeResults(a.merge);
      const m = { command: `npm run mutate:sim -- ${process.argv.slice(2).join(' ')}`.trim(), merged: a.merge.join(', ') };
      mkdirSync(a.out, { recursive: true });
      writeFileSync(join(a.out, 'mutate-sim-merged.json'), `${JSON.stringify({ ...m, score: scores(live, merged), results: merged }, null, 1)}\n`);
      const md = markdown(live, merged, m);
      writeFileSync(join(a.out, 'mutate-sim-merged.md'), md);
      process.stdout.write(`${md}\nwritten: ${join(a.out, 'mutate-sim-merged.json')} and .md\n`);
      return;
    }
    if (a.list) {
      for (const m of mutants.filter(inFiles)) process.stdout.write(`${m.id}\t${m.file}:${m.line}:${m.column}\t${m.mutator}\t${short(m.original)} → ${short(m.replacement)}${m.ignored ? `\t(disabled: ${m.ignored})` : ''}\n`);
      return;
    }
    const compileResults: MutantResult[] = [];
    const t = performance.now();
    const checker = a.typecheck ? new MutantTypeChecker(ROOT) : null;
    const compileErrors = new Map<MutantInfo, string>();
    // The compile check's verdicts, kept in DIR by the file's text, the span and the replacement
    // (a language service check takes a second or more on a busy machine).
    const cacheFile = join(a.out, 'compile-cache.json');
    const compileCache: Record<string, string[]> = existsSync(cacheFile) ? (JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, string[]>) : {};
    const fileHash = new Map<string, string>();
    const compiles = (m: MutantInfo): boolean => {
      if (!checker) return true;
      if (!fileHash.has(m.file)) fileHash.set(m.file, createHash('sha256').update(readFileSync(join(ROOT, m.file))).digest('hex').slice(0, 16));
      const key = `${m.file}@${fileHash.get(m.file)}:${JSON.stringify(m.span)}:${m.replacement}`;
      const errors = (compileCache[key] ??= checker.check({ file: m.file, start: m.span.start, end: m.span.end, replacement: m.replacement }));
      if (errors.length > 0) compileErrors.set(m, errors[0]!);
      return errors.length === 0;
    };
    let toRun: MutantInfo[];
    let refused: MutantInfo[];
    if (a.mutants || a.sample === 'all') {
      const chosen = a.mutants ? live.filter((m) => a.mutants!.some((sel) => matches(m, sel))) : live.filter(inFiles);
      toRun = chosen.filter(compiles);
      refused = chosen.filter((m) => !toRun.includes(m));
    } else {
      ({ sample: toRun, refused } = drawSample(live.filter(inFiles), a.sample, a.sampleSeed, a.perFile, compiles));
    }
    for (const m of refused) compileResults.push({ mutant: m, verdict: 'compile error', covering: 0, isStatic: false, ran: 0, detail: compileErrors.get(m) ?? '', ms: 0 });
    if (toRun.length === 0) throw new Error('no mutant selected that compiles (see --list)');
    if (checker) {
      mkdirSync(a.out, { recursive: true });
      writeFileSync(cacheFile, JSON.stringify(compileCache));
      process.stderr.write(`compile check: ${refused.length} of ${refused.length + toRun.length} mutants drawn do not type-check; ${toRun.length} to run (${((performance.now() - t) / 1000).toFixed(1)} s)\n`);
    }
    if (a.drawOnly) {
      for (const m of toRun) process.stdout.write(`${m.id}\t${m.file}:${m.line}:${m.column}\t${m.mutator}\t${short(m.original)} → ${short(m.replacement)}\n`);
      return;
    }
    const files = specs.map((s) => s.file);
    const world = worldArgs(a);
    const cov = await baseline(dir, files, a.seed, a.schedules, a.out, a.hangMs, a.workers, world);
    const failedBase = cov.failed ?? [];
    process.stderr.write(`baseline: ${a.schedules} schedules of seed ${a.seed}${world.length ? ` (${world.join(' ')})` : ''}, ${a.schedules - failedBase.length} pass${failedBase.length ? `, ${failedBase.length} fail on the unmutated code and judge no mutant (${failedBase.map((f) => f.schedule).join(', ')})` : ''}${cov.cached ? ' (cached)' : ` (${(cov.ms / 1000).toFixed(0)} s)`}; ${cov.static.length} static mutants\n`);
    const base = a.mutants ? 'mutate-sim-replay' : 'mutate-sim';
    const setting = { seed: a.seed, schedules: a.schedules, world: world.join(' '), maxPerMutant: a.maxPerMutant };
    // The model's and the engine's code as it stands (src/, sim/): a survivor found on another is run again.
    const tree = hashTree(dir, '');
    const kept = new Map<string, MutantResult>();
    /** Mutants an earlier run judged whose verdict no longer holds (survivors of an earlier model): run first. */
    const again = new Set<string>();
    const earlier = new Map<string, MutantResult>();
    if (a.resume && existsSync(join(a.out, `${base}.json`))) {
      const prev = JSON.parse(readFileSync(join(a.out, `${base}.json`), 'utf8')) as { setting?: typeof setting; tree?: string; results: (MutantResult & { tree?: string })[] };
      if (JSON.stringify(prev.setting) !== JSON.stringify(setting)) process.stderr.write(`--resume: ${base}.json was run with ${JSON.stringify(prev.setting)}, not ${JSON.stringify(setting)}: nothing kept\n`);
      else for (const r of prev.results) if (stillHolds(r, toRun, tree)) kept.set(r.mutant.id, r);
      else if (r.verdict !== 'not run') {
        again.add(r.mutant.id);
        earlier.set(r.mutant.id, r);
      }
      process.stderr.write(`--resume: ${kept.size} verdicts kept from ${base}.json\n`);
    }
    const results: MutantResult[] = [...compileResults, ...kept.values()];
    // Run in a seeded random order, not file by file: a run cut by --max-minutes (or killed) leaves
    // out a random part of the sample, not the last files.
    // With --resume, the survivors of an earlier model first: the widened model's effect is measured first.
    toRun = shuffled(toRun.filter((m) => !kept.has(m.id)), prng(a.sampleSeed + 1));
    toRun = [...toRun.filter((m) => again.has(m.id)), ...toRun.filter((m) => !again.has(m.id))];
    let next = 0;
    let done = 0;
    const deadline = a.maxMinutes > 0 ? started + a.maxMinutes * 60_000 : Infinity;
    const meta = (): Record<string, unknown> => ({
      command: `npm run mutate:sim -- ${process.argv.slice(2).join(' ')}`.trim(),
      seed: a.seed,
      schedules: a.schedules,
      world: world.join(' ') || 'all fault classes, swarm',
      'schedules per mutant': a.maxPerMutant > 0 ? `at most ${a.maxPerMutant}, the cheapest that reach it` : 'every one that reaches it',
      'baseline failures (left out)': failedBase.map((f) => `${f.schedule}: ${f.violation.slice(0, 160)}`),
      sample: a.mutants ? `mutants ${a.mutants.join(',')}` : `${toRun.length + kept.size} that compile of ${live.filter(inFiles).length} (sample seed ${a.sampleSeed}, ${a.perFile} per file first; ${refused.length} drawn that do not compile)`,
      kept: kept.size,
      workers: a.workers,
      wall: `${((performance.now() - started) / 60_000).toFixed(1)} min`,
    });
    // Written after every mutant: a run stopped from outside (timeout, ^C) keeps what it measured; --resume goes on from there.
    const save = (final: boolean): string => {
      const sorted = [...results].sort((x, y) => Number(x.mutant.id) - Number(y.mutant.id));
      // A mutant not run yet keeps its earlier verdict (of an earlier model) in the file, so that a stopped run resumed runs it first again.
      const pending = final ? [] : toRun.filter((m) => !results.some((r) => r.mutant.id === m.id)).map((m): MutantResult => earlier.get(m.id) ?? { mutant: m, verdict: 'not run', covering: 0, isStatic: false, ran: 0, detail: 'the run stopped first', ms: 0 });
      const all = [...sorted, ...pending].sort((x, y) => Number(x.mutant.id) - Number(y.mutant.id));
      mkdirSync(a.out, { recursive: true });
      const m = meta();
      writeFileSync(join(a.out, `${base}.json`), `${JSON.stringify({ ...m, setting, tree, wallMs: Math.round(performance.now() - started), score: scores(live.filter(inFiles), all), results: all }, null, 1)}\n`);
      const md = markdown(live.filter(inFiles), all, m);
      writeFileSync(join(a.out, `${base}.md`), md);
      return md;
    };
    const worker = async (): Promise<void> => {
      while (next < toRun.length) {
        const m = toRun[next++]!;
        if (performance.now() > deadline) {
          results.push({ mutant: m, verdict: 'not run', covering: 0, isStatic: false, ran: 0, detail: `--max-minutes ${a.maxMinutes} reached`, ms: 0 });
          continue;
        }
        const r: MutantResult & { tree?: string } = { ...(await runMutant(dir, files, m, cov, a)), tree };
        results.push(r);
        done++;
        process.stderr.write(`[${done}/${toRun.length}] #${m.id} ${m.file}:${m.line} ${m.mutator}: ${r.verdict}${r.schedule !== undefined ? ` at schedule ${r.schedule}` : ''} (${r.ran}/${r.covering} schedules, ${(r.ms / 1000).toFixed(1)} s)\n`);
        save(false);
      }
    };
    await Promise.all(Array.from({ length: a.workers }, worker));
    const md = save(true);
    process.stdout.write(`${md}\nwritten: ${join(a.out, `${base}.json`)} and .md\n`);
  } finally {
    if (a.keep) process.stderr.write(`scratch tree kept: ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 70;
  });
}
