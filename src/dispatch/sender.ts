/**
 * One send of one row: intent → POST /orders → outcome.
 *
 * The one sentence for this path: the row is moved to `sending` with its exact stored body in a
 * synchronous=FULL commit (RowStore.markSending) after the rate gate admits the call and before
 * the request leaves; if the process dies at any point after that, the restart finds the row in
 * `sending` and resends the same body with the same trxid, which the API answers with the
 * existing order (idempotent replay) or creates it once.
 */
import { ApiError, TopupError, ErrorCode, NotDispatchedError, coerceError } from '../kernel/errors.js';
import { Priority, type SubmitAnswer } from '../api/client.js';
import { auditCopy } from '../api/audit.js';
import type { Runtime } from '../runtime.js';
import { FOREIGN_ORDER_CODE, type Actor, type Doubt, type Row, type SendIntent } from '../store/rows.js';
import type { AnswerGroup } from './answer-group.js';
import type { IntentGroup } from './intent-group.js';
import { describeMismatches, factsFor, foreignOrderProblem, mismatches, mustProve, originOf, serverOffset, type Came } from './order-match.js';
import type { Pauses } from '../account/pauses.js';
import { crashPoint } from '../kernel/crash-points.js';
import { moveRow, movesOnRefusal, namesAnOrder, noteBalanceShort } from './failover.js';
import { isStoreUnwritable } from './store-health.js';

/** Whether this process's intent for the row is in the store (the row is `sending` or `resending`), read again. */
function intent(row: Row, rt: Pick<Runtime, 'rows'>): boolean {
  const now = rt.rows.get(row.batchId, row.idx)?.state;
  return now === 'sending' || now === 'resending';
}

export type SendResult =
  | 'placed'
  | 'not-sent'
  | 'invalid-price'
  | 'rejected'
  | 'verify'
  | 'review'
  | 'retry'
  | 'hold-balance'
  | 'paused-account'
  | 'paused-maintenance'
  | 'moved';

const AMBIGUOUS_BACKOFF_MS = [500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000];

class NotSent extends TopupError {
  constructor() {
    // Stryker disable next-line StringLiteral: never shown: sendRow catches NotSent and returns 'not-sent'
    super(ErrorCode.Internal, 'row is no longer ours to send');
  }
}

function backoff(rt: Pick<Runtime, 'entropy'>, attempts: number): number {
  const base = AMBIGUOUS_BACKOFF_MS[Math.min(Math.max(attempts - 1, 0), AMBIGUOUS_BACKOFF_MS.length - 1)]!;
  return base + Math.floor(rt.entropy.random() * (base / 4));
}

export interface SenderDeps {
  rt: Pick<Runtime, 'accounts' | 'accountOf' | 'identityOf' | 'clock' | 'config' | 'entropy' | 'fence' | 'log' | 'owner' | 'routing' | 'rows'>;
  /** The pause of the row's account (each account pauses on its own). */
  pausesOf(account: string): Pauses;
  /** Called when a row's batch must wait for balance. */
  onBalanceShort(batchId: string, detail: string): void;
  /** Called once when a pause starts (for logs and notifications). */
  onPause(kind: 'account' | 'maintenance', code: string, detail: string): void;
  /** Whether the store can be written (store-health.ts): told of every failed and every good intent write. */
  store?: { failed(err: unknown, now: number, mono: number): void; ok(now: number): void; fileGone?(now: number, mono: number, throttled?: boolean): boolean };
  /** Intents committed in groups (intent-group.ts); without it, each is committed at once on its own. */
  intents?: Pick<IntentGroup, 'write'>;
  /** `placed` answers committed in groups (answer-group.ts); without it, each is committed at once on its own. */
  answers?: Pick<AnswerGroup, 'placed'>;
}

