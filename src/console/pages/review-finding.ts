/**
 * What the lookup after a restore found, in words, for a review row whose reason starts "after a
 * restore" (ops/restore-reconcile.ts: REVIEW: after a restore: <why>). The Review page used to say
 * of every such row that it "may have been bought … at an account that could not be looked up",
 * also when every account was read and the lookup found an order with the row's trxid that is
 * someone else's purchase (trial s37 D6). The page now says what the reason says: the reasons'
 * wording is restore-reconcile.ts's `why`, matched here by its fixed phrases.
 */

/** The page's opening words: true of every row it can show. */
export const REVIEW_INTRO =
  'Whether these rows were charged is not known. Most were sent and no answer settled them. A row whose reason starts "after a restore" was never sent from this store: the accounts were looked up after the restore, and the line under its reason says what the lookup found. Check each with the supplier, then record what happened. A row resolved as charged is checked against the API; its batch\'s results are written again as a new version.';

/** The finding for a reason, or null when the reason is not a restore lookup's (it speaks for itself). */
export function restoreFinding(reason: string | null): string | null {
  if (!reason || !/after a restore: /.test(reason)) return null;
  if (/cannot be looked up at /.test(reason)) {
    return 'The lookup could not tell at the account(s) the reason names (unreadable, or their history does not reach back or shows no trxid): it may have been bought there before the restore. Check their orders for its trxid before recording it.';
  }
  if (/but is another purchase/.test(reason)) {
    return 'The lookup read the account and found an order carrying this row\'s trxid that is another purchase (the fields the reason lists differ): that order is not this row\'s. Check with the supplier whether this row was bought at all.';
  }
  if (/several orders carry/.test(reason)) {
    return 'The lookup found several orders that could be this row\'s purchase: check which one, if any, is before recording it.';
  }
  if (/bought twice already|bought already|it was bought at /.test(reason)) {
    return 'The lookup found this row bought (the order(s) the reason names; more than one where it says bought twice): record it as charged with the order that is its purchase and take up any other with the supplier; nothing is ordered again for it.';
  }
  return null;
}
