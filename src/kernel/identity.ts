/**
 * What makes two identities the same, declared once (issue 29). Every other module asks here.
 *
 * trxid. The supplier's idempotency key and our "one trxid, one purchase". Two trxids are the same
 * when their folds are equal:
 *
 *     fold(s) = NFKC(s), then repeat { toUpperCase().toLowerCase(), NFKC } until nothing changes
 *
 *  - NFKC first: full-width forms (ＡＢ-７ → AB-7), ligatures (ﬀ → ff), compatibility spaces and
 *    a letter with a combining mark (A + U+0308) composed to the one letter (Ä) that a keyboard
 *    types; NFKC again after the case mapping, which can produce decomposed sequences (İ → i + U+0307).
 *  - upper then lower is full case folding approximated with the case mappings JavaScript has
 *    (locale-free, so a Turkish or Lithuanian machine folds as any other): ß ≡ SS ≡ ss, ẞ ≡ ß (the
 *    repeat: ẞ lowers to ß, which folds to ss), final sigma ≡ σ ≡ Σ, Cherokee in either case, and
 *    dotless ı ≡ I ≡ i (wider than Unicode's folding, which keeps ı apart). Turkish İ folds to
 *    i + U+0307, not to i: it is another letter than I everywhere but in Turkish.
 *  - Wider never costs money: a fold that calls two trxids the same when a supplier would not only
 *    refuses the second (a reseller gives it another trxid); a fold narrower than the supplier's
 *    would buy twice, as SQLite's ASCII-only lower() did with ÄB-7 / äb-7.
 *  - ASCII text folds to its toLowerCase() (the fast path, and why every ASCII trxid already
 *    stored keeps its folded value across the migration that brought this fold into the store).
 *
 * The same function is the SQLite function trxid_fold(), registered on every connection the
 * project opens (registerIdentity, store/db.ts) and used by every index, trigger and look-up of
 * a trxid; JavaScript compares trxids with sameTrxid(). A property test holds them equal.
 *
 * The fold depends on the Unicode tables of the JavaScript engine (process.versions.unicode): a
 * Node upgrade may assign case or compatibility mappings to characters that had none. The store
 * records the version its indexes were built with and rebuilds them when it changes (db.ts).
 *
 * The trxid rule. A trxid is well-formed text (no lone UTF-16 surrogate, which SQLite cannot store
 * as itself: the store would hold other text than the one sent), 1 to TRXID_MAX_LENGTH characters,
 * with no white space and no control, format or surrogate character (a "\r" or a zero-width space
 * copied from a chat makes a trxid nobody can type again), and not starting with = + - @ or an
 * apostrophe (a spreadsheet's formula or text mark). TRXID_PATTERN is the rule as one regular
 * expression (the order API's OpenAPI schema publishes its source); trxidProblem() says why a
 * value breaks it.
 *
 * The account. A supplier account is its endpoint (the URL's origin) and its key, not the name
 * accounts.toml gives it: accountIdentity() is what every send records (never the key: a
 * domain-separated fingerprint of it).
 */
import { createHash } from 'node:crypto';

/** Bumped when fold() changes: the store rebuilds its folded indexes (db.ts). */
export const TRXID_FOLD_VERSION = 1;

const ASCII = /^[\x00-\x7f]*$/;

/** The fold of a trxid (see above). Two trxids are the same purchase key when their folds are equal. */
export function foldTrxid(s: string): string {
  if (ASCII.test(s)) return s.toLowerCase();
  let prev = s.normalize('NFKC');
  // Converges in at most three rounds for every code point (ẞ → ß → ss); the bound is a guard.
  for (let i = 0; i < 4; i++) {
    const next = prev.toUpperCase().toLowerCase().normalize('NFKC');
    if (next === prev) return next;
    prev = next;
  }
  return prev;
}

/**
 * A trxid as a person or a shop gives it: white space around it (a spreadsheet's padding, a
 * no-break space pasted with it) is not part of it. A file's cells are trimmed as they are read,
 * the order API's schema trims, and the order desk trims what reaches it by any other way (the
 * simulator calls it directly): one rule, here.
 */
