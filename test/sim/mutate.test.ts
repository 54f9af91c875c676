/**
 * Issue 29 §4: `npm run mutate:sim` (sim/mutate.ts) works end to end on a tiny budget: the first
 * 4 schedules of seed 20261127, with src/store/cost.ts and src/api/classify.ts instrumented by
 * Stryker's instrumenter in a scratch tree.
 *  - a money mutant the simulator must kill: rowMoney treating every cancelled row as not ended
 *    (no money), so a batch's summary no longer matches what the model API charged;
 *  - an equivalent mutant that must survive although the schedules run it: wordsOf's trim of
 *    leading underscores `^_+` → `^_` (the replace before it has already folded every run of
 *    non-alphanumerics into one `_`).
 * The baseline passes every schedule and says which schedules reach which mutant.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyMutant } from '../../sim/mutate-typecheck.js';
import { baseline, instrumentTree, runMutant, scores, type MutantInfo } from '../../sim/mutate.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The line of a text in a source file (1-based): the test follows the code when lines above it move. */
const lineOf = (file: string, text: string): number => {
  const i = readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(text));
  if (i < 0) throw new Error(`${text} is no longer in ${file}`);
  return i + 1;
};

const find = (mutants: MutantInfo[], file: string, line: number, mutator: string, replacement: string): MutantInfo => {
  const m = mutants.find((x) => x.file === file && x.line === line && x.mutator === mutator && x.replacement === replacement);
  if (!m) throw new Error(`no ${mutator} mutant ${replacement} at ${file}:${line}: the code moved; pick the mutant again`);
  return m;
};

/** Schedules of seed 20261127: enough for one to end a cancelled row (the money mutant's mark) in the wider world. */
const SCHEDULES = 10;

describe('npm run mutate:sim', () => {
  it(`kills a money mutant, lets an equivalent one survive, on ${SCHEDULES} schedules`, async () => {
    const files = ['src/store/cost.ts', 'src/api/classify.ts'];
    const { dir, mutants } = await instrumentTree([], files);
    dirs.push(dir);
    const out = mkdtempSync(join(tmpdir(), 'topup-mutate-test-'));
    dirs.push(out);
    expect(mutants.filter((m) => m.file === 'src/store/cost.ts').length).toBeGreaterThan(20);

    const money = find(mutants, 'src/store/cost.ts', lineOf('src/store/cost.ts', 'row.state !== SPENT_END && row.state !== REFUNDABLE_END'), 'EqualityOperator', 'row.state === REFUNDABLE_END');
    const equivalent = find(mutants, 'src/api/classify.ts', lineOf('src/api/classify.ts', ".replace(/^_+|_+$/g, '')"), 'Regex', '/^_|_+$/g');
    // The listed original and replacement are the source's own text, and applying the span gives the mutated line.
    expect(money.original).toBe('row.state !== REFUNDABLE_END');
    expect(applyMutant('x\n  if (row.state !== SPENT_END && row.state !== REFUNDABLE_END) return', { file: money.file, start: { line: 1, column: money.span.start.column }, end: { line: 1, column: money.span.end.column }, replacement: money.replacement })).toContain('row.state !== SPENT_END && row.state === REFUNDABLE_END');

    const cov = await baseline(dir, files, 20261127, SCHEDULES, out, 60_000, 2);
    expect(cov.times.filter((t) => t !== undefined)).toHaveLength(SCHEDULES);
    const opts = { seed: 20261127, schedules: SCHEDULES, hangMs: 60_000, mutantMinutes: 0 };
    const [killed, survived] = await Promise.all([runMutant(dir, files, money, cov, opts), runMutant(dir, files, equivalent, cov, opts)]);

    expect(killed.verdict, killed.detail).toBe('killed');
    // Killed by a money invariant: the spend figures (USD), or, since issue 29's money-cell
    // invariant (25), the result file's money cells (amountUsd, netUsd) of the row the mutant spends.
    expect(killed.detail).toMatch(/USD|amountUsd|netUsd/);
    expect(survived.verdict, survived.detail).toBe('survived');
    expect(survived.covering).toBeGreaterThan(0);
    expect(survived.ran).toBe(survived.covering);
    expect(scores(mutants, [killed, survived]).sample).toBe(0.5);
  }, 240_000);
});
