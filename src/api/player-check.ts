/**
 * The player-name checks: POST /pubgvvfy `{playerId, trxid}` and POST /mlvfy `{userId, zoneId,
 * trxid}`. Beyond the seed's spec: taken from the real supplier's public clients
 * (docs/player-checks.md, shared/real-supplier.md). A check never places an order; its trxid is of
 * the check space (kernel/identity.ts CHECK_TRXID_PREFIX), which no order trxid can be.
 *
 * Every answer becomes ONE outcome (readCheckAnswer), as classify.ts does for orders:
 *  - found:        a 2xx whose body does not say it failed and names the player (`playerName`,
 *                  or `name`, also inside a `data` envelope). A 2xx that says success without a
 *                  name is found with no name: the id exists, there is just nothing to show.
 *  - not-found:    the body says so: the code PLAYER_NOT_FOUND (or USER_NOT_FOUND, INVALID_PLAYER_ID
 *                  …), or a text "Player not found", on a 2xx with success:false or on a
 *                  400/404/422. Only a body that SAYS it: a bare 404 (an HTML page, `Not Found`) is
 *                  a deployment without the route, which must not block every row as a wrong id.
 *  - rate-limited: 429 (the client has already held the account's calls: client.ts #holdFor).
 *  - in-doubt:     no answer, a timeout, a 5xx, an HTML error page, a 2xx that cannot be read:
 *                  nothing is known about the player; asked again later under a new trxid (a check
 *                  charges nothing that an order could be confused with, and its trxid is its own).
 *  - refused:      the key, the account, the IP, a missing route, a 400 that is not about the
 *                  player (bad parameters), a check refused for balance: a person must act. Also a
 *                  readable refusal whose words this version does not know (a 200 success:false
 *                  "Pemain tidak ada"): it may mean "not found" in other words, so it neither
 *                  blocks the row as a wrong id nor lets it be sent; the batch (or the shop) is
 *                  told the supplier's words and a person decides (fix the id, or sendWithoutCheck).
 *
 * And what the supplier may have taken for it (`charged`, issue 31's review): `yes` when it ran
 * (found, not found), `no` only when the answer proves it was turned away before it ran (a 429 or
 * a rate code, 401/403 and the account codes, a documented maintenance code, a refusal for balance,
 * a redirect, a bare 404/405/501: no such route), `maybe` for everything else (no answer, an error
 * page, a 5xx, a refusal in unknown words). Only `yes` and `maybe` are counted in the money.
 *
 * A name is shown in terminals, pages, CSV and JSON: it is read as one line of at most
 * NAME_MAX_LENGTH characters, without control or bidi-override characters (a name carrying an
 * escape sequence or a newline could rewrite what `topup validate` prints); CSV formula safety is
 * the writers' (kernel/csv-text.ts).
 */
import type { ApiAnswer } from '../kernel/errors.js';
import { classifyFailure, isBalanceRefusal, normaliseCode, wordsOf } from './classify.js';
import { isObject, pick, readSuccess, readText, unwrap } from './read.js';
import type { Exchange } from './wire.js';

/** Which check a game line has: PUBG (player id) or Mobile Legends (user id + zone id). */
export type CheckKind = 'pubg' | 'ml';

export type PlayerCheckRequest =
  | { kind: 'pubg'; playerId: string; trxid: string }
  | { kind: 'ml'; userId: string; zoneId: string; trxid: string };

export type CheckOutcome = 'found' | 'not-found' | 'in-doubt' | 'refused' | 'rate-limited';

/** What the supplier may have taken for a check (see above). */
export type CheckCharged = 'yes' | 'maybe' | 'no';

/** The longest player name kept (in-game names are far shorter; this bounds what a page, a cell, a line carries). */
export const NAME_MAX_LENGTH = 64;

export interface PlayerCheckResult {
  outcome: CheckOutcome;
  /** Whether the supplier may have charged it. */
  charged: CheckCharged;
  /** The player's name (found only; absent when the supplier said found without one). */
  name?: string;
  trxid: string;
  /** HTTP status, undefined when no answer came. */
  status: number | undefined;
  /** What the supplier said, in words (its error text or code, or why the answer was not read). */
  said: string;
  /** The redacted audit copy of the answer (absent when none came). */
  answer?: ApiAnswer;
  /** Retry-After of a 429, in ms. */
  retryAfterMs?: number;
}

export const CHECK_PATHS: Record<CheckKind, string> = { pubg: '/pubgvvfy', ml: '/mlvfy' };

/** The JSON body a check sends, as the supplier's public clients send it. */
export function checkBody(req: PlayerCheckRequest): Record<string, string> {
  return req.kind === 'pubg' ? { playerId: req.playerId, trxid: req.trxid } : { userId: req.userId, zoneId: req.zoneId, trxid: req.trxid };
}

/** Texts and codes that say the player (not the order, not the route) does not exist. */
const PLAYER_NOT_FOUND = /(^|_)((PLAYER|USER|UID|ACCOUNT|GAME)_(ID_)?(NOT_FOUND|DOES_NOT_EXIST|NOT_EXISTS?|TIDAK_DITEMUKAN)|INVALID_(PLAYER|USER|UID|USER_?ID|PLAYER_?ID|GAME_?ID)|WRONG_(PLAYER|USER|UID)(_ID)?|ID_(NOT_FOUND|TIDAK_DITEMUKAN))(_|$)/;

