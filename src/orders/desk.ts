/**
 * The order desk: one API order in, durably, in milliseconds; and orders read back.
 *
 * Accepting an order (POST /api/v1/orders):
 *  1. its trxid is looked up (any letter case): an API order with the same body is answered as
 *     itself (200), any other holder is a conflict (409) — nothing is validated or stored again;
 *  2. it is validated exactly as a file row is (intake/validate.ts through claim/row-verdict.ts,
 *     against every account's live catalog, placed on an account by claim/placement.ts);
 *  3. the balance must cover it, beside everything already promised (below), unless the request
 *     says `queue: true` (then it waits for a top-up like a file does);
 *  4. it is stored `pending` as the next row of the day's API batch (orders/api-batch.ts), with
 *     its trxid and exact request body, in a transaction that is on disk before the answer
 *     (synchronous=FULL, or with the daemon's log sync committed and then fdatasync'ed off the
 *     event loop, store/wal-sync.ts, before any answer leaves): the 202 means the order is on disk. Concurrent acceptances share one transaction
 *     (a group commit: one fsync for every order that arrived meanwhile); each is judged in turn
 *     inside it, so two requests with one trxid cannot both be stored (and the unique index would
 *     refuse the second anyway).
 *  5. the runner is woken: the order goes through the same rate gate, sender and poller as any
 *     row, with no inbox settle time and no file steps.
 *
 * Money safety is the rows': the trxid is stored before anything is sent (the sender commits the
 * `sending` intent as for any row), and a crash after the commit leaves a pending row that the
 * next daemon sends once. A crash before it leaves nothing: the shop got no 202 and resends.
 *
 * The balance check at acceptance uses the last balance reading (renewed in the background every
 * BALANCE_MAX_AGE_MS: an acceptance never waits in the rate gate behind queued orders), less the
 * orders placed since that reading, the rows in flight, and the unsent rows of every batch holding
 * money (as account/funds.ts sets them aside). An order it lets through that the supplier then
 * refuses for balance is not charged: it waits for a top-up like any row (status `accepted`).
 */
import { createHash } from 'node:crypto';
import { unsynced } from '../store/db.js';
import { saleFromMeta } from '../intake/sale-price.js';
import { coerceError } from '../kernel/errors.js';
import { jsonDepth } from '../kernel/json-depth.js';
import { crashPoint } from '../kernel/crash-points.js';
import { roundCents } from '../kernel/money.js';
import { Readings } from './readings.js';
import type { Runtime } from '../runtime.js';
import { mapHeader } from '../intake/columns.js';
import { createRowValidator } from '../intake/validate.js';
import { Pauses } from '../account/pauses.js';
import { digitsIdProblem, zoneIdProblem } from '../intake/field-rules.js';
import { judgeRow } from '../claim/row-verdict.js';
import { placedRow, type Placer } from '../claim/placement.js';
import { OrderReads, type ApiRow } from '../store/order-reads.js';
import type { NewRow } from '../store/row-record.js';
import { originOf } from '../config/order-api-settings.js';
import { apiColumns, todaysApiBatch } from './api-batch.js';
import { appendJournal, appendJournalDurable, appendJournalMirror, journalMirror, MIRROR_TROUBLE_KEY, type MirrorTrouble } from './journal.js';
import { orderEvent, orderView } from './view.js';
import type { AcceptOutcome, FeedPage, FieldProblem, OrderDesk, OrderEvent, OrderInput, OrderView, PlayerCheckDesk, PlayerCheckInput, PlayerCheckOutcome } from './types.js';
import { trxidAsGiven } from '../kernel/identity.js';
import { markOrderInRestoreWindow } from '../store/backup.js';
import { checkedLine, checkKindOfSlug } from '../config/player-check-settings.js';
import { ShopChecks, type CheckAsk } from './player-check-desk.js';

const META_MAX_BYTES = 4_096;
const META_MAX_DEPTH = 32;

