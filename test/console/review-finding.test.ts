/**
 * Trial s37 D6: the Review page said of every "after a restore" row that it "may have been bought
 * … at an account that could not be looked up", also when the lookup read the account and found
 * someone else's purchase under the row's trxid. The words now follow the reason
 * (ops/restore-reconcile.ts's `why`, as the store keeps it: `REVIEW: after a restore: …`).
 */
import { describe, expect, it } from 'vitest';
import { REVIEW_INTRO, restoreFinding } from '../../src/console/pages/review-finding.js';

describe('the Review page on a row reviewed after a restore', () => {
  it('does not claim an account could not be looked up when the lookup found another purchase', () => {
    // The trial's row, word for word.
    const found = restoreFinding('REVIEW: after a restore: order ORD1000132 at supa carries its trxid REV-4 but is another purchase (userId 5123456999, not 5123456611)');
    expect(found).toContain('found an order carrying this row\'s trxid that is another purchase');
    expect(found).not.toMatch(/could not|cannot/);
    expect(REVIEW_INTRO).not.toMatch(/could not be looked up/);
    expect(REVIEW_INTRO).toContain('says what the lookup found');
  });

  it('says an account could not tell only when the reason says so', () => {
    expect(restoreFinding('REVIEW: after a restore: it may have been bought after the copy was taken and cannot be looked up at supb (its history does not reach back to the copy); check those accounts\' orders for trxid R-1 and R-1-<account> before ordering it (topup review resolve)'))
      .toMatch(/^The lookup could not tell at the account\(s\) the reason names/);
  });

  it('names a purchase found as bought, and several candidates as such', () => {
    expect(restoreFinding('REVIEW: after a restore: bought twice already: order O1 at supa under R-1, and order O2 at supb under R-1-supb')).toMatch(/^The lookup found this row bought/);
    expect(restoreFinding('REVIEW: after a restore: bought already under its trxid R-1 on another account: order O2 at supb')).toMatch(/^The lookup found this row bought/);
    expect(restoreFinding('REVIEW: after a restore: it was bought at supb as R-1-supb (order O2) after the copy, and the copy has it rejected at supa')).toMatch(/^The lookup found this row bought/);
    expect(restoreFinding('REVIEW: after a restore: several orders carry the trxids a move gives it: O1 at supa (R-1-supa), O2 at supb (R-1-supb)')).toMatch(/several orders that could be this row's/);
  });

  it('adds nothing to a reason that is not a restore lookup', () => {
    expect(restoreFinding('REVIEW: no answer settled it within the stall bound')).toBeNull();
    expect(restoreFinding(null)).toBeNull();
  });
});