/** Does this body say the player does not exist? */
function saysPlayerNotFound(json: unknown): { yes: boolean; said: string } {
  const b = unwrap(json, ['code', 'error', 'message', 'success']);
  if (!isObject(b)) return { yes: false, said: '' };
  const nested = isObject(b.error) ? b.error : {};
  const code = readText(pick(b, 'code', 'errorCode', 'error_code')) ?? readText(pick(nested, 'code'));
  const text = readText(pick(b, 'error', 'message', 'msg')) ?? readText(pick(nested, 'message'));
  const said = [code, text].filter((x) => x !== undefined).join(': ');
  const yes = normaliseCode(code) === 'PLAYER_NOT_FOUND' || PLAYER_NOT_FOUND.test(wordsOf(`${code ?? ''} ${text ?? ''}`));
  return { yes, said };
}

/** The player's name in a found answer: `playerName` (the clients' first reading), `name`, also inside `data`. */
function nameIn(json: unknown): string | undefined {
  const b = unwrap(json, ['playerName', 'name', 'nickname', 'username']);
  if (!isObject(b)) return undefined;
  const n = readText(pick(b, 'playerName', 'player_name', 'name', 'nickname', 'username'));
  return n === undefined ? undefined : cleanName(n);
}

/**
 * A name as one line that is safe to print: control characters (an ESC of a terminal sequence, a
 * newline, a tab) become spaces, bidi embeddings, overrides and isolates go (they make a page show
 * the name in another order than it is), runs of spaces become one, at most NAME_MAX_LENGTH
 * characters (code points, so an emoji is never cut in half). Empty after that: no name.
 */
export function cleanName(raw: string): string | undefined {
  const one = oneLine(raw, NAME_MAX_LENGTH);
  return one === '' ? undefined : one;
}

/** Text from the supplier as one printable line of at most `max` code points (names, and what an answer said). */
export function oneLine(raw: string, max: number): string {
  const one = raw.replace(/[\p{Cc}\u2028\u2029]/gu, ' ').replace(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, '').replace(/\s+/gu, ' ').trim();
  const cps = [...one];
  return cps.length <= max ? one : `${cps.slice(0, max - 1).join('')}…`;
}

/** One outcome for a check's answer (see the table above). */
export function readCheckAnswer(x: Exchange, trxid: string, path: string): PlayerCheckResult {
  const base = { trxid, status: x.status, answer: x.answer, ...(x.retryAfterMs !== undefined ? { retryAfterMs: x.retryAfterMs } : {}) };
  const failed = x.readable && isObject(x.json) && readSuccess(unwrap(x.json, ['success']) as Record<string, unknown>) === false;
  if (x.status >= 200 && x.status < 300 && x.readable && !failed) {
    const name = nameIn(x.json);
    const nf = saysPlayerNotFound(x.json);
    // A 2xx whose text says the player was not found (with no name) is a not-found, however it is wrapped.
    if (name === undefined && nf.yes) return { ...base, outcome: 'not-found', charged: 'yes', said: nf.said };
    if (name !== undefined || (isObject(x.json) && readSuccess(x.json) === true)) {
      return { ...base, outcome: 'found', charged: 'yes', ...(name !== undefined ? { name } : {}), said: name === undefined ? 'found, no name given' : 'found' };
    }
    return { ...base, outcome: 'in-doubt', charged: 'maybe', said: 'a 2xx answer that names no player and does not say success' };
  }
  if (x.readable && (failed || [400, 404, 422].includes(x.status))) {
    const nf = saysPlayerNotFound(x.json);
    if (nf.yes) return { ...base, outcome: 'not-found', charged: 'yes', said: nf.said };
  }
  if (x.status === 429) return { ...base, outcome: 'rate-limited', charged: 'no', said: 'rate limit: the account\'s call budget is spent' };
  if (!x.readable) {
    // An HTML error page or an empty body: a proxy's 502, a 404 page of a deployment without the route.
    if (x.status === 404 || x.status === 405 || x.status === 501) return { ...base, outcome: 'refused', charged: 'no', said: `HTTP ${x.status} without a body naming the player: this supplier may not offer ${path}` };
    return { ...base, outcome: 'in-doubt', charged: 'maybe', said: `HTTP ${x.status}, the body is not JSON` };
  }
  // A refusal for balance, whatever its status (a 402 too): the check was not run, nothing charged.
  const words = saysPlayerNotFound(x.json).said;
  if (x.status >= 400 && x.status < 500 && isBalanceRefusal(words)) return { ...base, outcome: 'refused', charged: 'no', said: words };
  const f = classifyFailure(x.status, x.json, { method: 'POST', path }, true);
  const said = [f.apiCode, f.apiError].filter((s) => s !== undefined && s !== '').join(': ') || `HTTP ${x.status}`;
  // Turned away before the check ran (see `charged` above): only these say so.
  const turnedAway = (x.status >= 300 && x.status < 400) || (x.status === 401 && f.apiCode !== undefined && normaliseCode(f.apiCode) === 'INVALID_JSON') || f.classification === 'account' || f.classification === 'forbidden' ||
    f.classification === 'insufficient-balance' || (f.classification === 'paused' && !f.mayExist);
  switch (f.classification) {
    case 'retry-later': {
      const rate = x.status === 429 || x.status === 503;
      return { ...base, outcome: rate ? 'rate-limited' : 'in-doubt', charged: rate ? 'no' : 'maybe', said };
    }
    case 'ambiguous':
    case 'paused': return { ...base, outcome: 'in-doubt', charged: turnedAway ? 'no' : 'maybe', said };
    case 'rejected':
      // A refusal in words this version does not read as found or not found: a person reads them.
      if (failed || x.status === 422) {
        return { ...base, outcome: 'refused', charged: 'maybe', said: `the supplier's answer to the check is neither found nor not found in words this version knows (${said}): it may mean the id is wrong; check it, or send the row without a check` };
      }
      return { ...base, outcome: 'refused', charged: turnedAway ? 'no' : 'maybe', said };
    default: return { ...base, outcome: 'refused', charged: turnedAway ? 'no' : 'maybe', said };
  }
}
