/**
 * Dispatch: rows the funding stage allows are sent (dispatch/sender.ts), at most TOPUP_MAX_IN_FLIGHT at
 * once (the rate gate is the real limit), one at a time as a probe while orders are paused. Sends
 * run in the background; each one that ends wakes the runner.
 */
import { basename } from 'node:path';
import { coerceError } from '../../kernel/errors.js';
import type { EngineContext, Stage, StepBatches } from '../stage.js';
import type { Row } from '../../store/rows.js';
import type { FundingStage } from './funding.js';
import { sendRow } from '../../dispatch/sender.js';
import { restorePending } from '../../ops/restore-reconcile.js';
import { claimLookups, orderLookups } from '../../store/backup.js';
import type { SendScope } from '../../store/row-reads.js';
import { moveRow } from '../../dispatch/failover.js';
import { isAccountWait } from '../../account/funds.js';
import type { PauseKind } from '../../account/pauses.js';
import { sweepStalled } from '../../dispatch/stall.js';
import { StoreHealth, StoreFile } from '../../dispatch/store-health.js';
import { IntentGroup, INTENT_GROUP_MS } from '../../dispatch/intent-group.js';
import { AnswerGroup } from '../../dispatch/answer-group.js';
import { renamedAway } from '../../store/account-identity.js';
import { configuredIdentities } from '../../runtime.js';

export class DispatchStage implements Stage {
  readonly name = 'dispatch';
  readonly #e: EngineContext;
  readonly #funding: FundingStage;
  /** Sends in flight, by batch then row index: a batch is not finished while one of its sends is open. */
  readonly #inflight = new Map<string, Map<number, Promise<void>>>();
  #count = 0;
  /** Sends in flight per account: each account has its own cap (its rate gate is its own). */
  readonly #countBy = new Map<string, number>();
  /** Per account, the in-flight cap at the last tick (1 while that account is paused). */
  readonly #cap = new Map<string, number>();
  /**
   * Per account, the time of the last tick that started every row due by then which was not
   * already on its way (fewer than the cap were in flight after it): rows due by then that are
   * still sendable are waiting in the rate gate, and their sends ending wake the runner. Without it
   * the runner woke every 5 ms while a send waited out a Retry-After hold or the gate (found by
   * profiling the simulator: a third of its events).
   */
  readonly #startedUpTo = new Map<string, number>();
  /** Rows being moved off a paused account (dispatch/failover.ts), one round at a time. */
  #moving: Promise<void> | null = null;
  /** Monotonic time before which no new round of moves starts (a round that moved nothing is not repeated at once). */
  #nextMoveAt = 0;
  /** Wall time of the next look for rows past the stall bound (dispatch/stall.ts), and of its next deadline. */
  #stallLookAt = 0;
  #stallDue: number | undefined;
  /** Whether the store can be written (dispatch/store-health.ts): while it cannot, nothing is sent. */
  readonly store: StoreHealth;
  /** This process's intents to send, committed in groups (dispatch/intent-group.ts). */
  readonly #intents: IntentGroup;
  /** The `placed` answers of one turn of the loop share a commit (dispatch/answer-group.ts). */
  readonly #answers: AnswerGroup;

  constructor(e: EngineContext, funding: FundingStage) {
    this.#e = e;
    this.#funding = funding;
    this.#readAccountsAt = e.rt.clock.now();
    // The store's file as it was opened: a file deleted or replaced under the daemon is a store gone.
    this.store = new StoreHealth(e.rt.log, (down) => e.emit('store', down), new StoreFile(e.rt.config.dbPath));
    // With the runtime's log sync, the intents' fsync runs off the event loop (store/wal-sync.ts).
    this.#intents = new IntentGroup(e.rt.rows, e.clock, INTENT_GROUP_MS, e.rt.walSync);
    this.#answers = new AnswerGroup(e.rt.rows, e.clock);
  }

  /** Sends in flight, all batches. */
  get inFlight(): number {
    return this.#count;
  }

  inFlightFor(batchId: string): number {
    return this.#inflight.get(batchId)?.size ?? 0;
  }