/** Re-checks maxPriceUsd against a catalog at most catalogMaxAgeMs old. False: the row was invalidated. */
async function priceStillOk(rt: Pick<Runtime, 'accountOf' | 'clock' | 'rows'>, row: Row): Promise<boolean> {
  if (row.maxPriceUsd === null || row.state !== 'pending' || !row.productId) return true;
  const { index } = await rt.accountOf(row.account).catalog.get();
  const price = index.byPid(row.productId)?.product.price;
  if (price === undefined || price <= row.maxPriceUsd + 1e-9) return true;
  const error = `maxPriceUsd: the catalog price rose to ${price} USD, above the cap of ${row.maxPriceUsd} USD; not sent`;
  return !rt.rows.priceRose(row.batchId, row.idx, rt.clock.now(), error);
}

/** One intent committed on its own (no group): markSending's answer and its time. */
function writeIntent(rt: Pick<Runtime, 'rows'>, x: SendIntent): { ok: boolean; now: number } {
  return { ok: rt.rows.markSending(x.batchId, x.idx, x.a, x.busyUntil, x.sent), now: x.a.now };
}

export async function sendRow(deps: SenderDeps, row: Row, signal?: AbortSignal): Promise<SendResult> {
  const { rt } = deps;
  const request = row.request;
  if (!request) throw new TopupError(ErrorCode.Internal, `row ${row.idx} of ${row.batchId} has no stored request`);
  try {
    if (!(await priceStillOk(rt, row))) return 'invalid-price';
  } catch (err) {
    // Without a fresh price the cap cannot be honoured: try the row again later.
    rt.log.warn({ batch: row.batchId, line: row.line, err: coerceError(err).message }, 'cannot refresh the catalog for a price check');
    rt.rows.deferPending(row.batchId, rt.clock.now() + 5_000);
    return 'retry';
  }
  let placed: SubmitAnswer;
  /** The intent is committed: from here the row is `sending` (or `resending`) and owed an answer. */
  let intent = false;
  /** When the intent was committed (the first send's time, for a row never sent before). */
  let intentAt = 0;
  try {
    placed = await rt.accountOf(row.account).client.submitOrder(request, {
      priority: Priority.submit,
      ...(signal ? { signal } : {}),
      beforeSend: async () => {
        // The warm standby's fence (standby/fence.ts), asked where the send is decided: right
        // before the intent. A home taken over by another node (or one that cannot read the
        // fence) sends nothing; the row stays as it was, unsent or owed a resend of its trxid.
        if (rt.fence && !rt.fence.allows()) throw new NotSent();
        // The operator's pause (`topup account pause`) holds what already waits at the rate gate too:
        // the dispatch stage starts up to max-in-flight rows at once, and at 2 calls a second those
        // went on for seconds after "no order is sent to it" (found by the console's legend test).
        // Nothing is written: the row stays as it was, and goes when the account is resumed (or moves).
        if (deps.pausesOf(row.account).current?.kind === 'operator') throw new NotSent();
        // The store's file deleted or replaced while this send waited: it is not sent (its intent would be written into a file nobody opens again).
        if (deps.store?.fileGone?.(rt.clock.now(), rt.clock.mono(), false) === true) throw new NotSent();
        // next_try_at = the timeout: an in-flight row is not due again while its request is open.
        const build = (now: number): SendIntent => ({
          batchId: row.batchId, idx: row.idx, a: { owner: rt.owner, now }, busyUntil: now + rt.config.requestTimeoutMs,
          sent: { trxid: row.trxid!, account: row.account, ...rt.identityOf(row.account) },
        });
        // With the dispatch stage's group (intent-group.ts) the intent shares its fsync with those of the sends admitted with it.
        const { ok, now } = deps.intents ? await deps.intents.write(build) : writeIntent(rt, build(rt.clock.now()));
        if (!ok) throw new NotSent();
        deps.store?.ok(now);
        intent = true;
        intentAt = now;
        crashPoint('intent-committed');
      },
    });
  } catch (err) {
    if (err instanceof NotSent) return 'not-sent';
    if (err instanceof NotDispatchedError && intent) {
      // The intent was committed but the request never left (a stop during a Retry-After hold):
      // nothing can have been created by it, so the row is as it was: not sent, or still in doubt
      // from an earlier attempt. A first send stays a first send (its replay still tells).
      const now = rt.clock.now();
      rt.rows.notCreated(row.batchId, row.idx, { owner: rt.owner, now }, { nextTryAt: now, note: null, answer: null });
      // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
      rt.log.info({ batch: row.batchId, line: row.line, trxid: row.trxid }, 'stopped before the request left: the row will be sent later');
      return 'not-sent';
    }
    // Stopped before the intent (waiting for the rate gate): nothing was sent, the row is as it was.
    if (!intent && signal?.aborted && !(err instanceof ApiError)) return 'not-sent';
    crashPoint('response-received');
    // After the intent, every way out leaves the row owed a resend. A stop that aborted the wait
    // for a Retry-After hold, or the request itself, may or may not have let it leave: `resending`
    // (not counted: no answer was waited for), never a `sending` row nobody would send again.
    if (signal?.aborted && !(err instanceof ApiError)) {
      const now = rt.clock.now();
      rt.rows.noAnswer(row.batchId, row.idx, { owner: rt.owner, now }, { nextTryAt: now, counted: false, answer: null });
      // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
      rt.log.warn({ batch: row.batchId, line: row.line, trxid: row.trxid }, 'stopped with this row\'s request about to leave or open: it will be resent with the same trxid');
      return 'retry';
    }
    return await handleFailure(deps, row, err);
  }
  crashPoint('response-received');
  return handlePlaced(deps, row, placed, intentAt);
}

