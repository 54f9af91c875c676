/**
 * A pack, as an identity: declared once (issue 29, "every identity declared once").
 *
 * - The pid is the supplier's product id, compared exactly once trimmed (intake/catalog-index.ts
 *   byPid, dispatch/order-match.ts): suppliers' ids are case-sensitive keys.
 * - The game line (slug) and the pack's name are the same when their folds are equal: white space
 *   around them dropped, runs of it (any Unicode space: a no-break space from a spreadsheet) one
 *   space, letter case aside (Unicode's, locale-free). One fold for finding a pack by slug and
 *   name in a file's row (intake/catalog-index.ts) and for finding the same pack at another account
 *   when a row is routed or moved (account/routing.ts): were they to differ, a row validated as one
 *   pack could be bought as another, or not found again at the account it moves to.
 *
 * An answer's echo of a game or pack name is compared more loosely (dispatch/order-match.ts, letters
 * and digits only): that reading decides only whether an answer may be the row's, never which pack
 * to buy.
 */
export function foldPackName(s: string): string {
  return s.trim().toLowerCase().replace(/\s+/g, ' ');
}
