/**
 * The short torture run inside `npm test`: the --quick scenarios that fit in about two minutes
 * (power-cut runs in `npm run torture -- --quick`). Every figure must be at its
 * target. A failure names the seed and the command that replays the scenario exactly; set
 * TORTURE_SEED to pin the seed here, and TORTURE_ANSWERS=real-world to run the scenarios against
 * a sandbox that answers like a real deployment.
 *
 * The scenarios are spread over three test files (torture-*.test.ts, three each) so that vitest
 * runs them on separate workers: in one file they ran one after another, the suite's longest file.
 */
import { describe, expect, it } from 'vitest';
import { runScenario, type ScenarioResult } from '../../torture/lib.js';
import { SCENARIOS } from '../../torture/scenarios/index.js';

const SEED = process.env.TORTURE_SEED ? Number(process.env.TORTURE_SEED) : Math.floor(Math.random() * 2 ** 31);
const ANSWERS = process.env.TORTURE_ANSWERS === 'real-world' ? 'real-world' : 'spec';

const describeLine = (r: ScenarioResult) => `seed ${r.seed}; reproduce: ${r.reproduce}`;

/** Declares one test per named scenario: every figure at its target. */
export function tortureQuick(names: readonly string[]): void {
  const cache = new Map<string, Promise<ScenarioResult>>();
  const run = (name: string) => {
    if (!cache.has(name)) {
      const s = SCENARIOS.find((x) => x.name === name);
      if (!s) throw new Error(`no torture scenario named ${name}`);
      cache.set(name, runScenario(s, { quick: true, seed: SEED, answers: ANSWERS, log: () => {} }));
    }
    return cache.get(name)!;
  };
  describe(`torture --quick (seed ${SEED}, ${ANSWERS} answers)`, () => {
    for (const name of names) {
      it(`${name}: every figure at its target`, async () => {
        const r = await run(name);
        expect(r.error, `${describeLine(r)}\n${r.error}`).toBeUndefined();
        const missed = r.figures.filter((f) => !f.ok);
        expect(missed.map((f) => `${f.name}: ${f.value} (target ${f.target})`), describeLine(r)).toEqual([]);
      }, 240_000);
    }
  });
}
