/**
 * Issue 23: what the simulator found in the order API's rules (the lead's desk, 0bd77f6), each a
 * shrunk schedule replayed exactly (`npm run simulate -- --replay test/sim/found/<name>.json --verbose`).
 * Each FAILS on 0bd77f6 and passes once the defect is fixed (the fixes are in src/, the lead's).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSchedule } from '../../sim/run-schedule.js';
import type { Schedule } from '../../sim/schedule.js';

const found = (name: string): Schedule => (JSON.parse(readFileSync(join(import.meta.dirname, 'found', `${name}.json`), 'utf8')) as { schedule: Schedule }).schedule;

describe('API orders: schedules the simulator found', () => {
  it('the runner does not wake every 5 ms once the day of an API batch with live orders is over', async () => {
    // Queued orders (queue: true) wait for balance in the day's API batch; its day ends (00:01:00
    // with the grace) while they still wait: finishing's nextDueAt keeps returning the batch's
    // closing time, now in the past, and the runner sleeps its shortest sleep (5 ms) over and over
    // until the orders end (SPIN, and those orders still pending when the run gives up).
    const out = await runSchedule(found('api-day-closed-spin'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a shop resending the body of its order after the order moved to another account is told it is the same order, not 409', async () => {
    // Two accounts: API-2 is accepted on `main`, refused there (an account problem) and moved to
    // `second` as API-2-second (API-2 kept in left_trxids). The shop sends the same body again: the
    // desk looks for an API order whose trxid is API-2, finds none, then finds API-2 among the
    // trxids left by a move, and answers 409 TRXID_USED: the shop reads its own order as not placed
    // (and GET /orders/API-2 answers 404) while it is being bought.
    const out = await runSchedule(found('api-order-moved-resend'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('after the wall clock steps back across midnight, an acceptance is not a 500 (the day\'s batch is already done)', async () => {
    // Two days: the first day's API batch is finished at 00:01:00 (its orders ended); the wall
    // clock then steps back an hour (NTP). utcDay(now) is the first day again: todaysApiBatch
    // returns its batch, `done`, and the trigger rows_api_insert_open refuses the insert, which
    // fails the whole group commit: every acceptance is answered 500 for an hour.
    const out = await runSchedule(found('api-day-stepped-back-500'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a review row resolved while the day\'s batch is being finished: the batch is not marked done with the row still "review" in its result', async () => {
    // The day's batch ends; the finishing step writes its result (row 2 in review); an operator's
    // resolve (another process) settles row 2 "not charged" in between; the batch was then marked
    // done with the stale result (the resolve saw an open batch, so it wrote no next version).
    const out = await runSchedule(found('api-resolved-while-finishing'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a shop order refused 409 while a file row held its trxid, stored once the file was cancelled: the door decided for the one that came second', async () => {
    // Seed 513121147 (shrunk): file 0 holds SHOP-3 (waiting for balance); the shop sends SHOP-3
    // and is refused 409 TRXID_USED (the file row came first: right); the file's batch is
    // cancelled before sending, which frees the trxid; the shop's next send of SHOP-3 is stored and
    // bought once. Invariant 15 ("the stored body is never refused 409") judged the 409 given
    // before the order existed: a false alarm of the model, which now judges only the refusals of
    // sends after the first that could have stored the body. Failed before that change.
    const out = await runSchedule(found('api-refused-before-stored'));
    expect(out.violations).toEqual([]);
    expect(out.behaviours['action: cancel'] ?? 0).toBeGreaterThan(0);
  }, 120_000);
});
