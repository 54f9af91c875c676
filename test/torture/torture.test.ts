/**
 * The short torture run inside `npm test`: the --quick scenarios that fit in about two minutes
 * (power-cut runs in `npm run torture -- --quick`). Every figure must be at its
 * target. A failure names the seed and the command that replays the scenario exactly; set
 * TORTURE_SEED to pin the seed here.
 *
 * KNOWN_BUGS lists figures that miss their target because of a bug found by this suite (see the
 * README's torture section). They are not asserted here — the bugs show up on some seeds and
 * not others, so an it.fails would be flaky — but every run prints them with their target.
 * The targets themselves are never loosened: `npm run torture` fails on them. Delete the entry
 * once the bug is fixed, and they are asserted again.
 */
import { describe, expect, it } from 'vitest';
import { runScenario, type ScenarioResult } from '../../torture/lib.js';
import { SCENARIOS } from '../../torture/scenarios/index.js';

const SEED = process.env.TORTURE_SEED ? Number(process.env.TORTURE_SEED) : Math.floor(Math.random() * 2 ** 31);
const IN_NPM_TEST = ['sigkill', 'lost-responses', 'duplicate-in-flight', 'rate', 'retry-after', 'conditions', 'resubmit', 'same-csv', 'swallow'];

/** scenario → figure-name patterns that miss their target because of an open bug. */
const KNOWN_BUGS: Record<string, { figures: RegExp; bug: string }> = {};

const cache = new Map<string, Promise<ScenarioResult>>();
const run = (name: string) => {
  if (!cache.has(name)) {
    const s = SCENARIOS.find((x) => x.name === name)!;
    cache.set(name, runScenario(s, { quick: true, seed: SEED, log: () => {} }));
  }
  return cache.get(name)!;
};

const describeLine = (r: ScenarioResult) => `seed ${r.seed}; reproduce: ${r.reproduce}`;

describe(`torture --quick (seed ${SEED})`, () => {
  for (const name of IN_NPM_TEST) {
    const known = KNOWN_BUGS[name];
    it(`${name}: every figure at its target${known ? ' (except the known bug below)' : ''}`, async () => {
      const r = await run(name);
      expect(r.error, `${describeLine(r)}\n${r.error}`).toBeUndefined();
      const missed = r.figures.filter((f) => !f.ok && !(known && known.figures.test(f.name)));
      expect(missed.map((f) => `${f.name}: ${f.value} (target ${f.target})`), describeLine(r)).toEqual([]);
    }, 240_000);
    if (known) {
      it(`${name}: KNOWN BUG (open, printed not asserted) — ${known.bug}`, async () => {
        const r = await run(name);
        const bugFigures = r.figures.filter((f) => known.figures.test(f.name));
        expect(bugFigures.length).toBeGreaterThan(0);
        const missed = bugFigures.filter((f) => !f.ok).map((f) => `${f.name}: ${f.value} (target ${f.target})`);
        console.warn(`${name}: known bug — ${missed.length ? missed.join('; ') : 'not triggered on this seed'} (${describeLine(r)})`);
      }, 240_000);
    }
  }
});