export function trxidAsGiven(s: string): string {
  return s.trim();
}

/** The key two spellings of one trxid share, as given anywhere: trimmed, then folded. */
export function trxidKey(s: string): string {
  return foldTrxid(trxidAsGiven(s));
}

/** Whether two trxids are the same (their folds are equal). */
export function sameTrxid(a: string, b: string): boolean {
  return a === b || foldTrxid(a) === foldTrxid(b);
}

/**
 * The names a trxid goes by, declared once: the spec's (`trxid`, aliases `trxId`, `idtrx`, `idTrx`:
 * shared/reseller-api-spec.md §4.5). The sandbox's supplier reads a request's trxid under them
 * (sandbox/orders.ts), a file's column is the trxid under them (intake/columns.ts), and an answer's
 * echo is read under them (api/schemas.ts readOrder). Three lists said it before, each its own copy.
 */
// Not `as const`: a literal type would keep the mutation tools from changing a spelling (api/order-id.ts says why).
export const TRXID_KEYS: readonly string[] = ['trxid', 'trxId', 'idtrx', 'idTrx'];

/**
 * The names an answer's echo of the trxid is read under: TRXID_KEYS and the snake case of a backend
 * that names the order `order_id` (api/order-id.ts ORDER_ID_KEYS reads it): `trx_id`. Reading an
 * echo too little costs money: an answer naming ANOTHER trxid there (a replay of somebody else's
 * order, a cache mixing answers) was read as naming none, so dispatch/order-match.ts could not see
 * it was another purchase, and a row could be completed with an order it did not buy; a history
 * check could not find the row's own order by its trxid. Only answers: a request is read under the
 * spec's names alone (the sandbox is the spec's supplier), and a file's header `trx_id` is `trxid`
 * already (intake/columns.ts headerKey drops the underscore). Every one of them is read, not the first
 * that holds a value: two echoes that name two purchases are a contradiction (api/schemas.ts
 * readOrder: `trxidConflict`), never quietly the first one.
 */
// `trxID`: the spelling of `orderID` (api/order-id.ts ORDER_ID_KEYS), found unread by stop 37's review.
export const TRXID_ANSWER_KEYS: readonly string[] = [...TRXID_KEYS, 'trx_id', 'trxID'];

/** The name of the SQL function: trxid_fold(x). NULL folds to NULL. */
export const TRXID_FOLD_SQL = 'trxid_fold';

/**
 * The supplier's order id, as equality (which key of an answer holds it: api/order-id.ts). Two
 * spellings name the same order when their folds are equal:
 *
 *     foldOrderId(s) = trim(foldTrxid(trim(s)))
 *
 * white space around it dropped (every Unicode space: an id copied from a web panel brings a
 * no-break space, a spreadsheet cell a tab), then the trxid's case fold above (NFKC, Unicode case):
 * suppliers look ids up in any letter case, so `ord-ä7` typed by a person is the order a row holds
 * as `ORD-Ä7`. Nothing else: spaces inside an id and leading zeros are kept (`00123` and `123` are
 * two orders, as the supplier numbers them).
 *
 * Where it is asked: an operator's look-up of an order another row may hold (store/row-lookups.ts
 * placedBy, `topup review resolve --charged`, `topup order`), the console's search of a batch
 * (store/listing.ts), and whether an answer to GET /orders/:id is about the order asked for
 * (api/client.ts getOrder). In SQL it is orderIdFoldSql(x), the registered function
 * order_id_fold() (the same JavaScript function, so the two cannot disagree; test/identities/
 * order-id-fold.test.ts holds them equal on odd ids). Before it, placedBy compared
 * lower(trim(order_id)) (ASCII letters, the ASCII space) and getOrder trim().toLowerCase() (every
 * letter, every space): `ord-ä7` or `ORD-77\u3000` was another order to the first, the same to the
 * second, and `review resolve --charged … --force` recorded an order another row held.
 *
 * The engine's own matching (the unique index rows_order_id, isOrderIdKnown, firstSentAtOf, the
 * poller's look-up of a history page) compares the id exactly as the supplier wrote it: each answer
 * of a supplier spells its ids one way, and an index on the fold would cost a page write per order.
 */