/**
 * The answer carried an order. It settles the row only if it is the row's purchase (see
 * dispatch/order-match.ts): an order made for another purchase under the same trxid goes to review with
 * both sides shown, and is never recorded as this row's.
 */
async function handlePlaced(deps: SenderDeps, row: Row, placed: SubmitAnswer, intentAt: number): Promise<SendResult> {
  const { rt } = deps;
  const account = rt.accountOf(row.account);
  const pauses = deps.pausesOf(row.account);
  const now = rt.clock.now();
  const answer = auditCopy(placed.answer);
  const where = { batch: row.batchId, line: row.line, trxid: row.trxid, orderId: placed.orderId, http: placed.httpStatus };
  const names = account.catalog.gameNamesOf(row);
  const wrong = mismatches(row, placed, names);
  if (wrong.length > 0) {
    rt.rows.toReview(
      'mismatch',
      row.batchId,
      row.idx,
      { owner: rt.owner, now },
      `REVIEW: the API answered with order ${placed.orderId} (${placed.statusWord ?? placed.status}), which is not this row's purchase ` +
        `(${describeMismatches(wrong)}). The trxid ${row.trxid} was probably used before for another purchase, so nothing may have been ` +
        `bought for this row. Check that order before ordering this row again (topup review)`,
      { answer, code: FOREIGN_ORDER_CODE },
    );
    // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
    rt.log.error({ ...where, mismatch: wrong }, 'the API answered with an order that is not this row\'s purchase: marked for review');
    return 'review';
  }
  // `row` is as it was read before this send: never sent before means this was the trxid's first
  // send from this home. (A row sent before, even one whose attempt was answered "not created",
  // cannot rule out an order made by that attempt: its replay is of unknown origin.)
  const firstSend = row.firstSentAt === null;
  // An order that existed before this row's first send (a replay of its first send, or its
  // creation time), or a replay of a resend under a trxid the file gave (it may have been used
  // before: nothing tells), is not proven to be one its sends made: it settles the row only if it
  // names every field of the purchase, and never a key/card row (dispatch/order-match.ts; store/invariants.ts).
  const came: Came = placed.idempotentReplay === true ? (firstSend ? 'first-send-replay' : 'resend-replay') : 'fresh';
  const origin = originOf(placed, row.firstSentAt ?? intentAt, came, serverOffset(account.lastServerDate));
  const prove = mustProve(row, origin);
  const foreign = prove ? foreignOrderProblem(row, placed, names) : null;
  if (foreign !== null) {
    const how =
      origin === 'earlier'
        ? `which existed before this row was first sent (${came === 'first-send-replay' ? 'a replay of an earlier purchase under the trxid' : 'its creation time is earlier'} ${row.trxid})`
        : `a replay under this row's own trxid ${row.trxid} whose creation time the API did not give: it may be this row's order (an earlier attempt's answer was lost) or an earlier purchase under the same trxid`;
    rt.rows.toReview(
      'mismatch',
      row.batchId,
      row.idx,
      { owner: rt.owner, now },
      `REVIEW: the API answered with order ${placed.orderId} (${placed.statusWord ?? placed.status}), ${how}, and ${foreign}. ` +
        `It may be this row's purchase or another one: check that order (and who has its codes). If it is this row's, record it: topup review resolve ${row.batchId}:${row.line} --charged ${placed.orderId}; ` +
        `if it is not, nothing was bought for this row under its trxid: order it again with a new trxid`,
      { answer, ...(origin === 'earlier' ? { code: FOREIGN_ORDER_CODE } : {}) },
    );
    // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields
    rt.log.error({ ...where, why: foreign, origin }, 'the API answered with an order not proven to be this row\'s: marked for review');
    return 'review';
  }
  // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
  if (placed.httpStatus < 200 || placed.httpStatus >= 300) rt.log.warn(where, 'an order came with an HTTP error status: recorded as placed');
  const note = !prove
    ? null
    : came === 'first-send-replay'
      ? `the API answered the first send of this trxid with an existing order (${placed.orderId}, a replay): it names every field of this row's purchase, each the same, so no new purchase was made`
      : `the API answered with an existing order (${placed.orderId}, a replay) without saying when it was made; it names every field of this row's purchase, each the same. If the trxid ${row.trxid} was used before, this may be that earlier purchase: check it`;
  const { facts, awaitingCodes } = factsFor(row, placed);
  try {
    const extra = { answer, note: note ?? (awaitingCodes ? 'the API reported this key/card order completed without codes; reading it again for them' : null) };
    // With the group (answer-group.ts): committed with the other answers of this turn; this send
    // returns only once it is, so nothing that follows from the answer runs before it.
    if (deps.answers) await deps.answers.placed({ batchId: row.batchId, idx: row.idx, o: facts, now, nextPollAt: now + rt.config.pollIntervalMs, extra });
    else rt.rows.placed(row.batchId, row.idx, facts, now, now + rt.config.pollIntervalMs, extra);
  } catch (err) {
    if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
    // The API answered with an order another row of ours already holds: resending cannot settle
    // that, and guessing could misreport a charge. An operator decides, with the order named.
    rt.rows.toReview(
      'mismatch',
      row.batchId,
      row.idx,
      { owner: rt.owner, now },
      `REVIEW: the API answered this row with order ${placed.orderId} (${placed.status}), which another row already holds; check the order history before ordering it again`,
      { answer },
    );
    // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
    rt.log.error(where, 'the API answered with an order already held by another row: marked for review');
    return 'review';
  }
  // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
  if (note) rt.log.warn(where, 'first send of this trxid answered with an existing order (replay); it matches the row');
  const ended = pauses.clear();
  // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
  if (ended) rt.log.info({ pause: ended.kind, code: ended.code }, 'sending resumed');
  rt.log.debug({ ...where, status: placed.status, replay: placed.idempotentReplay }, 'order placed');
  return 'placed';
}

