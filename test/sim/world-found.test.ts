/**
 * Issue 29: what the wider world (sim/world.ts) found, each schedule replayed exactly
 * (`npm run simulate -- --replay test/sim/found/<name>.json --verbose`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSchedule } from '../../sim/run-schedule.js';
import type { Schedule } from '../../sim/schedule.js';

const found = (name: string): Schedule => (JSON.parse(readFileSync(join(import.meta.dirname, 'found', `${name}.json`), 'utf8')) as { schedule: Schedule }).schedule;

describe('the wider world: schedules the simulator found', () => {
  it('an in-flight lock that never clears: the row reaches review within the liveness bound', async () => {
    // One row; from the start every POST of its trxid after the first (stuck at the supplier, its
    // answer never comes) is 429 DUPLICATE_IN_FLIGHT, until the operator has the supplier clear it
    // 30 minutes later. DUPLICATE_IN_FLIGHT does not count towards giving up (dispatch/sender.ts
    // stopResending), so the row stays `resending` for ever, nothing tells the operator and the
    // batch never finishes: invariant 20 (LIVENESS) at 14 simulated minutes. Fails on main (before
    // issue 29's fix, branch `defects`); passes once DUPLICATE_IN_FLIGHT for ever goes to review.
    const out = await runSchedule(found('lock-never-clears'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a history that never answers and a wall clock stepped back an hour: rows in doubt still reach review within the liveness bound', async () => {
    // Seed 20261127 #31 (drawn on 5bb72c6): GET /history never lists the orders and its answers
    // never come (forever: history, from 17 ms), and the wall clock steps back an hour at 223 s.
    // The give-up of a row in doubt counted from its wall-clock doubt_since, which the step did not
    // move: five rows stayed `resending` for 14 simulated minutes, told nothing (invariant 20,
    // LIVENESS). Fails on main at a014c04; passes since a step back moves the stored doubt clocks
    // back by the step, once for the home (store/wall-mark.ts).
    const out = await runSchedule(found('forever-history-clock-step-back'));
    expect(out.violations).toEqual([]);
  }, 300_000);

  it('a daemon stopped past its lease reads a plain refusal after the other sent the row to review: review was right (the model)', async () => {
    // Seed 20261127, faults lost,error,crash,stall (--no-swarm), schedule 39, shrunk: daemon0 is
    // stopped for 90 s right after its first POST; daemon1 takes the batch when the lease lapses,
    // resends the row (its first send's answer unknown: it waits in the stopped process) and is
    // refused INSUFFICIENT_STOCK: a refusal after an uncertain attempt goes to the history check,
    // which cannot tell (no trxids), so review. daemon0 resumes and reads its own answer, the same
    // plain refusal, without the lease. Invariant 37 counted that answer as the engine's knowledge
    // ("every answer read by a process that went on"); a process stopped past its lease is now
    // interrupted for it, as a killed one is. The engine was right; fails on the model before.
    const out = await runSchedule(found('stall-refusal-read-after-takeover'));
    expect(out.violations).toEqual([]);
  }, 300_000);

  it('a re-drop spelling a non-ASCII trxid in other letter case (ÄB-7, then äb-7) is not bought again', async () => {
    // The file's own trxid ÄB-7, dropped; the same file dropped again with the trxid respelled
    // " äb-7 " (world.ts respell). The docs promise a trxid is looked up in any letter case, but
    // SQLite's lower() folds ASCII only, so the re-drop is stored as a new purchase; a supplier that
    // compares ASCII letters only (world.ts fold) charges it again: invariants 1 and 23. Fails on
    // main (before issue 29's fix, branch `ident`).
    const out = await runSchedule(found('non-ascii-case-redrop'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('rows on an account removed from accounts.toml wait with the reason on their batch', async () => {
    // A file pinning its row to account `second` is dropped 50 ms before the operator removes
    // `second` from accounts.toml for 8 minutes (world.ts config-rename, op remove). The row is
    // stored and waits `pending` on an account the restarted daemon does not have: it said so only
    // in its log, with no error on the row, no wait reason on the batch and no pause: invariant 21
    // (TOLD WHY) at 5 simulated minutes. Failed before the fix (engine/stages/dispatch.ts
    // #tellGoneAccounts: the batch waits for `account`, naming the account and the rows).
    const out = await runSchedule(found('removed-account-rows-told'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a 1-key row is not completed by an unmarked replay of a foreign 2-key order under its trxid', async () => {
    // Seed 511274583 (shrunk): a foreign order made 10 minutes before the run under the row's own
    // trxid SHOP-2, for 2 keys (world.ts twins); the supplier answers the row's first send with it,
    // 200 completed, no replay mark, no creation time, no quantity, two codes (unmarked-replay).
    // The row completed with the other buyer's two codes, nothing bought for it (invariant 3).
    // Failed before dispatch/order-match.ts compared the number of codes with the row's quantity.
    const out = await runSchedule(found('twin-key-row-more-codes'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a completed order reversed before the engine read it: the row is cancelled and refunded, as the API says', async () => {
    // Seed 102 (CI, simulate-a; shrunk): M100005 was processing when placed, completed, and was
    // reversed by the supplier before the engine next read it (world.ts refunds, after-completed):
    // history shows it status `refunded`, `refunded: 1`. The engine stored the row cancelled,
    // refunded; invariant 5 (sim/invariants.ts) took `after-completed` for a refund never stated ("refunded true,
    // while the API never said so"). A model/invariant bug, not the engine's: the reversal is shown
    // in full, so a row that read it cancelled must say refunded (sim/invariants.ts).
    const out = await runSchedule(found('refund-after-completed-read-cancelled'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a result file written before an account was renamed keeps the name it was written with', async () => {
    // Seed 302 (CI, simulate-c, with config-rename on; shrunk 86 times): a row stored on `main`
    // waits for balance; the operator renames `main` to `main-renamed` (the same URL and key), the
    // row follows it (store/account-identity.ts), is bought as main-renamed, and its batch finishes:
    // the result file says `main-renamed`. Then `main-renamed-renamed`, then `main` again: the row in
    // the store says `main`, the file handed out still `main-renamed` (files are never rewritten,
    // docs/accounts.md). Invariant 13 compared the file with the store's name at the end of the run,
    // and invariant 2 looked for the order by the name it was sent under: two false alarms of the
    // model's (sim/invariants.ts now keys an order's place by its model API, and reads the names
    // a result was written with: run-schedule.ts writtenAs). Failed before that change.
    const out = await runSchedule(found('renamed-account-result-keeps-name'));
    expect(out.violations).toEqual([]);
    expect(out.behaviours['world: accounts renamed in accounts.toml (config-rename)']).toBe(2);
    expect(out.behaviours['world: finished batches whose result names an account by an earlier name']).toBeGreaterThan(0);
  }, 120_000);

  it('a file whose account column names an account removed from accounts.toml, stored while the file names one account: the column pins nothing', async () => {
    // Fresh seed 7301 (simulate-c's world with config-rename on; shrunk 42 times): `second` is
    // removed from accounts.toml (world.ts config-rename, op remove) 10 s before a file whose
    // `account` column says `second` is dropped. With one account the column is the reseller's own
    // (docs/accounts.md: read only in a home with several accounts; claim/placement.ts), so the row
    // is bought at `main`, as documented. The model took every two-account schedule's column for a
    // pin ("the file pins it to account second"): its false alarm. It now skips batches stored
    // while the file named one account (run-schedule.ts unpinnedBatches). Failed before that.
    const out = await runSchedule(found('pin-while-one-account'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a daemon killed while a config edit stops it: the edit goes on, the run ends', async () => {
    // Fresh seed 7301 (crash and config-edit on; shrunk 67 times): the routing edit is put back at
    // 125.009 s, the same instant as a crash of the daemon it is stopping. The edit waited for the
    // daemon's own end, which a killed process never reaches: the edit was never made, and the run
    // waited for it until its 6-hour horizon (STALL with nothing unfinished). The simulator's own
    // bug (run-schedule.ts restartAllWith now also takes a kill as the end); fails on main.
    const out = await runSchedule(found('crash-while-config-edit-drains'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('another key of ours holds SHOP-5 at a supplier comparing exactly; this home sends only shop-5: one purchase here, not a double count', async () => {
    // Seed 101, worker seed 103 (sibling, respell, fold), crafted to one row: the file's only drop
    // spells the trxid " shop-5 "; another key of ours placed the purchase as SHOP-5 before the run;
    // the supplier compares trxids exactly, so shop-5 is a new trxid to it (200, M100001), and this
    // home's store holds no SHOP-5 to refuse it by. Invariant 1 counted K100001 by the home's fold
    // ("bought 2 times"): a world no client of this key could see. It counts a sibling's charge now
    // only when the supplier took a trxid we sent as the sibling's (ModelApi.siblingMet). Failed
    // before that change of sim/invariants.ts.
    const out = await runSchedule(found('sibling-other-spelling-exact'));
    expect(out.violations).toEqual([]);
    expect(out.behaviours['world: FORBIDDEN for a purchase another key of ours placed']).toBe(0);
    expect(out.behaviours['orders made']).toBe(1);
  }, 120_000);

  it('SHOP-5 refused FORBIDDEN (another key of ours holds it), then the file again spelling shop-5: not bought', async () => {
    // The same world, but this home sends SHOP-5 first: the supplier refuses it (403 FORBIDDEN: the
    // sibling is met, so invariant 1 counts its charge), the row ends rejected holding SHOP-5, and
    // the re-drop's " shop-5 " is the same trxid under the home's fold: refused, nothing bought.
    const out = await runSchedule(found('sibling-told-then-respelled'));
    expect(out.violations).toEqual([]);
    expect(out.behaviours['world: FORBIDDEN for a purchase another key of ours placed']).toBeGreaterThan(0);
    expect(out.behaviours['orders made']).toBe(0);
  }, 120_000);

  it('a row refused FORBIDDEN (another key of ours placed the purchase) is not bought again by topup retry', async () => {
    // Crafted from the sibling generator and the operator's retry: SHOP-5 is held by another key
    // of ours (sibling), the row's first send is refused 403 FORBIDDEN and ends rejected, and
    // `topup retry` of the batch bought it under a fresh trxid (invariant 1: "bought 2 times",
    // M100001 for tu…, K100001 for SHOP-5). Failed before ops/retry.ts left FORBIDDEN rows out.
    const out = await runSchedule(found('sibling-forbidden-retried'));
    expect(out.violations).toEqual([]);
    expect(out.behaviours['world: FORBIDDEN for a purchase another key of ours placed']).toBeGreaterThan(0);
    expect(out.behaviours['orders made']).toBe(0);
  }, 120_000);

  it('a shop trxid sent with a no-break space first is stored trimmed: the same body (invariant 15)', async () => {
    // Fresh seed 20261131 (unicode, schedule 79, shrunk): the shop's trxid "\u00a0X-API-3" is
    // accepted and stored as X-API-3 (kernel/identity.ts trxidAsGiven: white space around a trxid is
    // not part of it). Invariant 15 compared the stored cells with the body as sent, trxid spelled
    // as sent, and called it another body. The model's: it now reads the trxid as given.
    const out = await runSchedule(found('api-trxid-nbsp-same-body'));
    expect(out.violations).toEqual([]);
  }, 120_000);

  it('a wall clock stepped back an hour while a row waits for its history check: it waits its 30 s, not the hour', async () => {
    // Seed 20261127, schedule 107 of mutate:sim's baseline with resend-words (branch sim-widen):
    // the answer is lost, the resend is refused in words, the row waits for its history check; the
    // clock steps back 3,600 s and engine/stages/leases.ts pulled back only times past its 2 h
    // horizon, so the row reached review at 3,744 s (liveness: at most 14 simulated minutes). Stored
    // due times now move back by the step (rows.clampFutureTimes). Failed before that.
    const out = await runSchedule(found('clock-step-back-searching'));
    expect(out.violations).toEqual([]);
  }, 120_000);
});