  running(): Promise<void>[] {
    return [...[...this.#inflight.values()].flatMap((m) => [...m.values()]), ...(this.#moving ? [this.#moving] : [])];
  }

  tick(now: number, batches?: StepBatches): void {
    const { rt, pauses } = this.#e;
    this.#startedUpTo.clear();
    // A store file deleted or replaced while open takes every write without an error (SQLite writes
    // on into the unlinked file, in WAL mode): whatever is bought then is recorded nowhere a restart
    // finds. Looked at once a second; once gone, it stays a stop until a restart opens a store.
    const gone = this.store.fileGone(this.#e.clock.now(), this.#e.clock.mono());
    // The store cannot be written: nothing is sent, nor swept, until the back-off ends (one send then probes).
    if (gone || this.store.blocked(this.#e.clock.mono())) return;
    // The warm standby's fence (standby/fence.ts): before every round of sends. Taken over by
    // another node, or the fence unreadable: nothing is sent (the daemon stops when fenced).
    if (rt.fence && !rt.fence.allows()) return;
    // A store not yet reconciled sends nothing (the store refuses the intents anyway).
    if (restorePending(rt.meta)) return;
    if (batches) this.#rescueStranded(batches, now);
    if (this.#e.stopping()) return;
    if (batches) this.#sweepStalled(batches, now);
    if (batches) this.#tellGoneAccounts(batches);
    this.#moveOffPaused(now, batches);
    const one = pauses.plain;
    // API orders accepted in the window after a restore and not yet looked up (store/backup.ts
    // markOrderInRestoreWindow): skipped as if on their way (the store would refuse their intents).
    const held = new Set(orderLookups(rt.db).map((o) => `${o.batchId}:${o.idx}`));
    for (const account of pauses.sendable()) {
      // While an account is paused, one of its orders at a time probes whether the pause is over;
      // so while a read probe has lifted its maintenance on trial (account/pauses.ts).
      const p = pauses.of(account);
      const cap = p.current || p.trial ? 1 : rt.config.maxInFlight;
      this.#cap.set(account, cap);
      const free = cap - (this.#countBy.get(account) ?? 0);
      if (free <= 0) continue;
      // Rows whose send started may still be pending (waiting for the rate gate): skipped by the read.
      const busy = { has: (batchId: string, idx: number) => this.#inflight.get(batchId)?.has(idx) === true || (held.size > 0 && held.has(`${batchId}:${idx}`)) };
      // A home with one account reads without naming it (every row is on it).
      for (const row of rt.rows.sendable(this.#scope(), now, free, busy, one ? undefined : account)) this.#start(row);
      if ((this.#countBy.get(account) ?? 0) < cap) this.#startedUpTo.set(account, now);
    }
  }

  /**
   * The batches that may send, less those claimed in the window after a restore and not yet looked
   * up (store/backup.ts markClaimInRestoreWindow: the runner looks them up first; the store would
   * refuse their intents, so they are not even read here).
   */
  #scope(): SendScope {
    const scope = this.#funding.scope;
    const held = claimLookups(this.#e.rt.db);
    if (held.length === 0) return scope;
    const out = new Set(held.map((c) => c.batchId));
    return { newOrders: scope.newOrders.filter((id) => !out.has(id)), resendsOnly: scope.resendsOnly.filter((id) => !out.has(id)) };
  }

  nextDueAt(): number | undefined {
    const { pauses, rt, clock } = this.#e;
    const one = pauses.plain;
    // While the store cannot be written, the next look is when its back-off ends.
    const storeUntil = this.store.blockedUntil;
    if (storeUntil !== undefined && storeUntil > clock.mono()) return clock.now() + (storeUntil - clock.mono());
    // While the fence forbids sending, it is read again a second later (a mount back, a takeover undone).
    if (rt.fence && !rt.fence.allows()) return clock.now() + 1_000;
    // A row in doubt reaches its stall bound even while nothing else happens (a pause that never ends).
    let due: number | undefined = this.#stallDue;
    for (const account of pauses.names) {
      // Sends finishing wake the runner; a timer is needed only for rows waiting out a back-off.
      if ((this.#countBy.get(account) ?? 0) >= (this.#cap.get(account) ?? 1)) continue;
      const rows = rt.rows.nextTryAt(this.#scope(), this.#startedUpTo.get(account), one ? undefined : account);
      if (rows === undefined) continue;
      // While paused, a probe needs both its time and a row that is due: a probe due now with every
      // row held for later (a Retry-After, a clock stepped back) is not work now. (Found by the
      // simulator: the runner woke every 5 ms until the rows fell due.)
      // A paused account that takes no order probe (an account problem; maintenance with several
      // accounts: AccountPauses.ordersProbe)
      // sends nothing until its read probe lifts the pause (the polling stage wakes the runner then).
      const probe = pauses.of(account).untilProbe();
      let at: number;
      if (probe !== undefined && !pauses.ordersProbe(account)) {
        // One account has nowhere to move its rows: nothing is due here until the read probe lifts
        // the pause (the polling stage wakes the runner then).
        if (pauses.names.length < 2) continue;
        // No order probe: what is due is the move of its rows (#moveOffPaused) once the pause is
        // max_queue_delay old; after that a round of moves at most every 5 s (a round may move
        // nothing: every account paused, rows pinned). Never "now" again and again: the simulator
        // caught a runner waking every 5 ms while every account was paused.
        const cur = pauses.of(account).current;
        if (!cur) continue;
        const moveAt = cur.since + moveGraceMs(cur.kind, rt.routing.maxQueueDelayMs);
        at = Math.max(rows, moveAt > clock.now() ? moveAt : clock.now() + Math.max(5_000, this.#nextMoveAt - clock.mono()));
      } else at = probe === undefined ? rows : Math.max(rows, clock.now() + probe);
      if (due === undefined || at < due) due = at;
    }
    return due;
  }

  /**
   * Several accounts: an account paused for longer than max_queue_delay (maintenance, an account
   * problem) hands its rows that were never sent, or were turned away before any order, to an
   * account that sells their pack and is not paused (dispatch/failover.ts: from `pending` only, with
   * a new trxid). Rows in doubt stay: only their own account can tell whether they were charged.
   */
  #moveOffPaused(now: number, batches: StepBatches | undefined): void {
    const { rt, pauses, clock } = this.#e;
    if (this.#moving || pauses.names.length < 2 || clock.mono() < this.#nextMoveAt) return;
    const grace = rt.routing.maxQueueDelayMs;
    const paused = pauses.all().filter((p) => now - p.pause.since >= moveGraceMs(p.pause.kind, grace));
    if (paused.length === 0 || paused.length === pauses.names.length) return;
    const busy = { has: (batchId: string, idx: number) => this.#inflight.get(batchId)?.has(idx) === true };
    // Funded batches, and batches waiting for the paused account itself (account/funds.ts: its
    // balance could not be read): their rows would otherwise wait on it until it came back (a
    // new-user trial: a disabled key held a new file's rows for minutes).
    const waitingForAccount = (batches?.open ?? []).filter((b) => !b.cancelRequested && isAccountWait(b)).map((b) => b.id);
    const scope = { newOrders: [...new Set([...this.#funding.scope.newOrders, ...waitingForAccount])], resendsOnly: [] };
    const rows = paused.flatMap((p) => rt.rows.sendable(scope, Number.MAX_SAFE_INTEGER, 100, busy, p.account).filter((r) => r.state === 'pending').map((r) => ({ r, p })));
    this.#nextMoveAt = clock.mono() + 5_000;
    if (rows.length === 0) return;
    this.#moving = (async () => {
      for (const { r, p } of rows) {
        if (this.#e.stopping() || busy.has(r.batchId, r.idx)) continue;
        const why = p.pause.kind === 'operator'
          ? `${p.account} was paused by the operator`
          : `${p.account} ${p.pause.kind === 'maintenance' ? 'was in maintenance' : 'had an account problem'} (${p.pause.code}) for over ${Math.round(grace / 1000)} s`;
        const to = await moveRow(rt, r, { owner: rt.owner, now: clock.now() }, { code: p.pause.code, why }, 'pending', { readyOnly: true });
        // A batch that waited for this account is judged again at once: its rows are now where money can be read.
        if (to !== null) this.#funding.recheckNow([r.batchId]);
      }
    })()
      .catch((err: unknown) => rt.log.warn({ err: coerceError(err).message }, 'moving rows off a paused account failed; will try again'))
      .finally(() => {
        this.#moving = null;
        this.#e.wake();
      });
  }

  /**
   * Rows in doubt past the stall bound (dispatch/stall.ts): resent no more, then to review. Looked
   * at when a deadline falls due, and at least every TOPUP_REVIEW_AFTER_MS / 4 (at most once a
   * minute, at least once a second apart) for rows that came into doubt since.
   */
  /** When the rows of accounts accounts.toml no longer names are looked for again (monotonic ms). */
  #goneLookAt = 0;
  /** When this process had read its accounts (a rename recorded since is one made under it: renamedAway). */
  readonly #readAccountsAt: number;

  /**
   * Rows on an account the accounts file no longer names (removed, or renamed to an endpoint or key
   * the rows were not sent to) cannot be sent or followed: only that account can buy them, or tell
   * whether it did. They wait until it is configured again; the operator is told so on their batch
   * (wait reason `account`, shown by `topup status`, the console and the batches gauge), not only in
   * the log (the simulator: a removed account's rows waited `pending` with no reason anywhere an
   * operator looks: invariant 21). A wait the batch already has (balance, catalog) is a reason
   * stated already and is left as it is. Looked at on the first step and then every 30 s of steps:
   * the accounts a process has never change while it runs, so only rows leaving those accounts
   * (a cancel, a resolve) can end the wait, and the next look clears it.
   */
  #tellGoneAccounts(batches: StepBatches): void {
    const { rt, pauses, clock } = this.#e;
    if (pauses.plain || clock.mono() < this.#goneLookAt) return;
    this.#goneLookAt = clock.mono() + 30_000;
    const gone = new Map<string, { account: string; n: number }[]>();
    for (const g of rt.rows.onOtherAccounts(batches.open.map((b) => b.id), pauses.names)) gone.set(g.batchId, [...(gone.get(g.batchId) ?? []), g]);
    const file = rt.config.accounts.file ? basename(rt.config.accounts.file) : 'the accounts file';
    // An account renamed under this process (a process started since on an edited accounts file
    // applied it): the rows went with the new name, which this process does not have. It is this
    // process that is out of date, not the file: it says so, and hands its batches back.
    const away = gone.size > 0 ? renamedAway(rt.db, configuredIdentities(rt.config), this.#readAccountsAt) : [];
    const renamedTo = new Map(away.map((x) => [x.now, x.mine]));
    const handBack: string[] = [];
    for (const b of batches.open) {
      const of = gone.get(b.id);
      const stale = of?.filter((g) => renamedTo.has(g.account)) ?? [];
      if (stale.length > 0) {
        const n = stale.reduce((x, g) => x + g.n, 0);
        handBack.push(`batch ${b.id}: ${n} row${n === 1 ? '' : 's'} on ${stale.map((g) => `"${g.account}" (this process's "${renamedTo.get(g.account)}": the same endpoint and key)`).join(', ')}`);
      }
      if (of && (b.waitReason === null || b.waitReason === 'account')) {
        const rows = of.reduce((x, g) => x + g.n, 0);
        const detail = stale.length > 0
          ? `${rows} row${rows === 1 ? '' : 's'} on account${of.length === 1 ? '' : 's'} ${of.map((g) => `"${g.account}"`).join(', ')}, renamed from ${stale.map((g) => `"${renamedTo.get(g.account)}"`).join(', ')} by a process started since on ${file} as it is now; this process (${rt.owner}) read ${file} before and cannot send them: it hands the batch back (a daemon started on ${file} as it is now carries it on)`
          : `${rows} row${rows === 1 ? '' : 's'} on account${of.length === 1 ? '' : 's'} ${of.map((g) => `"${g.account}"`).join(', ')}, which ${file} no longer names: ${rows === 1 ? 'it waits' : 'they wait'} until the account is configured again (only it can buy them or tell whether it did); topup cancel ends the unsent ones`;
        if (b.waitDetail !== detail) {
          rt.batches.setWait(b.id, 'account', detail);
          rt.log.error({ batch: b.id, accounts: of.map((g) => g.account), rows }, 'rows wait for an account this home no longer has (accounts file)');
        }
      } else if (!of && b.waitReason === 'account' && !isAccountWait(b)) {
        // Only this look's own wait: a wait for a paused account is the funds check's (account/funds.ts).
        rt.batches.setWait(b.id, null, null);
      }
    }
    if (handBack.length > 0) this.#e.handBack(`${handBack.join('; ')}: renamed in ${file} by a process started after this one, which read ${file} before the rename; a process that knows the new name must drive ${handBack.length === 1 ? 'it' : 'them'}`);
  }

  #sweepStalled(batches: StepBatches, now: number): void {
    const { rt } = this.#e;
    if (now < this.#stallLookAt || batches.open.length === 0) {
      if (batches.open.length === 0) this.#stallDue = undefined;
      return;
    }
    const busy = { has: (batchId: string, idx: number) => this.#inflight.get(batchId)?.has(idx) === true };
    const next = sweepStalled(rt, batches.open.map((b) => b.id), busy, now);
    this.#stallLookAt = Math.min(next ?? Number.MAX_SAFE_INTEGER, now + Math.min(60_000, Math.max(1_000, rt.config.reviewAfterMs / 4)));
    this.#stallDue = next === undefined ? undefined : Math.max(next, now + 1_000);
  }

  /**
   * A `sending` row of a batch this process holds, with no send of ours working on it, was left by
   * a send that ended without writing an answer (store/invariants.ts: such a row is resent with its
   * trxid). The counters tell in one lookup per batch when one certainly exists: more `sending`
   * rows than sends of ours in flight (some of which may not even have sent yet). That can hide a
   * stranded row while other sends wait for the rate gate, never for long: the batch cannot end
   * while the row is `sending`, and its other sends end. Never a row whose send runs (#inflight).
   */
  #rescueStranded(batches: StepBatches, now: number): void {
    const { rt } = this.#e;
    for (const b of batches.open) {
      const mine = this.#inflight.get(b.id);
      if (rt.rows.counts(b.id).sending <= (mine?.size ?? 0)) continue;
      for (const idx of rt.rows.sendingIdx(b.id)) {
        if (mine?.has(idx)) continue;
        if (rt.rows.strandedSending(b.id, idx, { owner: rt.owner, now })) {
          rt.log.error({ batch: b.id, idx }, 'a row was left sending with no request of this process open: it will be resent with the same trxid');
        }
      }
    }
  }

  #start(row: Row): void {
    const { rt, emit } = this.#e;
    let rows = this.#inflight.get(row.batchId);
    if (!rows) this.#inflight.set(row.batchId, (rows = new Map()));
    const account = row.account;
    const p = sendRow(
      {
        rt,
        pausesOf: (name) => this.#e.pauses.of(name),
        onBalanceShort: (batchId, detail) => this.#funding.short(batchId, detail),
        onPause: (kind, code, detail) => {
          rt.log.error({ account, pause: kind, code, detail }, kind === 'account' ? 'sending stopped: account problem' : 'sending paused by the API');
          emit('pause', kind, code, detail, account);
        },
        store: this.store,
        intents: this.#intents,
        answers: this.#answers,
      },
      row,
      this.#e.signal,
    )
      .then(() => undefined)
      .catch((err: unknown) => rt.log.error({ batch: row.batchId, line: row.line, err: coerceError(err) }, 'send failed unexpectedly'))
      .finally(() => {
        rows!.delete(row.idx);
        if (rows!.size === 0) this.#inflight.delete(row.batchId);
        this.#count--;
        this.#countBy.set(account, (this.#countBy.get(account) ?? 1) - 1);
        this.#e.wake();
      });
    rows.set(row.idx, p);
    this.#count++;
    this.#countBy.set(account, (this.#countBy.get(account) ?? 0) + 1);
  }
}

/**
 * How long a paused account's unsent rows wait before they move to another account: a supplier's
 * pause, max_queue_delay (it may end within it); the operator's pause (`topup account pause`), not
 * at all: the operator said not to send there, and waiting would only delay the rows.
 */
function moveGraceMs(kind: PauseKind, maxQueueDelayMs: number): number {
  return kind === 'operator' ? 0 : maxQueueDelayMs;
}
