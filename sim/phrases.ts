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
import { ORDER_ID_KEYS } from '../src/api/order-id.js';

const pick = (by: string, n: number): number => [...by].reduce((h, ch) => (h * 31 + ch.codePointAt(0)!) >>> 0, 7) % n;

/** `phrase` as one of the ways suppliers write it, by `by` (a trxid). */
export function spelled(phrase: string, by: string): string {
  const cap = phrase.charAt(0).toUpperCase() + phrase.slice(1);
  const forms = [phrase, `${cap}.`, `Error: ${phrase}!`, `[${phrase.toUpperCase()}]`, `${cap} - please try again later.`];
  return forms[pick(by, forms.length)]!;
}

/**
 * A failure body with only `status: false` and its text under `msg` (the `status-msg` family;
 * #1244): PHP panels and CodeIgniter/Express backends answer `{"status": false, "msg": "…"}`, with
 * none of the spec's fields (`success`, `error`, `code`) and no `data`. The words are the whole
 * answer (api/read.ts unwrap must hand such a body over as it is, or a "trxid already used", a
 * balance refusal or an order in flight reads as a plain refusal: "nothing charged"). One trxid in
 * four, by its own hash (the form a family chose otherwise stays the same for the other three).
 */
export function statusMsgBody(trxid: string, text: string): { status: false; msg: string } | undefined {
  return pick(`${trxid}#status-msg`, 4) === 0 ? { status: false, msg: text } : undefined;
}

/** An order still being processed, said in words with no code (one trxid in three), else undefined (the coded 429). */
export function inFlightInWords(trxid: string): { status: number; body: Record<string, unknown> } | undefined {
  if (pick(`${trxid}#in-flight`, 3) !== 0) return undefined;
  const text = spelled('order is still being processed', trxid);
  return { status: 409, body: statusMsgBody(trxid, text) ?? { success: false, error: text } };
}

/**
 * The body of "this trxid was used already" (no documented code): the phrase in one of its
 * spellings, or a framework's validation bag (Laravel's `{message, errors: {field: [...]}}`), where
 * the words that say it sit in the bag, not in the message.
 */
export function duplicateTrxidBody(trxid: string): Record<string, unknown> {
  if (pick(`${trxid}#bag`, 4) === 0) return { success: false, message: 'The given data was invalid.', errors: { trxid: ['The trxid has already been taken.'] } };
  const text = spelled('trxid already used', trxid);
  return statusMsgBody(trxid, text) ?? { success: false, error: text };
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
  const text = spelled('trxid already used', trxid);
  return statusMsgBody(trxid, text) ?? { success: false, error: text };
}

// ───────────── issue 29, seventh turn: answer families a fresh mutant sample showed missing ─────────────
// Each is chosen by a hash of the trxid or order id (as above), never drawn: every other draw of a
// schedule stays as it was, and a class's coverage with it (the answer a family replaces meant the
// same thing to the engine's rules: an error after the order was made; a balance refusal).

/**
 * The keys real suppliers name an order under: the engine's one list (src/api/order-id.ts
 * ORDER_ID_KEYS), imported, so a spelling added there is drawn here too (issue 29, "every identity
 * declared once": the model once kept its own list, and drew `id_order` only where failover.ts read it).
 */
export const ORDER_KEYS = ORDER_ID_KEYS;

/** The key an order's id is under in an answer, by `by` (an order id): `orderId` (the spec's) half the time, else each other spelling. */
export function orderIdKey(by: string): string {
  const i = pick(`${by}#id-key`, 2 * (ORDER_KEYS.length - 1));
  return i < ORDER_KEYS.length - 1 ? 'orderId' : ORDER_KEYS[1 + i - (ORDER_KEYS.length - 1)]!;
}

/**
 * A failure answered AFTER the order was made that names the order under an order's own key, with
 * no status word (the `named-failure` family; #454): a gateway or the supplier's own code that
 * made the order, then failed on the way out (a provider timeout, a webhook error), and answered a
 * refusal status with the id it had. docs/real-suppliers.md: "a 400 that carries an order" is
 * never "not charged". For one trxid in two the model answers its post-creation failures so,
 * in one of these shapes: a refusal status (400, 422, 409) or HTTP 200 with `success: false`; the
 * id under each of the order keys, at the top or in a `data` envelope; the phrase in words that
 * say nothing about the order's state.
 */