/** Sends without a definite answer a row must have had, besides the time, before resending stops (with the back-off, at least 8 s of trying). */
const MIN_UNANSWERED_SENDS = 5;
/** How many request timeouts the history check waits after the last send: the supplier may finish a request after we gave up on it. */
const HISTORY_CHECK_DELAY_TIMEOUTS = 4;

/**
 * A row with no definite answer for longer than reviewAfterMs, over at least
 * MIN_UNANSWERED_SENDS sends (so a row whose resends were held back, e.g. during an account
 * pause or while no daemon ran, is not given up on its next one), stops being resent: resending
 * the same trxid is safe but has not settled it, and a batch must end. It goes to `searching`,
 * due HISTORY_CHECK_DELAY_TIMEOUTS request timeouts later, where history either shows its order
 * (placed) or leaves it for an operator (`review`). Only transport failures, 5xx, unreadable
 * answers and 404s count: DUPLICATE_IN_FLIGHT says the API is still working on it.
 */
function stopResending(rt: Pick<Runtime, 'config' | 'log' | 'rows'>, row: Row, a: Actor, doubt: Doubt | undefined, last: string): boolean {
  if (doubt?.state !== 'resending' || doubt.doubtSince === null) return false;
  if (a.now - doubt.doubtSince < rt.config.reviewAfterMs || doubt.doubtTries < MIN_UNANSWERED_SENDS) return false;
  const since = new Date(doubt.doubtSince).toISOString();
  const why = `no definite answer since ${since} (${doubt.doubtTries} sends unanswered, last: ${last})`;
  if (!rt.rows.giveUp(row.batchId, row.idx, a, why, a.now + HISTORY_CHECK_DELAY_TIMEOUTS * rt.config.requestTimeoutMs)) return false;
  // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
  rt.log.error({ batch: row.batchId, line: row.line, trxid: row.trxid, since, unanswered: doubt.doubtTries, last }, 'no definite answer in time: no more resends, checking order history');
  return true;
}

