/**
 * Stop 38's triage (issue 29): three failures found by engineers on other errands, each replayed
 * exactly (`npm run simulate -- --replay test/sim/found/<name>.json --verbose`) and diagnosed from
 * its event trace. All three were the engine's; each replay failed on main (a014c04, and with
 * sim38's wall-clock fix merged) and passes with its fix.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSchedule } from '../../sim/run-schedule.js';
import type { Schedule } from '../../sim/schedule.js';

const found = (name: string): Schedule => (JSON.parse(readFileSync(join(import.meta.dirname, 'found', `${name}.json`), 'utf8')) as { schedule: Schedule }).schedule;

describe("stop 38's found schedules", () => {
  it('a send that left before a wall-clock step back and is answered after it: the row still reaches review within the liveness bound (seed 38)', async () => {
    // One account, `forever` history (every POST of row 3 unanswered for 19 minutes) and the wall
    // clock stepped back an hour at 10.2 s, while row 3's first send was on the way. The step was
    // applied (sim38's store/wall-mark.ts) before the row had a doubt clock; its first "no answer"
    // then seeded doubt_since from last_sent_at, written on the old clock: an hour ahead. The
    // give-up and the stall bound were an hour late; the row was `resending` 14 minutes, told
    // nothing (invariant 20). The engine's: a doubt never begins later than now (store/rows.ts).
    const out = await runSchedule(found('forever-history-step-before-first-answer'));
    expect(out.violations).toEqual([]);
  }, 300_000);

  it('lines written into a claimed file while the balance after the batch is read have result rows too (seed 3801)', async () => {
    // late-lines: a writer rewrites the last line of f1-1.csv (30.507 s), finishBatch looks at the
    // file (30.517 s: 1 line never ordered), a second writer appends 2 lines (30.599 s) while the
    // balance after the batch is read, and the result is written at 31.551 s with 3 rows for a
    // file of 5 (invariant 35). The engine's: the file is looked at again after the balance reads
    // (outbox/finish.ts); test/outbox/changed-after-read.test.ts is the plain test.
    const out = await runSchedule(found('late-lines-during-balance-read'));
    expect(out.violations).toEqual([]);
  }, 300_000);

  it('after a restore, a busy history with one read in five failing: the reconcile-first start finishes (seed 3838)', async () => {
    // Fault class restore (with read-error, forever, old-foreign among 25): the copy is restored
    // with f0-0.csv claimed and not yet stored; `main`'s key is revoked for 19 minutes and
    // `second`'s history is busy (other buyers' orders, two a second) with 20 % of reads failing
    // (500, HTML 502, cut short). Each failing page ended the whole try and the next began at
    // page 1 again; the pages back to the copy grew faster than a try could read them without a
    // failure: STALL after 360 simulated minutes, the reconcile never finished, no restore report,
    // and row 4 (bought on `second` as M100001 before the restore) still `pending`: "a charge read
    // as pending" only because nothing was ever looked up. The engine's: a page that failed on the
    // way is read again (ops/restore-reconcile.ts historyPage); then M100001 settles row 4.
    // test/restore/history-page-fails-on-the-way.test.ts is the plain test.
    const out = await runSchedule(found('restore-history-page-errors'));
    expect(out.violations).toEqual([]);
  }, 600_000);

  it('after a restore, a row its file pins to `second` that the catalog refuses now is held for its lookup on `second` (seed 3801, player-spelling + restore)', async () => {
    // rev38's held refusals (claim/held-refusals.ts) stored such a row on the first account; after
    // its lookup it ended in review on `main`, and its result named `main` for a row the file pins
    // to `second` (invariant 13's pin check). Held on the pinned account now (claim/load.ts holdRow).
    const out = await runSchedule(found('held-row-on-pinned-account'));
    expect(out.violations).toEqual([]);
  }, 300_000);
});