export function namedOrderFailure(trxid: string, orderId: string): { status: number; body: Record<string, unknown> } | undefined {
  if (pick(`${trxid}#named`, 2) !== 0) return undefined;
  const status = [400, 422, 200, 409][pick(`${trxid}#named-status`, 4)]!;
  const key = ORDER_KEYS[pick(`${trxid}#named-key`, ORDER_KEYS.length)]!;
  const phrase = spelled(['provider timeout', 'transaction could not be confirmed', 'gagal memproses transaksi', 'upstream error'][pick(`${trxid}#named-words`, 4)]!, trxid);
  switch (pick(`${trxid}#named-shape`, 3)) {
    case 0: return { status, body: { success: false, error: phrase, [key]: orderId } };
    case 1: return { status, body: { success: false, message: phrase, data: { [key]: orderId } } };
    default: return { status, body: { success: 'false', msg: phrase, [key]: orderId } };
  }
}

/**
 * A refusal that records the attempt as a failed order (the `failed-record` family; #1868):
 * suppliers that keep every attempt as a transaction answer "not enough balance" or "product
 * disabled" with `orderCreated: false` AND the id of the failed record (cancelled at once, nothing charged, listed
 * in history as failed). The engine must not move such a row to another account (dispatch/failover.ts
 * `namesAnOrder`: a refusal naming an order is never moved, a wrong "not created" would become a
 * purchase elsewhere). One trxid in two; the key any of the four spellings, at the top or in `data`.
 */
export function failedRecordBody(trxid: string, orderId: string, error: string): Record<string, unknown> | undefined {
  if (pick(`${trxid}#failed-record`, 2) !== 0) return undefined;
  const key = ORDER_KEYS[pick(`${trxid}#failed-key`, ORDER_KEYS.length)]!;
  return pick(`${trxid}#failed-shape`, 3) === 0
    ? { success: false, orderCreated: false, error, data: { [key]: orderId, status: 'failed' } }
    : { success: false, orderCreated: false, [key]: orderId, error };
}

/**
 * A boolean as suppliers write it (the `spaced-words` family; #1059): PHP and spreadsheet-fed
 * backends pad and capitalise words (`" 1"`, `"true "`, `"Yes"`, `" FALSE "`); docs/real-suppliers.md
 * reads `"true"`, `"TRUE"`, `1`, `"1"`, `"yes"` and numbers with spaces (`" 3 "`). By `by` (an order
 * id): the plain form half the time, so today's spellings stay as common.
 */
export function spacedBoolean(v: boolean, plain: unknown, by: string): unknown {
  const forms = v ? [' 1', 'true ', ' Yes ', ' TRUE'] : ['0 ', ' false', ' No ', 'FALSE '];
  const i = pick(`${by}#bool`, 2 * forms.length);
  return i < forms.length ? plain : forms[i - forms.length];
}

/**
 * A shop's trxid as its backend sends it (the `padded-trxid` family; #4633): copied from a
 * spreadsheet or a form, with a space around it: a no-break space (U+00A0), a figure space
 * (U+2007), a narrow no-break space (U+202F), an ideographic space (U+3000), a tab. One purchase
 * in every spelling: the desk trims (kernel/identity.ts `trxidAsGiven`, JavaScript's `trim()`,
 * which strips each of these). By the shop order's own number and resend flag (the same
 * purchase is sent padded and bare).
 */
export function paddedTrxid(t: string, by: string): string {
  const i = pick(`${by}#pad`, 8);
  return ['\u00a0' + t, t + '\u00a0', '\u2007' + t, t + '\u202f', t + '\u3000', '\t' + t + ' ', t, t][i]!;
}

/**
 * A busy account's history (the `busy-history` family; #2481): the key is shared with a web shop
 * or other resellers' panels, whose orders come in all the time, so `GET /history` holds far more
 * than one page (the spec's largest, `limit` 200) of other buyers' orders: 240 before the run and
 * one every 500 ms of the supplier's time. An order of ours soon falls off the first page, and a
 * history check must then see that the page does not reach back to the row's first send (not read
 * it as "nothing placed": api paging, poll/verify.ts reachesBack). By `by` (the schedule's seed and
 * the account's key): one account in five, so the random stream, and every other draw, stay as they were.
 */
export function busyHistory(by: string): boolean {
  return pick(`${by}#busy`, 5) === 0;
}
