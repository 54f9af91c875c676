/**
 * Issue 29, "answers in every body shape", widened where `npm run mutate:sim` found the engine's
 * reading of words untested: a supplier's error phrase without a documented code comes as people
 * write it, not only as `trxid already used`: capitalised with a full stop, after a prefix, in
 * brackets (`wordsOf` in src/api/classify.ts must fold the punctuation at both ends away, or
 * `Trxid already used.` is no longer read as the duplicate trxid it is, and a charged row could be
 * read as refused); and an order still in flight is said in words, with no code, as well as with
 * DUPLICATE_IN_FLIGHT.
 *
 * The spelling is chosen by the trxid, not drawn: the model's random stream, and so every other
 * draw of a schedule, stays as it was.
 */
const pick = (by: string, n: number): number => [...by].reduce((h, ch) => (h * 31 + ch.codePointAt(0)!) >>> 0, 7) % n;

/** `phrase` as one of the ways suppliers write it, by `by` (a trxid). */
export function spelled(phrase: string, by: string): string {
  const cap = phrase.charAt(0).toUpperCase() + phrase.slice(1);
  const forms = [phrase, `${cap}.`, `Error: ${phrase}!`, `[${phrase.toUpperCase()}]`, `${cap} - please try again later.`];
  return forms[pick(by, forms.length)]!;
}

/** An order still being processed, said in words with no code (one trxid in three), else undefined (the coded 429). */
export function inFlightInWords(trxid: string): { status: number; body: { success: false; error: string } } | undefined {
  if (pick(`${trxid}#in-flight`, 3) !== 0) return undefined;
  return { status: 409, body: { success: false, error: spelled('order is still being processed', trxid) } };
}

/**
 * The body of "this trxid was used already" (no documented code): the phrase in one of its
 * spellings, or a framework's validation bag (Laravel's `{message, errors: {field: [...]}}`), where
 * the words that say it sit in the bag, not in the message.
 */
export function duplicateTrxidBody(trxid: string): Record<string, unknown> {
  if (pick(`${trxid}#bag`, 4) === 0) return { success: false, message: 'The given data was invalid.', errors: { trxid: ['The trxid has already been taken.'] } };
  return { success: false, error: spelled('trxid already used', trxid) };
}

/**
 * A supplier without idempotent replays that refuses the resend of an order it already made
 * (`refuse-resend`) says so, for one trxid in two, as "trxid already used" in words (any spelling
 * above, or the validation bag) instead of a generic refusal: the charge then shows only in the
 * history, so the engine must read those words as "may exist", whatever their punctuation.
 */
export function resendRefusedInWords(trxid: string): Record<string, unknown> | undefined {
  return pick(`${trxid}#resend`, 2) === 0 ? duplicateTrxidBody(trxid) : undefined;
}

/**
 * A supplier without idempotent replays (the `resend-words` class, sim/world.ts): every resend of
 * an order it already made is refused as "trxid already used", half the time in a framework's
 * validation bag (the words only in `errors`), else in one of the spellings above. Chosen by the
 * trxid, so the schedule's random stream stays as it was.
 */
export function resendWordsBody(trxid: string): Record<string, unknown> {
  if (pick(`${trxid}#words-bag`, 2) === 0) return { success: false, message: 'The given data was invalid.', errors: { trxid: ['The trxid has already been taken.'] } };
  return { success: false, error: spelled('trxid already used', trxid) };
}
