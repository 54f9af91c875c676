/**
 * The player, as an identity: declared once (issue 29, "every identity declared once"). A player
 * check's result is kept in one table (store/player-checks.ts, keyed by kind and player) that two
 * callers read and write: the order API's desk (orders/player-check-desk.ts) and a file's rows
 * (claim/player-checks.ts). Each built the key itself, so a check paid through one was found by the
 * other only while the two spellings happened to agree; a change to one would have paid the
 * supplier's check tariff again for every player (and lost a not-found verdict). Both ask here.
 *
 * The key: the player id, and for Mobile Legends its zone in brackets: `5123456`, `777888999(2005)`.
 * The values are used as given: both callers trim them first (a file's cells are trimmed as they
 * are read; the desk trims what reaches it), and a player id is compared exactly otherwise (digits,
 * as the supplier's check takes them).
 */
export function playerKey(a: { kind: 'pubg' | 'ml'; userId: string; zoneId?: string | null | undefined }): string {
  return a.kind === 'ml' ? `${a.userId}(${a.zoneId ?? ''})` : a.userId;
}
