/**
 * 8. Power cut: a kill at every commit point (intent, answer, final result, result file half
 * written) and 100 kills at random instants; after each, PRAGMA integrity_check on the
 * daemon's database, and after a kill at the intent commit the `sending` row with its exact
 * body must be on disk. (A SIGKILL of the process is what we can do here. It is not a power
 * cut: intents are committed synchronous=NORMAL and the log is fdatasync'ed off the loop
 * (store/wal-sync.ts), so a kill finds in the OS cache what a power cut finds only once that sync
 * returned; the sync's ordering and its failures are tested in test/store/wal-sync*.test.ts.)
 */
import { killLoop } from './sigkill-loop.js';
import type { Scenario } from '../lib.js';

export const powerCut: Scenario = {
  name: 'power-cut',
  title: 'Power cut: commit points + random kills, integrity_check',
  async run(ctx) {
    const points = ['intent-committed', 'response-received', 'before-final-commit', 'result-file-half-written'];
    const targeted = ctx.quick ? points.map((p) => `${p}:${p.startsWith('result') ? 1 : 2}`) : points.flatMap((p) => (p.startsWith('result') ? [`${p}:1`, `${p}:2`] : [`${p}:1`, `${p}:4`, `${p}:11`]));
    const o = ctx.quick
      ? { rows: 120, kills: 10, minMs: 300, maxMs: 1200, targeted }
      : { rows: 400, kills: 100, minMs: 300, maxMs: 1200, targeted };
    const r = await killLoop(ctx, o);
    return r.figures.filter((f) => !/extra submit/.test(f.name));
  },
};