export function foldOrderId(s: string): string {
  return foldTrxid(s.trim()).trim();
}

/** Whether two order ids name the same order (their folds are equal). */
export function sameOrderId(a: string, b: string): boolean {
  return a === b || foldOrderId(a) === foldOrderId(b);
}

/** The name of the SQL function: order_id_fold(x) is foldOrderId(x). NULL folds to NULL. */
export const ORDER_ID_FOLD_SQL = 'order_id_fold';

/** foldOrderId as an SQL expression of `expr` (a column or a parameter): the one way SQL folds an order id. */
export function orderIdFoldSql(expr: string): string {
  return `${ORDER_ID_FOLD_SQL}(${expr})`;
}

/** The part of a connection registerIdentity needs (better-sqlite3's Database has it). */
export interface FunctionHost {
  function(name: string, options: { deterministic: boolean; varargs?: boolean }, fn: (...args: unknown[]) => unknown): unknown;
}

/**
 * Registers trxid_fold() and order_id_fold() on a connection. Deterministic: SQLite may then use
 * them in an index and in a partial index's or trigger's condition. Not direct-only, for the same reason. A connection
 * without it cannot write a row (the indexes need it): every connection the project opens on a
 * home's database registers it (store/db.ts openDb, metrics/read-worker.ts).
 */
export function registerIdentity(db: FunctionHost): void {
  db.function(TRXID_FOLD_SQL, { deterministic: true }, (v: unknown) => (v === null || v === undefined ? null : foldTrxid(String(v))));
  db.function(ORDER_ID_FOLD_SQL, { deterministic: true }, (v: unknown) => (v === null || v === undefined ? null : foldOrderId(String(v))));
}

/** Whether a string is well-formed UTF-16 (no lone surrogate): the only text SQLite, UTF-8 and JSON carry unchanged. */
export function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}

/** The reason an identity (a trxid, a player id, an account name…) that is not well-formed text is refused. */
export const NOT_WELL_FORMED = 'is not well-formed text (it holds half of a UTF-16 surrogate pair, which cannot be stored or sent as itself); type it again';

/** Characters, not UTF-16 units (the pattern counts code points, as JSON Schema's maxLength does). */
export const TRXID_MAX_LENGTH = 100;

/**
 * The invisible characters a trxid may not hold, spelled as UTF-16 ranges rather than \p{Cc}\p{Cf},
 * so that the pattern means the same to every engine that reads the OpenAPI document: ajv (which
 * Spectral and many validators use) and Python's re read \p{…} without unicode mode as the letter
 * "p" and the rest as literals, and then refused every trxid with a "p" or "s" in it. The list is
 * Unicode's Cc (C0, DEL, C1) and the Cf of the Basic Multilingual Plane (soft hyphen, Arabic number
 * signs, zero-width space and joiners, bidi marks, embeddings and isolates, word joiner and
 * invisible operators, BOM, interlinear annotation); test/store/trxid-fold.test.ts holds it equal to
 * \p{Cc}\p{Cf} over the BMP of the running Node. Format characters beyond the BMP (tag characters,
 * U+E0001…) are not listed: a class without unicode mode cannot name them, and no spreadsheet puts
 * them in a cell. \uD800-\uDFFF: in unicode mode only a lone surrogate (half a pair) matches it.
 */
export const TRXID_INVISIBLE = '\\u0000-\\u001F\\u007F-\\u009F\\u00AD\\u0600-\\u0605\\u061C\\u06DD\\u070F\\u0890\\u0891\\u08E2\\u180E\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\uFEFF\\uFFF9-\\uFFFB';

/** The trxid rule as one regular expression: the server's check (unicode mode) and, as its source, the OpenAPI schema's pattern. */
export const TRXID_PATTERN = new RegExp(`^(?![=+\\-@'\\u2019])[^\\s${TRXID_INVISIBLE}\\uD800-\\uDFFF]{1,${TRXID_MAX_LENGTH}}$`, 'u');

