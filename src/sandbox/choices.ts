/**
 * SANDBOX CHOICES — every point where the spec (/work/shared/reseller-api-spec.md) says
 * "not shown" or leaves a gap, and what the sandbox does there. One place, on purpose: when a
 * real account shows different behaviour, change it here and in the module named.
 *
 * Authentication (auth.ts, spec §5)
 *  - Key format: 8–256 characters of [A-Za-z0-9._-]. Anything else → 401 INVALID_API_KEY_FORMAT.
 *  - `X-API-Key` wins when both headers are sent. An `Authorization` header that is not
 *    `Bearer <key>`, or an empty X-API-Key, is a malformed key (INVALID_API_KEY_FORMAT).
 *  - Failure bodies are `{ success:false, code, error }` with error = code text.
 *  - Order: key (401) → account state (403, see table in auth.ts) → IP allowlist (403) → rate
 *    limit (429) → JSON (401 INVALID JSON, POST /orders only) → route. Unknown paths and wrong
 *    methods answer 501 NOT IMPLEMENTED only after all of that, so unauthenticated probes learn
 *    nothing. An empty POST body is not JSON (INVALID JSON).
 *  - IP: the socket address only (X-Forwarded-For is ignored); `::ffff:a.b.c.d` is reported as
 *    a.b.c.d and `::1` as 127.0.0.1. ipAllowlist null = no allowlist; [] = IP_ALLOWLIST_REQUIRED;
 *    non-empty without the caller = IP_NOT_ALLOWED.
 *
 * Rate limits (rate-limit.ts, spec §8)
 *  - Exact sliding windows per account over all routes: a call at t counts while now < t + window.
 *  - Only calls that pass the limiter consume budget; 401/403 answers and 429'd calls do not.
 *    Every call from an identified account (any status) is kept in the admin call log with
 *    `admitted` telling whether it consumed budget. 401s (no account) are not logged.
 *  - Retry-After = ceil(seconds until every window has room), at least 1.
 *  - faults.forceRateLimit answers the next `remaining` identified calls 429 RATE_LIMIT with the
 *    given Retry-After (seconds, or an HTTP date on the sandbox clock); calls arriving before the
 *    last forced Retry-After ran out are listed in rate-stats `earlyAfterForced`.
 *  - maintenance code RATE_LIMIT_UNAVAILABLE answers 503 on every public route (the limiter
 *    itself is "down"); MAINTENANCE and API_ORDER_DISABLED answer 503 on POST /orders only.
 *    `maintenance.untilMs` is an absolute time on the sandbox clock; absent = until cleared.
 *
 * Catalog (default-catalog.ts, live-catalog.ts, spec §2)
 *  - serverIdOptions / regionOptions elements are `{ value, label }`. An imported catalog's bare
 *    strings are turned into that form.
 *  - Status values besides 'active': 'inactive' (and 'disabled'). Inactive lines and packs are not
 *    listed; a pack on an inactive line is not listed either.
 *  - Stock fields (quantity, inStock, quantityMin 1, quantityMax = min(stock, 500)) appear on
 *    gamekey/giftcard packs and on any imported pack carrying `quantity`; imported key/card packs
 *    without a stock figure start with 1000. An out-of-stock pack is still listed (inStock false).
 *
 * POST /orders (orders.ts, submit.ts, spec §4.5, §7)
 *  - Check order: maintenance (503) → idempotency lookup: FORBIDDEN (403) → DUPLICATE_IN_FLIGHT
 *    (429) → replay (200) → validation (400) → stock → balance → create. With
 *    faults.validateBeforeIdempotency validation runs before the lookup. The key is read from
 *    its own fields only, so a resubmit with some other malformed field still replays.
 *  - Idempotency key = `idempotencyKey` (alias `idempotency`) when given, else `trxid`. Keys are
 *    unique across all accounts: another account's key → FORBIDDEN. A replay returns the stored
 *    order even when the new body differs (no comparison; the key is the purchase). trxid on its
 *    own is not checked for uniqueness when an idempotencyKey is given.
 *  - Aliases: pid|PID, trxid|trxId|idtrx|idTrx, userId|userID, idempotencyKey|idempotency (the
 *    first name wins when several are sent). String fields may be JSON numbers (converted);
 *    booleans/objects/arrays → INVALID BODY. Blank strings and null count as absent.
 *  - Validation order: body not an object or a field of the wrong type / quantity not an
 *    integer >= 1 → INVALID BODY; pid or trxid absent → INVALID REQUEST; pid not in the catalog →
 *    UNKNOWN PID; pack whose line is missing → code INVALID_PRODUCT; line not active → GAME
 *    DISABLED; pack 'inactive'/'disabled' → code PRODUCT_DISABLED; pack in any other non-active
 *    status → code INVALID_PRODUCT; pack price <= 0 → INVALID PACK; quantity on a non key/card
 *    line → QUANTITY ONLY FOR GAMEKEY OR GIFTCARD; quantity > 500 → QUANTITY EXCEEDS MAX (code
 *    QUANTITY_EXCEEDS_MAX, never capped); a field of the line's `required` absent → INVALID
 *    REQUEST; ff* lines userId not 5–20 digits, Riot lines userId not `name#tag` (name 3–16 chars,
 *    tag 3–5 letters/digits), zoneId not 1–10 digits → INVALID REQUEST (rejected at submit, no
 *    order); serverId not one of serverIdOptions, or region (or a serverId shortcut) that
 *    resolveRegion cannot map → INVALID PACK.
 *  - A Riot line is a line whose userId label mentions "Riot" or "#".
 *  - quantity is optional on key/card lines (one unit). Key/card lines ignore userId if sent.
 *  - Stock shortage → 400 `{ orderCreated:false, status:'cancelled', game, error:'INSUFFICIENT
 *    STOCK' }`; balance shortage → same shape with INSUFFICIENT BALANCE. Nothing is created and the
 *    trxid stays free.
 *  - Codes with errors use error = code text (PRODUCT_DISABLED, INVALID_PRODUCT); the
 *    space-separated errors of §7 carry no code.
 *
 * Orders and fulfilment (fulfilment.ts, state.ts)
 *  - orderId = 'ORD' + (1000000 + row sequence): unique and stable across restarts.
 *  - Charge = price × (quantity ?? 1), taken at creation. Keys/cards complete at once with one
 *    code per unit (`PREFIX-XXXX-XXXX-XXXX`, deterministic per seed + trxid) and take stock.
 *  - Top-ups: fail if userId contains "fail" (any case) or equals "99999" (TEST MAGIC), or
 *    uniform(seed, trxid, 'fail') < failShare; failing orders always pass through processing.
 *    Otherwise processing when uniform(seed, trxid, 'processing') < processingShare, else
 *    completed at once. Processing time = min + uniform(seed, trxid, 'duration') × (max − min).
 *    Failed orders end cancelled, error INVALID PLAYER, refunded true, money back in the ledger
 *    (the real-world style adds failures at submit and cancels without refund: see below).
 *  - Status moves lazily: every public request and admin read first settles due orders. The end
 *    time is the decided settleAt, so durationSec does not depend on when someone polled.
 *  - durationSec: whole seconds since placement (processing) or from placement to the end.
 *  - Order bodies (spec style) omit empty fields; they add trxid, pid and createdAt (ISO). `codes`
 *    only on a completed key/card order; `error` and `refunded` only on cancelled ones; zoneId is
 *    not echoed.
 *
 * GET /history (server.ts, spec §4.7)
 *  - Newest first (createdAt, then creation order). limit: non-integer/absent → 30, clamped to
 *    1..200. Paged when `page` is present: page starts at 1, non-integer → 1, below 1 → 1;
 *    pageSize non-integer/absent → 20, clamped to 1..50. Paged answers also echo page and pageSize.
 *
 * Faults (faults.ts)
 *  - Share draws = uniform(seed, kind, account, idempotency key, attempt number), attempt counted
 *    per (account, key) in memory. error5xxBefore is drawn before the idempotency lookup (so it
 *    also hits replays); lostResponse, error5xxAfter and slow only hit submits that created a new
 *    order. 500 bodies are `{ success:false, error:'INTERNAL SERVER ERROR' }`.
 *  - An order is "in flight" from its creation until its submit is answered (or dropped).
 *  - blackhole holds every public request unanswered; admin routes keep answering.
 *
 * Persistence and accounts (state.ts, index.ts)
 *  - Money is stored in micro-dollars. A restart on the same stateFile keeps an existing account
 *    exactly as stored (balance, state, allowlist); options only shape accounts new to the file.
 *  - Admin `balance` (set) is written to the ledger as a 'topup' of the difference, so the
 *    ledger always sums to the balance. Admin `account` with an unknown apiKey creates it.
 *  - The call log, rate windows, fault and fulfilment settings live in memory only; the call log
 *    keeps the newest 500 000 calls.
 *  - Admin answers add `success: true`; GET /__sandbox/calls answers `{ success, calls: [...] }`.
 *  - SandboxOptions.now (extra, optional) replaces the clock for tests.
 *
 * Answer styles (answers.ts, real-world.ts, order-ids.ts; issue 11 "Real suppliers")
 *  - `spec` (default) answers in the spec's exact types, as everything above describes.
 *    `real-world` answers the way real deployments of this API do. Chosen by
 *    startSandbox({ answers }), `topup sandbox --answers`, TOPUP_SANDBOX_ANSWERS for the daemon's
 *    in-process sandbox, and switched at run time by POST /__sandbox/answers
 *    {"style":"real-world", …settings} (GET shows the style and settings; unknown keys → 400).
 *  - Presentation is one pass at the end (Answers.render → real-world.ts) over the spec-shaped
 *    answer: the ledger, balances, validation and every rule are the same code in both styles.
 *    Admin answers are never restyled: the admin ledger is the truth in both styles.
 *  - Every variation is a draw of uniform(seed, …): per order (so one order is always written the
 *    same way) or per call number (balance currency, proxy pages, success flags).
 *    realWorld.seed defaults to the fulfilment seed; `--seed` sets both.
 *  - Numbers: price, amountUsd, balanceUsd as strings with at least two decimals, exact to the
 *    micro-dollar ("0.92", "91.00"); count, total, page, pageSize, durationSec as integer strings;
 *    stock figures of key/card packs as numbers or strings (per pack).
 *  - Empty fields are `null`, never omitted: an order always carries orderCreated, orderId, id,
 *    status, game, packName, amountUsd, durationSec (null in history), userId (null on keys),
 *    serverId, moreId, codes, error, refunded, idempotentReplay. Failure bodies carry
 *    `code: null` when they have no code; a rejection at submit carries `orderId: null`.
 *    Exception, on purpose: a cancel WITHOUT refund writes `refunded: false` or leaves the
 *    field out (half each), because real deployments do both.
 *  - Status words: per order one of Completed/Success/Done, Processing/Pending/Waiting,
 *    Cancelled/Canceled/Failed, plus Refunded for a cancel that was refunded — only words public
 *    clients of this API map. A rejection at submit uses a cancelled word.
 *  - Booleans (orderCreated, success, refunded, idempotentReplay, hasMore, inStock): half native,
 *    a quarter "true"/"false", a quarter 1/0.
 *  - Ids: orderId is a JSON number and `id` carries the same number. Half the orders (drawn from
 *    the order's sequence alone, so ids survive restarts and setting changes) get a 19-digit
 *    snowflake above 2^53 written as raw digits; it is odd, so JSON.parse always rounds it to
 *    another number. GET /orders/:id accepts the spec id (ORD…) and the order's own public id in
 *    either style; a rounded snowflake is 404 ORDER NOT FOUND. The admin ledger lists `publicId`.
 *    An order created while the spec style was on keeps its `ORD…` (orders.id_style): a real
 *    supplier does not respell ids it handed out (trial s36, D2: a restored home could not find its
 *    own orders in the switched history, so no history without trxids ever cleared a row).
 *  - userId that is a safe integer without a leading zero is echoed as a JSON number; any other
 *    (leading zero, Riot name#tag, 16+ digits) stays a string.
 *  - Orders carry no trxid, pid or createdAt (the spec's order shape has none; ours were extras).
 *  - Codes, per order: an array of strings, one comma-separated string, or [{code, pin}] (pin: 4
 *    seeded digits). lateCodesShare (0.3) of key/card orders say completed with codes null or []
 *    until lateCodesMs ([1000, 4000] ms, drawn per order) after completion; the submit answer of
 *    such an order has no codes. Charge and codes exist from the start: only the answer lags.
 *  - Catalog: top-up packs carry quantity, inStock, quantityMin, quantityMax as null; lines
 *    without options carry serverIdOptions and regionOptions as null.
 *  - /balance: balanceUsd a string; `currency` left out on half the calls.
 *  - 429 RATE_LIMIT from the limiter carries no Retry-After. A 429 forced by
 *    faults.forceRateLimit keeps the header it asked for (that fault exists to test it).
 *  - HTML 502 (htmlShare, default 0.025; 0 disables): after the rate limiter admitted the call
 *    (it consumes budget) and the body was read, a drawn share of public calls is answered by a
 *    proxy's 502 page (text/html, Cloudflare- or nginx-style). For POST /orders half of those
 *    come AFTER the submit ran: an order it made stands, charged in the ledger, and only its
 *    answer is lost. The call log records status 502.
 *  - Fates (decided at placement, from the fulfilment seed and the trxid; the style in force at
 *    placement decides): of the failing top-ups, instantFailShare (0.5) fail at submit — 200,
 *    orderCreated true, a cancelled status word, error INVALID PLAYER — and the rest after
 *    processing as in the spec style; independently unrefundedShare (0.5) of them are cancelled
 *    WITHOUT refund: no refund entry, the charge stays, refunded false. A refunded failure at
 *    submit writes its charge and its refund in one transaction at the same time.
 *  - Manual order: when the style is switched on (at start, by the admin route, or when the admin
 *    creates an account while it is on), each account gets one order placed "on the website":
 *    the first listed top-up pack, charged in the ledger (entry without trxid), no trxid, status
 *    'processing' inside for ever, shown in real-world answers as "Manual Review" or "On Hold" (per
 *    account). Once per account (also across restarts on a state file); an account whose balance
 *    cannot pay for it gets none. The admin ledger marks it `source: 'manual'`.
 *  - State files written before these choices get the new order columns (refund_on_cancel,
 *    source) with their defaults on open.
 */
export {};