/**
 * What a failed send does to the row. The store picks the edge from the row's state: a refusal of
 * a first send is final (`rejected`), of a row in doubt a history check (`verifying`). Answers are
 * applied only while this process holds the batch's lease (see rows.ts).
 */
async function handleFailure(deps: SenderDeps, row: Row, err: unknown): Promise<SendResult> {
  const { rt } = deps;
  const pauses = deps.pausesOf(row.account);
  const a: Actor = { owner: rt.owner, now: rt.clock.now() };
  const now = a.now;
  if (!(err instanceof ApiError) && isStoreUnwritable(err) && deps.store) {
    // The store cannot be written (disk full, read-only, gone): the back-off below would fail too.
    // Sending stops in memory (store-health.ts); the row stays as the store has it: never sent if
    // the intent failed, else `sending`, owed a resend of its trxid once writes work again.
    deps.store.failed(err, now, rt.clock.mono());
    try {
      if (intent(row, rt)) rt.rows.noAnswer(row.batchId, row.idx, a, { nextTryAt: now + 5_000, counted: false, answer: null });
    } catch (again) {
      if (!isStoreUnwritable(again)) throw again;
    }
    return 'retry';
  }
  if (!(err instanceof ApiError)) {
    // Not an answer from the API (e.g. the store refused a write): the request may have left.
    rt.log.error({ batch: row.batchId, line: row.line, err: coerceError(err) }, 'unexpected failure while sending; will resend');
    rt.rows.noAnswer(row.batchId, row.idx, a, { nextTryAt: now + 5_000, counted: false, answer: null });
    return 'retry';
  }
  const answer = auditCopy(err.answer);
  const where = { batch: row.batchId, line: row.line, trxid: row.trxid, code: err.apiCode, status: err.status };
  // Turned away without an order (or, when the answer cannot prove that, left in doubt).
  const later = (nextTryAt: number, note: string | null = null): void => {
    if (err.mayExist) rt.rows.noAnswer(row.batchId, row.idx, a, { nextTryAt, counted: true, answer });
    else rt.rows.notCreated(row.batchId, row.idx, a, { nextTryAt, note, answer });
  };
  switch (err.classification) {
    case 'rejected':
    case 'forbidden':
    case 'duplicate-trxid':
    case 'insufficient-balance': {
      // The API judged the order: whatever paused orders for everyone is over.
      if (pauses.current?.kind === 'maintenance') pauses.clear();
      const reason = err.classification === 'forbidden' ? 'FORBIDDEN: this trxid belongs to another account' : err.reason;
      const verifyAt = now + rt.config.requestTimeoutMs;
      if (err.classification === 'duplicate-trxid') {
        // "This trxid was already used": an order with it exists somewhere. Only history can tell
        // whether it is this row's; it is never read as "nothing charged".
        rt.rows.trxidUsed(row.batchId, row.idx, a, { error: reason, verifyAt, answer });
        // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
        rt.log.warn(where, 'the API says this trxid was already used: checking order history before reporting');
        return 'verify';
      }
      // A first send (the row was `pending` when read, so this request was its first: `sending`)
      // refused because this account cannot sell the pack now, with nothing created: another
      // account that sells it takes the row, with a new trxid (dispatch/failover.ts). Never a row
      // in doubt: its refusal proves nothing.
      if (
        row.state === 'pending' && !namesAnOrder(err.answer?.body) && movesOnRefusal(err.classification, err.apiCode, err.reason)
      ) {
        if (err.classification === 'insufficient-balance') noteBalanceShort(rt, row.account, rt.clock.mono());
        const to = await moveRow(rt, { ...row, state: 'sending' }, a, { code: err.apiCode ?? err.codeOrStatus, why: `${row.account} refused it: ${reason}` }, 'sending');
        if (to !== null) return 'moved';
      }
      if (err.classification === 'insufficient-balance' && rt.rows.balanceShort(row.batchId, row.idx, a, answer)) {
        deps.onBalanceShort(row.batchId, 'the API answered INSUFFICIENT BALANCE');
        return 'hold-balance';
      }
      // A refusal of a first send: nothing was created. Of a row in doubt: not proof that nothing
      // was charged (the API may validate before it looks at the trxid, a 400; or the earlier
      // attempt tied the trxid to an order, a 403): history decides, once the earlier attempt can
      // no longer be in flight.
      const to = rt.rows.refused(row.batchId, row.idx, a, { error: reason, code: err.apiCode ?? null, verifyAt, answer });
      if (to === 'verifying') {
        // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
        rt.log.warn(where, 'refused after an uncertain attempt: checking order history before reporting');
        return 'verify';
      }
      // Stryker disable next-line StringLiteral: log message text; the facts are in the logged fields (asserted by test/unit/sender-paths.test.ts)
      rt.log.info({ ...where, reason }, 'order rejected');
      return 'rejected';
    }
    case 'account': {
      later(now);
      if (pauses.pause('account', err.codeOrStatus, err.reason)) deps.onPause('account', err.codeOrStatus, err.reason);
      return 'paused-account';
    }
    case 'paused': {
      later(now);
      const code = err.codeOrStatus;
      if (pauses.pause('maintenance', code, err.reason)) deps.onPause('maintenance', code, err.reason);
      return 'paused-maintenance';
    }
    case 'retry-later': {
      // DUPLICATE_IN_FLIGHT (mayExist): an earlier request with this trxid is still being
      // handled, so the order may exist: back off, not counted. RATE_LIMIT: the gate already holds
      // every call for Retry-After (capped); the row waits as long.
      if (err.mayExist) {
        rt.rows.noAnswer(row.batchId, row.idx, a, { nextTryAt: now + backoff(rt, row.attempts + 1), counted: false, answer });
        return 'retry';
      }
      later(now + Math.min(err.retryAfterMs ?? 1_000, rt.config.retryAfterMaxMs));
      return 'retry';
    }
    case 'ambiguous':
    // Stryker disable next-line StringLiteral: POST /orders is never classified not-found (classify.ts reads a 404 on POST as account); the label keeps the switch exhaustive
    case 'not-found': {
      const doubt = rt.rows.noAnswer(row.batchId, row.idx, a, { nextTryAt: now + backoff(rt, row.attempts + 1), counted: true, answer });
      if (stopResending(rt, row, a, doubt, err.message)) return 'verify';
      rt.log.warn({ ...where, why: err.message }, 'no definite answer; will resend the same trxid');
      return 'retry';
    }
  }
}