type Prepared = { input: OrderInput; hash: string; row: NewRow & { request: NonNullable<NewRow['request']> }; callbackUrl: string | null };
/** `recovered`: accepted again from the journal (orders/journal.ts recoverFromJournal): it was promised before, and may have been bought. */
type Waiter = { p: Prepared; recovered: boolean; resolve: (o: AcceptOutcome) => void; reject: (e: unknown) => void };

/**
 * The body's identity: every field but `queue` (how to wait) and `checkPlayer` (whether to check
 * the player first): how to send, not what to buy. Keys sorted, absent fields left out.
 */
export function bodyHash(order: OrderInput): string {
  const input = order as unknown as Record<string, unknown>;
  const keys = Object.keys(input).filter((k) => k !== 'queue' && k !== 'checkPlayer' && input[k] !== undefined).sort();
  const canon = (v: unknown): unknown =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])]))
      : Array.isArray(v) ? v.map(canon) : v;
  const body = Object.fromEntries(keys.map((k) => [k, canon(input[k])]));
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

export class Desk implements OrderDesk, PlayerCheckDesk {
  readonly #rt: Runtime;

  /** Why an account holds its orders now (its pause, as stored: every process sees it), for a waiting order's `error`. */
  readonly #waiting = (account: string): { code: string; message: string } | null => {
    const p = Pauses.read(this.#rt.meta, account);
    if (p === null) return null;
    const since = new Date(p.since).toISOString();
    if (p.kind === 'operator') return { code: p.code, message: `waiting: the operator paused sending on this account since ${since}; nothing was created, and the order is sent when it is resumed (or moved to another account that sells it)` };
    return p.kind === 'maintenance'
      ? { code: p.code, message: `waiting: the supplier answered ${p.code} (its maintenance) since ${since}; nothing was created, and the order is sent again when it ends` }
      : { code: p.code, message: `waiting: the supplier account has a problem since ${since} (${p.code}: ${p.detail}); the order is sent again once it is resolved` };
  };
  readonly #wake: () => void;
  /** The journal's mirror beside a folder replica, or null (orders/journal.ts journalMirror). */
  readonly #mirror: string | null;
  /** The last write beside the replica failed (meta MIRROR_TROUBLE_KEY holds it). */
  #mirrorFailing = false;
  readonly #reads: OrderReads;
  readonly #columns: readonly string[];
  /** What acceptance judges by (the catalogs, each account's balance), renewed in the background. */
  readonly #readings: Readings;
  /** Acceptances waiting for the next group commit. */
  #queue: Waiter[] = [];
  #flushing = false;
  /** The player checks a shop asks for (POST /players/check, an order's checkPlayer). */
  readonly #checks: ShopChecks;

  constructor(rt: Runtime, wake: () => void) {
    this.#rt = rt;
    this.#mirror = journalMirror(rt.config);
    // A trouble recorded by the last run stays until a write succeeds (or is cleared by it).
    this.#mirrorFailing = this.#mirror !== null && rt.meta.getJson<MirrorTrouble>(MIRROR_TROUBLE_KEY) !== undefined;
    this.#wake = wake;
    this.#reads = new OrderReads(rt.db);
    this.#columns = apiColumns(rt);
    this.#readings = new Readings(rt, this.#reads, this.#columns);
    this.#checks = new ShopChecks(rt);
  }

  /** Reads the catalogs and the balances now, in the background (a daemon serving the API, at start). */
  warm(): void {
    this.#readings.warm();
  }

