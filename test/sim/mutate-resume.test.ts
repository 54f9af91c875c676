/**
 * `npm run mutate:sim`'s bookkeeping (sim/mutate.ts), without running the simulator:
 *  - a mutant's schedules: those that reach it and the one before each, never one the unmutated
 *    code fails, cheapest first by the baseline's simulated events (deterministic), at most
 *    `--max-per-mutant`;
 *  - the sample is the same for the same seed, and every file gets its share first;
 *  - `--resume` keeps a verdict only while it still holds (a kill; a survivor of the same model),
 *    and never one of a mutant whose text moved;
 *  - `--merge`: a later run's verdict of a mutant wins, unless it was not run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { coveringSchedules, drawSample, mergeResults, stillHolds, type MutantInfo, type MutantResult, type Verdict } from '../../sim/mutate.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const mutant = (id: string, file = 'src/store/cost.ts', line = 10, replacement = 'false'): MutantInfo => ({
  id,
  file,
  line,
  column: 5,
  mutator: 'ConditionalExpression',
  original: 'x',
  replacement,
  span: { start: { line: line - 1, column: 4 }, end: { line: line - 1, column: 5 } },
});
const result = (m: MutantInfo, verdict: Verdict, extra: Partial<MutantResult & { tree: string }> = {}): MutantResult & { tree?: string } => ({ mutant: m, verdict, covering: 3, isStatic: false, ran: 3, ms: 1, ...extra });

describe('npm run mutate:sim: schedules, sample, resume, merge', () => {
  it('runs the schedules that reach a mutant cheapest first, none the baseline fails, at most --max-per-mutant', () => {
    const cov = {
      static: ['9'],
      perMutant: { '1': [2, 5, 7] },
      times: [],
      // events per schedule: 5 is the cheapest, then 1, 4, 2, 6, 7
      events: [50, 20, 40, 90, 30, 10, 45, 60],
      failed: [{ schedule: 6, violation: 'a failure the unmutated code has' }],
    };
    // reaching 2, 5, 7 and the one before each (1, 4, 6); 6 fails in the baseline
    expect(coveringSchedules('1', cov, 8)).toEqual({ isStatic: false, order: [5, 1, 4, 2, 7] });
    expect(coveringSchedules('1', cov, 8, 2).order).toEqual([5, 1]);
    // a static mutant: every schedule but the failing one
    expect(coveringSchedules('9', cov, 8)).toEqual({ isStatic: true, order: [5, 1, 4, 2, 0, 7, 3] });
    expect(coveringSchedules('3', cov, 8).order).toEqual([]);
  });

  it('draws the same sample for the same seed, each file its share first', () => {
    const all = [...Array.from({ length: 40 }, (_, i) => mutant(String(i), 'src/a.ts')), ...Array.from({ length: 4 }, (_, i) => mutant(String(40 + i), 'src/b.ts'))];
    const one = drawSample(all, 10, 7, 2).sample.map((m) => m.id);
    expect(drawSample(all, 10, 7, 2).sample.map((m) => m.id)).toEqual(one);
    expect(drawSample(all, 10, 8, 2).sample.map((m) => m.id)).not.toEqual(one);
    expect(drawSample(all, 10, 7, 2).sample.filter((m) => m.file === 'src/b.ts').length).toBeGreaterThanOrEqual(2);
    // one the compile check refuses is not counted in n
    const refusing = drawSample(all, 10, 7, 2, (m) => m.id !== one[0]);
    expect(refusing.sample).toHaveLength(10);
    expect(refusing.refused.map((m) => m.id)).toEqual([one[0]]);
  });

  it('--resume keeps kills, survivors of the same model only, and nothing of a mutant that moved', () => {
    const m = mutant('7');
    const toRun = [m];
    expect(stillHolds(result(m, 'killed', { tree: 'old' }), toRun, 'new')).toBe(true);
    expect(stillHolds(result(m, 'timeout'), toRun, 'new')).toBe(true);
    expect(stillHolds(result(m, 'survived', { tree: 'new' }), toRun, 'new')).toBe(true);
    // the model widened since: run it again
    expect(stillHolds(result(m, 'survived', { tree: 'old' }), toRun, 'new')).toBe(false);
    expect(stillHolds(result(m, 'no coverage', { tree: 'old' }), toRun, 'new')).toBe(false);
    // cut by the time cap, not run, unconfirmed: run it again
    expect(stillHolds(result(m, 'survived', { tree: 'new', detail: 'time cap: 3 of 9 schedules run' }), toRun, 'new')).toBe(false);
    expect(stillHolds(result(m, 'not run'), toRun, 'new')).toBe(false);
    expect(stillHolds(result(m, 'unconfirmed'), toRun, 'new')).toBe(false);
    // the same id on another line or with another replacement is another mutant
    expect(stillHolds(result(mutant('7', 'src/store/cost.ts', 11), 'killed'), toRun, 'new')).toBe(false);
    expect(stillHolds(result(mutant('7', 'src/store/cost.ts', 10, 'true'), 'killed'), toRun, 'new')).toBe(false);
    // not in this run's sample
    expect(stillHolds(result(mutant('8'), 'killed'), toRun, 'new')).toBe(false);
  });

  it('--merge: a later verdict wins unless it was not run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'topup-mutate-merge-'));
    dirs.push(dir);
    const [a, b, c] = [mutant('1'), mutant('2'), mutant('3')];
    writeFileSync(join(dir, 'one.json'), JSON.stringify({ results: [result(a, 'survived'), result(b, 'killed'), result(c, 'survived')] }));
    writeFileSync(join(dir, 'two.json'), JSON.stringify({ results: [result(a, 'killed'), result(b, 'not run')] }));
    const merged = mergeResults([join(dir, 'one.json'), join(dir, 'two.json')]);
    expect(merged.map((r) => [r.mutant.id, r.verdict])).toEqual([
      ['1', 'killed'],
      ['2', 'killed'],
      ['3', 'survived'],
    ]);
  });
});
