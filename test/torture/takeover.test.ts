/**
 * The torture scenario `takeover` (issue 32 item 5), quick: the primary killed mid-batch with its
 * litestream, a second home restored from the replica by `topup takeover` finishes the batch;
 * every figure at its target (0 bought twice, 0 lost, recovery point ≤ 1 s, recovery time ≤ 60 s,
 * the old primary stopped by the fence). Needs the litestream binary (@flydotio/litestream, or
 * TOPUP_LITESTREAM_BIN).
 */
import { describe, expect, it } from 'vitest';
import { runScenario } from '../../torture/lib.js';
import { takeover } from '../../torture/scenarios/takeover.js';

const SEED = process.env.TORTURE_SEED ? Number(process.env.TORTURE_SEED) : Math.floor(Math.random() * 2 ** 31);

describe(`torture takeover --quick (seed ${SEED})`, () => {
  it('every figure at its target', async () => {
    const r = await runScenario(takeover, { quick: true, seed: SEED, log: () => {} });
    expect(r.error, `${r.reproduce}\n${r.error}`).toBeUndefined();
    expect(r.figures.filter((f) => !f.ok).map((f) => `${f.name}: ${f.value} (target ${f.target})`), r.reproduce).toEqual([]);
  }, 240_000);
});