/** Why a (trimmed) trxid breaks the rule, or undefined when it keeps it. The messages name no field: the caller does. */
export function trxidProblem(v: string): string | undefined {
  if (TRXID_PATTERN.test(v)) return inCheckSpace(v) ? `"${v}" is spelled like a player check's trxid (${CHECK_TRXID_PREFIX}…, once its characters are folded as the supplier may fold them); orders and checks never share one: choose another` : undefined;
  if (!isWellFormed(v)) return NOT_WELL_FORMED;
  if (v === '') return 'is empty';
  if (/^[=+\-@]/.test(v)) return `"${v}" looks like a spreadsheet formula, not an id`;
  if (/^['\u2019]/.test(v)) return `"${v}" starts with an apostrophe (a spreadsheet's mark for text); remove it`;
  if (/\s/u.test(v)) return `"${v}" contains spaces; an id is written without them`;
  if (/[\p{Cc}\p{Cf}]/u.test(v)) return 'contains invisible control characters';
  return `is longer than ${TRXID_MAX_LENGTH} characters`;
}

/** A supplier account as the store records it with every send: where the requests go and which key signs them. */
export interface AccountIdentity {
  /** The URL's origin (scheme, host, port), or IN_PROCESS_SANDBOX for the home's own sandbox. */
  origin: string;
  /** First 16 hex digits of SHA-256 over a domain tag and the key: tells keys apart, cannot give one back. */
  keyFp: string;
}

/** The origin of an account without a URL: the sandbox the process starts in its home (its port changes at every start). */
export const IN_PROCESS_SANDBOX = 'in-process-sandbox';

/** The identity of an account from its configured URL (null: the in-process sandbox) and key. */
export function accountIdentity(url: string | null, key: string): AccountIdentity {
  const origin = url === null ? IN_PROCESS_SANDBOX : new URL(url).origin;
  // Domain-separated, so this fingerprint is no SHA-256 of the key that some other system also shows.
  const keyFp = createHash('sha256').update('topup-runner account key fingerprint v1\u0000').update(key).digest('hex').slice(0, 16);
  return { origin, keyFp };
}

/**
 * The trxid space of player checks (POST /pubgvvfy, /mlvfy: docs/player-checks.md), stated once.
 * Every check carries a trxid of its own (the supplier's public clients use `CHK-PUBG-…`), and a
 * check's trxid must never be one an order could carry, or a check and an order could be taken by
 * the supplier for one purchase key. So a check trxid starts with CHECK_TRXID_PREFIX, whose leading
 * "-" TRXID_PATTERN refuses for every order trxid (a file's, the order API's, a derived one):
 * the two spaces cannot meet. checkTrxid() makes one; the client refuses to send a check under
 * anything else (api/player-check.ts), and refuses to send an order under a check's (api/client.ts).
 */
export const CHECK_TRXID_PREFIX = '-CHK-';
const CHECK_SPACE_KEY = foldTrxid(CHECK_TRXID_PREFIX);

/** A fresh check trxid: `-CHK-PUBG-<16 hex>`. `hex16` is 16 random hex digits (kernel/entropy.ts). */
export function checkTrxid(kind: 'pubg' | 'ml', hex16: string): string {
  return `${CHECK_TRXID_PREFIX}${kind.toUpperCase()}-${hex16}`;
}

/**
 * Whether a trxid, as given anywhere (an order's from a file or a shop, one about to be sent),
 * is in the check space once folded: `－CHK-…` (a fullwidth hyphen-minus) or `﹣chk-…` is the
 * same purchase key as `-CHK-…` (foldTrxid), so no order may carry it.
 */
export function inCheckSpace(trxid: string): boolean {
  return trxidKey(trxid).startsWith(CHECK_SPACE_KEY);
}

/** A trxid of the check space: the prefix, and (so it holds whatever the prefix becomes) not an order's. */
export function isCheckTrxid(trxid: unknown): boolean {
  // Asked of whatever a caller is about to send: a body without a trxid (the API's own refusal
  // answers it, INVALID REQUEST) is not a check's.
  return typeof trxid === 'string' && trxid.startsWith(CHECK_TRXID_PREFIX) && !TRXID_PATTERN.test(trxid);
}