  /**
   * `recovered`: accepted again from the journal after a lost or restored store; `account`: the
   * account the journal says it was routed to then (orders/journal.ts JournalEntry.account).
   */
  async accept(given: OrderInput, opts: { recovered?: boolean; account?: string } = {}): Promise<AcceptOutcome> {
    // The trxid as given (kernel/identity.ts): the schema trims it over HTTP; a caller in-process
    // (the simulator's shop) may not. A body's identity and its look-up use the trimmed trxid, so
    // " X-3" and "X-3" are one order (found by the simulator: a shop's trxid with a leading no-break
    // space was stored trimmed and then not found under its own spelling).
    const input = given.trxid === trxidAsGiven(given.trxid) ? given : { ...given, trxid: trxidAsGiven(given.trxid) };
    // Before anything walks it recursively (the hash, JSON.stringify): a deep `meta` overflowed the stack.
    if (input.meta !== undefined && jsonDepth(input.meta, META_MAX_DEPTH) > META_MAX_DEPTH) return invalid([{ field: 'meta', reason: `nested more than ${META_MAX_DEPTH} levels deep` }]);
    const hash = bodyHash(input);
    const known = this.#known(input.trxid, hash);
    // The same order again: the group that stored it may still be syncing the log (#flush), and a
    // 200 says the order is there as surely as its 202 does.
    if (known) return known.kind === 'same' && this.#rt.walSync ? this.#rt.walSync.durable().then(() => known) : known;
    const callback = this.#callback(input);
    if (typeof callback !== 'string' && callback !== null) return callback;
    const prepared = await this.#prepare(input, hash, callback, opts.recovered === true, opts.recovered === true ? opts.account : undefined);
    if ('kind' in prepared) return prepared;
    if (input.queue !== true) {
      const unavailable = await this.#readings.balance(prepared.row.account ?? this.#rt.account.id);
      if (unavailable !== undefined) return { kind: 'refused', status: 503, code: 'BALANCE_UNAVAILABLE', detail: unavailable };
    }
    const checked = await this.#checkFirst(input, prepared);
    if (checked !== undefined) return checked;
    return new Promise<AcceptOutcome>((resolve, reject) => {
      this.#queue.push({ p: prepared, recovered: opts.recovered === true, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /**
   * POST /api/v1/players/check: the game from its slug or a pack's pid, then the check
   * (orders/player-check-desk.ts). The token's players:check scope is the reseller's word to make
   * checks for a shop, so TOPUP_PLAYER_CHECKS (which decides for files and unflagged orders) is not
   * asked; the price the reseller set is recorded with each call as for any check.
   */
  async checkPlayer(input: PlayerCheckInput): Promise<PlayerCheckOutcome> {
    const rt = this.#rt;
    const bad = (field: string, reason: string): PlayerCheckOutcome => ({ kind: 'refused', status: 422, code: 'INVALID_CHECK', detail: `${field}: ${reason}`, problems: [{ field, reason }] });
    let slug = input.slug?.trim();
    let field = 'slug';
    if (input.pid !== undefined && input.pid.trim() !== '') {
      field = 'pid';
      let placer: Placer;
      try {
        placer = await this.#readings.placer();
      } catch (err) {
        return { kind: 'refused', status: 503, code: 'CATALOG_UNAVAILABLE', detail: `cannot read the catalog to find the game of pid ${input.pid}: ${coerceError(err).message}; send the slug instead, or ask again later` };
      }
      const entry = placer.index.byPid(input.pid.trim());
      if (!entry) return bad('pid', `no pack has the pid ${input.pid.slice(0, 64)} in the catalog`);
      slug = entry.product.slug;
    }
    const kind = slug ? checkKindOfSlug(slug) : null;
    if (kind === null) {
      return { kind: 'refused', status: 422, code: 'NO_PLAYER_CHECK', detail: `the supplier has player checks only for PUBG Mobile top-ups (/pubgvvfy) and Mobile Legends (/mlvfy), not for ${slug ?? 'this game'}`, problems: [{ field, reason: 'this game has no player check' }] };
    }
    if (kind === 'ml' && (input.zoneId === undefined || input.zoneId.trim() === '')) return bad('zoneId', 'Mobile Legends\' check needs the zone id');
    if (kind === 'pubg' && input.zoneId !== undefined) return bad('zoneId', 'PUBG Mobile\'s check takes a player id only');
    // The same digits-only rule as an order's (intake/field-checks.ts): a check of an id no order
    // could be placed for spends a call of the rate budget (maybe a charge) to learn nothing.
    const idBad = digitsIdProblem(input.userId.trim(), kind === 'ml' ? 'Mobile Legends' : 'PUBG Mobile');
    if (idBad) return bad('userId', idBad);
    const zoneBad = kind === 'ml' ? zoneIdProblem(input.zoneId!.trim()) : undefined;
    if (zoneBad) return bad('zoneId', zoneBad);
    if (input.account !== undefined && !rt.accounts.some((a) => a.id === input.account)) return bad('account', `no supplier account is named ${input.account.slice(0, 64)} (${rt.accounts.map((a) => a.id).join(', ')})`);
    return this.#checks.ask({ kind, userId: input.userId.trim(), zoneId: input.zoneId?.trim(), account: input.account ?? rt.account.id });
  }

  /**
   * The player check an order asks for, or its line's setting asks for (docs/player-checks.md):
   * undefined to go on (no check, or found: the name is stored with the row); otherwise the
   * refusal, and nothing is stored. `checkPlayer: true` checks whatever TOPUP_PLAYER_CHECKS says;
   * `false` sends without a check (as a file's sendWithoutCheck column); absent follows
   * TOPUP_PLAYER_CHECKS for the order's line. TOPUP_PLAYER_CHECK_SKIP_DAYS spares an order as it
   * spares a file's row: a player seen completed in the last N days is not checked (whether the
   * order said `true` or followed the setting), and the order carries no name, as a row not checked.
   */
  async #checkFirst(input: OrderInput, p: Prepared): Promise<AcceptOutcome | undefined> {
    if (input.checkPlayer === false) return undefined;
    const slug = p.row.slug ?? '';
    const request = p.row.request;
    const kind = input.checkPlayer === true ? checkKindOfSlug(slug) : checkedLine(this.#rt.config.playerChecks, slug);
    const fields = kind !== null && request.userId !== undefined && request.userId !== '' && (kind === 'pubg' || (request.zoneId !== undefined && request.zoneId !== ''));
    if (!fields) {
      if (input.checkPlayer !== true) return undefined;
      return { kind: 'refused', status: 422, code: 'NO_PLAYER_CHECK', detail: `checkPlayer: the supplier has player checks only for PUBG Mobile top-ups and Mobile Legends (with user id and zone id), not for ${slug || 'this pack'}; nothing was stored`, problems: [{ field: 'checkPlayer', reason: 'this pack\'s game has no player check' }] };
    }
    const ask: CheckAsk = { kind: kind!, userId: request.userId!, zoneId: request.zoneId, account: p.row.account ?? this.#rt.account.id };
    if (this.#checks.seenCompleted(ask)) return undefined;
    const out = await this.#checks.ask(ask);
    if (out.kind === 'found') {
      p.row.playerName = out.view.playerName ?? '';
      return undefined;
    }
    if (out.code === 'PLAYER_NOT_FOUND') {
      return { ...out, status: 422, code: 'PLAYER_NOT_FOUND', detail: `${out.detail}; nothing was stored and nothing was charged. To buy it anyway, send the order with "checkPlayer": false` };
    }
    return { ...out, status: out.status, code: out.code, detail: `${out.detail}; the order was not stored: send the same order again later, or with "checkPlayer": false to send it without a check` } as AcceptOutcome;
  }

  get(trxid: string, opts: { codes: boolean }): OrderView | undefined {
    const o = this.#reads.byTrxid(trxid);
    return o ? orderView(o, this.#columns, { codes: opts.codes, history: this.#reads.history(o.row.batchId, o.row.idx), waiting: this.#waiting }) : undefined;
  }

  feed(since: string | undefined, limit: number, opts: { codes: boolean }): FeedPage {
    const after = since === undefined ? 0 : cursorId(since);
    const events = this.#reads.after(after, limit);
    const out: OrderEvent[] = [];
    for (const e of events) {
      const o = this.#reads.byKey(e.batchId, e.idx);
      if (o) out.push(orderEvent(e, o, this.#columns, opts));
    }
    return { events: out, next: `evt_${events.at(-1)?.id ?? after}` };
  }

  event(id: number, opts: { codes: boolean }): OrderEvent | undefined {
    const e = this.#reads.event(id);
    const o = e && this.#reads.byKey(e.batchId, e.idx);
    return e && o ? orderEvent(e, o, this.#columns, opts) : undefined;
  }

  /** An order already holding this trxid: the same body is that order (200); anything else a conflict. */
  #known(trxid: string, hash: string): AcceptOutcome | undefined {
    const api = this.#reads.byTrxid(trxid);
    if (api) return this.#answerKnown(api, hash);
    const other = this.#rt.rows.byTrxid(trxid);
    if (other) {
      return { kind: 'refused', status: 409, code: 'TRXID_USED', detail: `trxid ${trxid} was already used by batch ${other.batchId} (a file's row, or a row that moved to another account); a new purchase needs a new trxid` };
    }
    return undefined;
  }

  #answerKnown(api: ApiRow, hash: string): AcceptOutcome {
    const order = orderView(api, this.#columns, { codes: false, history: this.#reads.history(api.row.batchId, api.row.idx), waiting: this.#waiting });
    if (api.apiBodyHash === hash) return { kind: 'same', order };
    // The order itself goes out only to a token that may read orders (the HTTP layer drops
    // `extra.order` otherwise): a conflict must not let a write-only token read other orders.
    return { kind: 'refused', status: 409, code: 'TRXID_CONFLICT', detail: `trxid ${order.trxid} is already an order with a different body; a new purchase needs a new trxid (GET /api/v1/orders/{trxid} shows it)`, extra: { order } };
  }

  #callback(input: OrderInput): string | null | AcceptOutcome {
    if (input.callbackUrl === undefined) return null;
    const allow = this.#rt.config.orderApi.webhook.allow;
    let origin: string;
    try {
      origin = originOf(input.callbackUrl, 'callbackUrl');
    } catch (err) {
      return { kind: 'refused', status: 422, code: 'INVALID_ORDER', detail: coerceError(err).message, problems: [{ field: 'callbackUrl', reason: 'not an http(s) URL' }] };
    }
    if (!allow.includes(origin)) {
      return { kind: 'refused', status: 422, code: 'CALLBACK_NOT_ALLOWED', detail: `callbackUrl ${origin} is not among the origins TOPUP_ORDER_WEBHOOK_ALLOW names${allow.length === 0 ? ' (none: per-order callbacks are off)' : ''}`, problems: [{ field: 'callbackUrl', reason: 'origin not allowed' }] };
    }
    return input.callbackUrl;
  }

  /** The order as a row of the day's batch, validated as a file row is; or why it cannot be. */
  async #prepare(input: OrderInput, hash: string, callbackUrl: string | null, recovered = false, routedTo?: string): Promise<Prepared | AcceptOutcome> {
    const rt = this.#rt;
    const problems: FieldProblem[] = [];
    let metaText = '';
    if (input.meta !== undefined) {
      metaText = JSON.stringify(input.meta);
      if (Buffer.byteLength(metaText) > META_MAX_BYTES) problems.push({ field: 'meta', reason: `larger than ${META_MAX_BYTES} bytes as JSON` });
    }
    if (input.account !== undefined && rt.accounts.length === 1 && input.account !== rt.account.id) {
      problems.push({ field: 'account', reason: `this home has one supplier account (${rt.account.id})` });
    }
    if (problems.length > 0) return invalid(problems);
    let placer: Placer;
    try {
      placer = await this.#readings.placer();
    } catch (err) {
      return { kind: 'refused', status: 503, code: 'CATALOG_UNAVAILABLE', detail: `cannot read the catalog: ${coerceError(err).message}; nothing was stored, send the order again later` };
    }
    const value: Record<string, string> = {
      trxid: input.trxid, pid: input.pid ?? '', slug: input.slug ?? '', pack: input.pack ?? '',
      userId: input.userId ?? '', zoneId: input.zoneId ?? '', serverId: input.serverId ?? '', region: input.region ?? '', moreId: input.moreId ?? '',
      quantity: input.quantity === undefined ? '' : String(input.quantity), maxPriceUsd: input.maxPriceUsd === undefined ? '' : String(input.maxPriceUsd),
      account: input.account ?? '', meta: metaText,
    };
    const cells = this.#columns.map((c) => value[c] ?? '');
    const validator = createRowValidator(mapHeader([...this.#columns]), placer.index, recovered ? { availability: false, capAtPlacement: placer.judgesCap } : { capAtPlacement: placer.judgesCap });
    const verdict = judgeRow({ index: 0, line: 2, cells }, { validator, trxidSeed: null, usedBy: (t) => rt.rows.byTrxid(t) });
    if (!verdict.ok) return invalid(verdict.problems.map((p) => ({ field: fieldOf(p.column), reason: p.reason })), verdict.error);
    const fileProblems = validator.fileProblems();
    if (fileProblems.length > 0) return invalid(fileProblems.map((p) => ({ field: 'order', reason: p.message })));
    // A recovered order is placed without judging its cap against today's prices (as the validator,
    // above: it may have been bought before they rose); its cap is kept on the row and met at its send.
    const { maxPriceUsd: cap, ...uncapped } = verdict.order;
    const order = recovered ? { ...uncapped, maxPriceUsd: undefined } : verdict.order;
    const namedByPid = input.pid !== undefined && input.pid.trim() !== '';
    let placed = placer.place(order, cells, namedByPid);
    // A recovered order goes back to the account the journal says it was routed to, when it is
    // still configured and sells the pack (routing today may pick another: prices, stock, pauses
    // changed). That is where it was sent, so a purchase under its own trxid there is found as its
    // own (settled) by the restore lookup, and a resend there meets it as a replay; placed on another
    // account, the lookup finds its trxid "bought on another account" and it goes to a person.
    // Not pinned: it may fail over as any order (the lookup reads every account before it is sent).
    if (recovered && routedTo !== undefined && input.account === undefined && placed.ok && placed.account !== routedTo && rt.accounts.some((a) => a.id === routedTo)) {
      const there = placer.place(order, this.#columns.map((c) => (c === 'account' ? routedTo : value[c] ?? '')), namedByPid);
      if (there.ok) placed = { ...there, pinned: false };
    }
    if (!placed.ok) return invalid([{ field: input.account !== undefined ? 'account' : input.pid !== undefined ? 'pid' : 'pack', reason: placed.error }], placed.error);
    return { input, hash, callbackUrl, row: { idx: 0, line: 0, cells, ...placedRow(placed, verdict.trxid!), ...(recovered ? { maxPriceUsd: cap ?? null } : {}), saleUsd: saleFromMeta(input.meta) } };
  }

  /** One transaction for every acceptance waiting: each judged in turn, then one commit. */
  #flush(): void {
    const batch = this.#queue;
    this.#queue = [];
    const rt = this.#rt;
    // Per order: its answer, or the error that undid only its own savepoint (the others commit).
    const outcomes: (AcceptOutcome | { error: unknown })[] = [];
    // With the runtime's log sync (store/wal-sync.ts) the group is committed unsynced and the log's
    // fdatasync runs on libuv's thread pool, beside the journal's fsync: the answers wait for both,
    // the event loop for neither (a profile of the order API at 500/s: the two fsyncs of each group,
    // on the loop, were the largest single cost in front of every other request). What is on disk
    // when a 202 leaves is what a FULL commit put there (wal-sync.ts says why). Without one (the
    // simulator's clock, a replicated store): FULL, and the journal's fsync on the loop, as before.
    const wal = rt.walSync;
    const commit = (fn: () => void): void => (wal ? unsynced(rt.db, fn) : fn());
    try {
      commit(() => rt.db.transaction(() => {
        const now = rt.clock.now();
        const day = todaysApiBatch(rt, now);
        const promisable = this.#readings.promisable();
        const taken = new Map<string, number>();
        const available = (a: string): number | undefined => {
          const v = promisable(a);
          return v === undefined ? undefined : v - (taken.get(a) ?? 0);
        };
        const took = (a: string, usd: number): void => void taken.set(a, (taken.get(a) ?? 0) + usd);
        for (const w of batch) {
          // An order accepted again from the journal after a restore was promised (202) before the
          // cancel, and may have been bought since (on another account, after a failover): refused
          // here it would be held by no row, and the reconcile, which looks up rows, would never
          // find its purchase (seed 20261127 #184: OLD-2 and API-0, bought on second as
          // OLD-2-second and API-0-second, reported "nothing was stored"). Taken into the cancelled
          // day's batch while it is open, it is looked up like every row of the copy: a purchase
          // found settles it, and one never sent is skipped as the cancel skips unsent orders.
          if (day.cancelRequested && !(w.recovered && day.state === 'open')) outcomes.push(notAccepting(`today's API batch ${day.id} was cancelled by an operator: no order is taken until tomorrow's batch (UTC); nothing was stored`));
          else if (day.state !== 'open') outcomes.push(notAccepting(`the API batch of ${day.apiDay} is finished and the wall clock reads that day again (it stepped back): no order is taken until the clock reaches a day with an open batch; nothing was stored`));
          else {
            try {
              outcomes.push(this.#store(w.p, day.id, now, available, took));
            } catch (err) {
              outcomes.push({ error: err });
            }
          }
        }
      }).immediate());
    } catch (err) {
      for (const w of batch) w.reject(err);
      this.#next();
      return;
    }
    crashPoint('order-accepted');
    // The journal (orders/journal.ts): the accepted orders again, outside the store, fsynced before
    // any 202 leaves, one write for the whole group. It is what recovers them when the store is
    // lost or restored from an older copy. The store has them already: if the journal cannot be
    // written (a full disk) the orders stand and the log says so, loudly.
    const accepted = batch.flatMap((w, i) => ('kind' in outcomes[i]! && (outcomes[i] as AcceptOutcome).kind === 'accepted' ? [{ at: rt.clock.now(), trxid: w.p.input.trxid, body: w.p.input, ...(w.p.row.account ? { account: w.p.row.account } : {}) }] : []));
    const journalFailed = (err: unknown): void =>
      rt.log.error({ err: coerceError(err).message, orders: accepted.length }, 'accepted API orders could not be written to the journal (jobs/api-journal/): they are in the store, but a lost store would lose them');
    let journal: Promise<void> = Promise.resolve();
    try {
      if (wal) journal = appendJournalDurable(rt.config.jobsDir, accepted).catch(journalFailed);
      else appendJournal(rt.config.jobsDir, accepted);
    } catch (err) {
      journalFailed(err);
    }
    // And beside the replica of a warm standby (journalMirror): what a takeover finds when this
    // machine dies before Litestream's next sync.
    if (this.#mirror !== null && accepted.length > 0) {
      try {
        appendJournalMirror(this.#mirror, accepted, rt.clock.now());
        if (this.#mirrorFailing) {
          this.#mirrorFailing = false;
          rt.meta.delete(MIRROR_TROUBLE_KEY);
          rt.log.info({ mirror: this.#mirror }, 'accepted API orders are written beside the replica again');
        }
      } catch (err) {
        rt.log.error({ err: coerceError(err).message, orders: accepted.length, mirror: this.#mirror }, 'accepted API orders could not be written beside the replica: they are in the store and jobs/api-journal/, but a takeover in the next second, or a restore after this disk is lost, would not find them');
        // Kept in the store, where /metrics (topup_api_journal_mirror_writable) and `topup doctor`
        // (another process) read it: a log line alone went unseen (an adversarial review).
        try {
          const was = this.#mirrorFailing ? rt.meta.getJson<MirrorTrouble>(MIRROR_TROUBLE_KEY) : undefined;
          const now = rt.clock.now();
          rt.meta.setJson(MIRROR_TROUBLE_KEY, { since: was?.since ?? now, at: now, error: coerceError(err).message, orders: (was?.orders ?? 0) + accepted.length } satisfies MirrorTrouble);
          this.#mirrorFailing = true;
        } catch {
          // The store cannot be written either: its own alarm (store-health) says so.
        }
      }
    }
    const answer = (): void => {
      for (let i = 0; i < batch.length; i++) {
        const o = outcomes[i]!;
        if ('error' in o) batch[i]!.reject(o.error);
        else batch[i]!.resolve(o);
      }
    };
    // An accepted order, or the same order again (it may be one a group just before committed,
    // its sync still running), is answered once the log is on disk; refusals at once.
    const stored = accepted.length > 0;
    if (wal && outcomes.some((o) => 'kind' in o && (o.kind === 'accepted' || o.kind === 'same'))) {
      // The 202s leave once the log is on disk (and the journal's lines, whose failure is only
      // logged, as above). A failed sync of the log: the orders may not be on disk, so no 202
      // says they are (a 500: the shop sends the same order again and is answered by the stored
      // one). The next group is judged meanwhile: its commit comes after this one's, and its
      // own sync covers both.
      Promise.all([wal.durable(), journal]).then(answer, (err: unknown) => {
        for (const w of batch) w.reject(err);
      });
    } else answer();
    if (stored) this.#wake();
    this.#next();
  }

  #next(): void {
    if (this.#queue.length > 0) setImmediate(() => this.#flush());
    else this.#flushing = false;
  }

  /** One order inside the group's transaction (a savepoint: a refusal undoes only its own writes). */
  #store(p: Prepared, batchId: string, now: number, available: (account: string) => number | undefined, took: (account: string, usd: number) => void): AcceptOutcome {
    const rt = this.#rt;
    const known = this.#known(p.input.trxid, p.hash);
    if (known) return known;
    const account = p.row.account ?? rt.account.id;
    if (p.input.queue !== true) {
      const left = available(account);
      const need = p.row.expectedUsd ?? 0;
      if (left === undefined || need > left + 1e-9) {
        const have = roundCents(Math.max(left ?? 0, 0));
        return {
          kind: 'refused',
          status: 402,
          code: 'INSUFFICIENT_BALANCE',
          detail: `the balance${rt.accounts.length > 1 ? ` of account ${account}` : ''} does not cover this order beside what is already promised: needs ${need} USD, ${have} USD available; top up, or send it with "queue": true to let it wait`,
          extra: { needUsd: need, availableUsd: have, account },
        };
      }
    }
    try {
      const idx = rt.db.transaction(() => {
        const i = rt.rows.insertApiOrder(batchId, { ...p.row, apiBodyHash: p.hash, callbackUrl: p.callbackUrl }, now);
        // In the window after a restore: held until it was looked up at every account (a resend of
        // an order the lost record bought elsewhere under a moved trxid), in this same commit.
        markOrderInRestoreWindow(rt.db, rt.accounts.map((a) => a.id), { batchId, idx: i, trxid: p.input.trxid, now });
        return i;
      })();
      took(account, p.row.expectedUsd ?? 0);
      const o = this.#reads.byKey(batchId, idx)!;
      return { kind: 'accepted', order: orderView(o, this.#columns, { codes: false, history: this.#reads.history(batchId, idx) }) };
    } catch (err) {
      // The unique index or the trxid triggers: another order took the trxid meanwhile.
      const again = this.#known(p.input.trxid, p.hash);
      if (again) return again;
      throw err;
    }
  }
}

/**
 * No order can go into the day's API batch now: an operator cancelled it (console, `topup cancel`:
 * its unsent orders are skipped, and so would every order appended after), or it is finished and
 * the clock reads its day again. None is taken until a day with an open batch.
 */
function notAccepting(detail: string): AcceptOutcome {
  return { kind: 'refused', status: 503, code: 'NOT_ACCEPTING', detail };
}

function invalid(problems: FieldProblem[], detail?: string): AcceptOutcome {
  return { kind: 'refused', status: 422, code: 'INVALID_ORDER', detail: detail ?? problems.map((p) => `${p.field}: ${p.reason}`).join('; '), problems };
}

/** A problem's column (the API batch's column names are the API's field names) as a JSON field. */
function fieldOf(column: string): string {
  return column === 'row' ? 'order' : column;
}

/** `evt_<n>` → n; a malformed cursor throws a RangeError (a 400). */
export function cursorId(cursor: string): number {
  // 15 digits at most: every such number is exact in a double (the route's schema says the same).
  const m = /^evt_(\d{1,15})$/.exec(cursor.trim());
  if (!m) throw new RangeError(`"${cursor.slice(0, 40)}" is not a cursor (evt_<number>, as "next" gave it)`);
  return Number(m[1]);
}

export function createOrderDesk(rt: Runtime, wake: () => void): OrderDesk & PlayerCheckDesk & { warm(): void } {
  return new Desk(rt, wake);
}
