/**
 * Issue 22: what the simulator found in the rules of several supplier accounts, each a shrunk
 * schedule replayed exactly (`npm run simulate -- --replay test/sim/found/<name>.json --verbose`).
 * Each FAILS on the code it was found on (4a321cb) and passes once the defect is fixed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSchedule } from '../../sim/run-schedule.js';
import type { Schedule } from '../../sim/schedule.js';

const found = (name: string): Schedule => (JSON.parse(readFileSync(join(import.meta.dirname, 'found', `${name}.json`), 'utf8')) as { schedule: Schedule }).schedule;

describe('two accounts: schedules the simulator found', () => {
  it('money: a row moved off a paused account leaves its trxid there; a re-drop of the file takes that trxid and buys the purchase again on the account left', async () => {
    // File 0 (an edited copy) is stored; its row with trxid OLD-2 is routed to `second` (cheaper),
    // which is in maintenance: after max_queue_delay the row moves to `main` as OLD-2-main. The
    // file itself is dropped 48 s later: "trxid already used" looks at rows.trxid only, where OLD-2
    // no longer is, so the re-drop's row takes OLD-2, goes to `second` and is bought there too.
    const out = await runSchedule(found('redrop-takes-left-trxid'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a row the file pins to an account (`account` column) is never moved to another by failover', async () => {
    // One row pinned to `main`; main refuses its pid (UNKNOWN PID): failover moves it to `second`.
    const out = await runSchedule(found('pinned-row-moved'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('money (one account): a cancelled file with a trxid of its own, dropped again and retried at the same moment, is bought once', async () => {
    // A file with one row trxid SHOP-1 and one without is cancelled before anything is sent (its
    // trxids freed); it is dropped again and `topup retry` of the cancelled batch runs at once. The
    // retry gave the row a new derived trxid, the re-drop kept SHOP-1: both bought it (found with
    // seed 20261130, mixed accounts). The retry now keeps the file's SHOP-1 for a row never sent.
    const out = await runSchedule(found('retry-and-redrop-of-cancelled'));
    expect(out.violations).toEqual([]);
  }, 120_000);
});

