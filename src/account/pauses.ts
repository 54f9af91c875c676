/**
 * Why orders are not being sent right now, for every batch of every process on this home:
 *  - `account`: the key, the account or the URL cannot work (401/403 on any route, a redirect).
 *    Polling stops too, since every route would fail; a cheap authenticated read (GET /balance)
 *    probes every `probeMs` and sending resumes when it succeeds.
 *  - `maintenance`: MAINTENANCE / API_ORDER_DISABLED / a 503 without a code. Polling goes on;
 *    on a home with one account, after a back-off of 1 s, 2 s, then the read probe's interval
 *    doubling up to MAX_PROBE_MS, one order of the account's own rows is let through to see
 *    whether it ended.
 *
 * Every paused account is also probed on a schedule by a read (GET /balance, through the account's
 * rate gate, never an order): an account that no row goes to (routing skips a paused account, and
 * failover moves its rows away) would otherwise stay paused for ever while the reseller pays a
 * dearer account (issue 30). A read that answers ends an account problem. It cannot prove that an
 * orders-only maintenance is over (the spec: "GET routes may still work" during it), so it puts the
 * account *on trial*: the pause is lifted (routing and sending return to the account at once, one
 * order at a time) and the next order decides. An order met by maintenance again within TRIAL_KEEP_MS
 * takes the same pause back (its `since`, no second notification, rows moved on at once) and the next
 * read probe waits twice as long (up to MAX_PROBE_MS); an order placed ends the trial.
 *
 * Per account: one supplier's maintenance does not stop another's orders (account `default` keeps
 * the key homes had before several accounts).
 *
 * The pause lives in the store (meta), not in one process's memory: what the daemon learns, a
 * `topup submit` beside it obeys at once, and the other way round. Its clock is the monotonic one
 * every process on the machine shares (kernel/clock.ts), so a wall-clock step neither freezes a pause
 * nor ends it early; `since` (wall time) is for people.
 */
import type { MetaStore } from '../store/meta.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import { lastPauseKey, pauseKey, probeKey, trialKey } from '../store/account-keys.js';

/**
 * `operator`: the operator's own word (`topup account pause NAME`): no order leaves for the account
 * until `topup account resume NAME`. Nothing in flight is abandoned: polls and lookups go on, so
 * rows already sent there are followed to their end. No probe lifts it, no order or read that goes
 * through ends it, and a supplier's pause met meanwhile does not replace it (the account sends
 * nothing anyway; after a resume the next order or read finds the supplier's state again).
 */
export type PauseKind = 'account' | 'maintenance' | 'operator';

/** The code an operator pause carries (where views show a pause's code). */
export const OPERATOR_PAUSE_CODE = 'OPERATOR';

export interface PauseState {
  kind: PauseKind;
  code: string;
  detail: string;
  /** Wall time it began (shown to people). */
  since: number;
  /** Monotonic time from which one call may probe whether it is over. */
  retryAtMono: number;
  /** Failed probes in a row (the back-off grows with them). */
  strikes: number;
  /** Monotonic time of the next read probe (maintenance; an account problem's is `retryAtMono`). Absent in pauses of older versions: due now. */
  probeAtMono?: number;
  /** Trials that ended with maintenance again: the read probe's interval doubles with each. */
  trials?: number;
  /** Monotonic time of the last maintenance answer to an order (a read probe lifts nothing fresher than one interval). */
  seenAtMono?: number;
}

/** A maintenance pause lifted by a read probe, until an order tells (see the top). */
export interface TrialState {
  kind: 'maintenance';
  code: string;
  detail: string;
  /** When the pause it lifted began (wall). */
  since: number;
  /** When the read probe lifted it (wall). */
  liftedAt: number;
  trials: number;
  /** Monotonic time after which a maintenance answer is a new pause. */
  untilMono: number;
}

/** The account's last pause that ended (an order or a read went through), kept for `topup doctor`. */
export interface EndedPause {
  kind: PauseKind;
  code: string;
  detail: string;
  /** Wall time it began. */
  since: number;
  /** Wall time it ended. */
  endedAt: number;
}

/** The last read probe of an account, kept after its pause ended (console, `topup doctor`). */
export interface ProbeRecord {
  /** Wall time it was answered. */
  at: number;
  route: 'GET /balance';
  ok: boolean;
  /** What it showed, for people. */
  outcome: string;
}

// The pause of account `default` keeps the key it had before homes had several accounts. Every
// per-account key is named in store/account-keys.ts, which a rename of the account reads.
export { pauseKey };

// The first order probes come soon (a short blip ends within seconds); after them the order probe
// waits as long as the read probe would (probeIntervalMs, doubling up to MAX_PROBE_MS). Before, it
// stayed at 5 s for ever: a home with one account resent its order every 5.1 s through a whole
// maintenance (a new-user trial: 8 refused POST /orders in 30 s for one API order).
const MAINTENANCE_BACKOFF_MS = [1_000, 2_000];
/** The read probe's longest interval, however many trials failed: a recovered supplier is used again within it. */
export const MAX_PROBE_MS = 5 * 60_000;
/**
 * A maintenance pause's read probe interval is at least this: longer than the first order probes'
 * back-off (MAINTENANCE_BACKOFF_MS), so an account whose own rows keep meeting maintenance is not
 * lifted by a read in between (later ones wait this interval themselves: lift()).
 */
export const MIN_MAINTENANCE_PROBE_MS = 10_000;
/** How long after a read lifted a maintenance pause an order meeting maintenance again continues that pause. */
export const TRIAL_KEEP_MS = 60 * 60_000;

export class Pauses {
  readonly #meta: MetaStore;
  readonly #probeMs: number;
  readonly #clock: Clock;
  /** Each account pauses on its own: one supplier's maintenance does not stop another's orders. */
  readonly #account: string;
  readonly #key: string;
  /**
   * The last read of the store and the monotonic millisecond it was made in. A runner's step asks
   * many times within one millisecond (may it send? may it poll? when is the probe due?): one read
   * answers them all. What another process writes is seen a millisecond later at most (as if this
   * one had asked just before it wrote); what this object writes, at once.
   */
  #read: { mono: number; value: PauseState | null } | null = null;
  #trialRead: { mono: number; value: TrialState | null } | null = null;

  constructor(meta: MetaStore, probeMs: number, clock: Clock = systemClock, account = 'default') {
    this.#meta = meta;
    this.#account = account;
    this.#key = pauseKey(account);
    this.#probeMs = probeMs;
    this.#clock = clock;
  }

  /** A maintenance pause's read probe interval: `probeMs` (at least MIN_MAINTENANCE_PROBE_MS), doubled for every trial that met maintenance again, up to MAX_PROBE_MS. */
  probeIntervalMs(trials: number): number {
    const base = Math.max(this.#probeMs, MIN_MAINTENANCE_PROBE_MS);
    return Math.min(Math.max(base, MAX_PROBE_MS), base * 2 ** Math.min(trials, 20));
  }

  /** The pause in force on this home, if any (read from the store: another process may have set it). */
  get current(): PauseState | null {
    const mono = this.#clock.mono();
    if (this.#read?.mono !== mono) {
      const p = this.#meta.getJson<PauseState>(this.#key) ?? null;
      // A pause written before a reboot (or by an older version) carries a retry time far ahead of
      // the monotonic clock: probe now rather than wait for it.
      if (p && !(p.retryAtMono <= mono + Math.max(this.#probeMs, 60_000))) p.retryAtMono = mono;
      if (p && !(p.probeAtMono !== undefined && p.probeAtMono <= mono + this.probeIntervalMs(p.trials ?? 0))) p.probeAtMono = mono;
      this.#read = { mono, value: p };
    }
    return this.#read.value === null ? null : { ...this.#read.value };
  }

  /**
   * How long a maintenance pause waits before it lets one order through as a probe (only a home with
   * one account takes order probes: engine/account-pauses.ts ordersProbe): 1 s, 2 s, then the read
   * probe's interval for the probes that failed since, doubling up to MAX_PROBE_MS, so a long
   * maintenance costs at most one refused order per interval (docs/accounts.md). A pause a trial
   * brought back goes on from its trials, not from 1 s.
   */
  #orderProbeWaitMs(strikes: number, trials: number): number {
    if (trials === 0 && strikes < MAINTENANCE_BACKOFF_MS.length) return MAINTENANCE_BACKOFF_MS[strikes]!;
    return this.probeIntervalMs(trials + Math.max(0, strikes - MAINTENANCE_BACKOFF_MS.length));
  }

  /** Milliseconds until a probe may leave (0: now), or undefined without a pause. */
  untilProbe(): number | undefined {
    const p = this.current;
    return p ? Math.max(0, p.retryAtMono - this.#clock.mono()) : undefined;
  }

  /** Milliseconds until the read probe is due (0: now), or undefined without a pause. */
  untilReadProbe(): number | undefined {
    const p = this.current;
    // The operator's pause is not the supplier's to end: nothing to probe.
    if (!p || p.kind === 'operator') return undefined;
    return Math.max(0, (p.kind === 'account' ? p.retryAtMono : p.probeAtMono ?? 0) - this.#clock.mono());
  }

  /**
   * Takes the read probe when it is due: false when there is no pause or it is not due yet. A
   * maintenance pause's next probe time is moved on here, in the store, so another process on the
   * home does not probe the same account at the same time; an account problem's moves on when the
   * probe fails (pause()), as before.
   */
  claimReadProbe(): PauseState | null {
    const p = this.current;
    if (!p || (this.untilReadProbe() ?? 1) > 0) return null;
    if (p.kind === 'maintenance') {
      this.#meta.setJson(this.#key, { ...p, probeAtMono: this.#clock.mono() + this.probeIntervalMs(p.trials ?? 0) } satisfies PauseState);
      this.#read = null;
    this.#trialRead = null;
    }
    return p;
  }

  /** May an order leave now? (While paused, only as a probe after the back-off.) */
  canSend(): boolean {
    if (this.current?.kind === 'operator') return false;
    const wait = this.untilProbe();
    return wait === undefined || wait === 0;
  }

  /** May a poll or lookup leave now? Only an account problem stops them. */
  canPoll(): boolean {
    const p = this.current;
    return p?.kind !== 'account' || p.retryAtMono <= this.#clock.mono();
  }

  /** The trial in force (a maintenance pause a read lifted, within TRIAL_KEEP_MS), if any. */
  get trial(): TrialState | null {
    const mono = this.#clock.mono();
    // Read once per monotonic millisecond, as the pause is (dispatch asks on every step).
    if (this.#trialRead?.mono !== mono) this.#trialRead = { mono, value: this.#meta.getJson<TrialState>(trialKey(this.#account)) ?? null };
    const t = this.#trialRead.value;
    // Expired, or written before a reboot (a monotonic time far ahead): over.
    return t && t.untilMono > mono && t.untilMono <= mono + TRIAL_KEEP_MS ? t : null;
  }

  /** Returns true when this starts a new pause (for a one-time log line or notification). */
  pause(kind: Exclude<PauseKind, 'operator'>, code: string, detail: string): boolean {
    const cur = this.current;
    // The operator's pause stands until the operator resumes: the account sends nothing meanwhile,
    // and after the resume the next order (or read) meets the supplier's state again.
    if (cur?.kind === 'operator') return false;
    const mono = this.#clock.mono();
    // Maintenance again on an account a read probe put on trial: the same pause comes back (its
    // `since`: the rows it held move on at once; no second notification), and the read probe waits
    // twice as long, since reads answer while orders do not.
    if (cur === null && kind === 'maintenance') {
      const t = this.trial;
      if (t) {
        const trials = t.trials + 1;
        this.#meta.setJson(this.#key, {
          kind, code, detail, since: t.since, retryAtMono: mono + this.#orderProbeWaitMs(0, trials), strikes: 0, probeAtMono: mono + this.probeIntervalMs(trials), trials, seenAtMono: mono,
        } satisfies PauseState);
        this.#meta.delete(trialKey(this.#account));
        this.#read = null;
    this.#trialRead = null;
        return false;
      }
    }
    const isNew = cur?.kind !== kind || cur.code !== code;
    // Only a probe (a call let through after the back-off) that fails again lengthens the
    // back-off; the other calls that were in flight when the pause began do not.
    const probeFailed = !isNew && cur !== null && mono >= cur.retryAtMono;
    if (!isNew && !probeFailed) {
      // Still the freshest proof that orders are refused (what a read probe weighs: lift()).
      if (kind === 'maintenance' && cur) {
        this.#meta.setJson(this.#key, { ...cur, seenAtMono: mono } satisfies PauseState);
        this.#read = null;
        this.#trialRead = null;
      }
      return false;
    }
    const strikes = isNew ? 0 : cur!.strikes + 1;
    const trials = isNew ? 0 : (cur!.trials ?? 0);
    const wait = kind === 'account' ? this.#probeMs : this.#orderProbeWaitMs(strikes, trials);
    const probeAtMono = isNew ? mono + this.probeIntervalMs(0) : (cur!.probeAtMono ?? mono);
    const next: PauseState = { kind, code, detail, since: isNew ? this.#clock.now() : cur!.since, retryAtMono: mono + wait, strikes, probeAtMono, trials, seenAtMono: mono };
    this.#meta.setJson(this.#key, next);
    this.#read = null;
    this.#trialRead = null;
    return isNew;
  }

  /**
   * A read probe of a maintenance pause was answered: the pause is lifted on trial (see the top),
   * unless an order met the maintenance less than one probe interval ago (the account's own rows
   * still prove it: the next probe is then due when that proof is an interval old). Null when there
   * is no maintenance pause (it ended meanwhile).
   */
  lift(): { lifted: true; pause: PauseState } | { lifted: false; pause: PauseState; reason: string } | null {
    const p = this.current;
    if (!p || p.kind !== 'maintenance') return null;
    const mono = this.#clock.mono();
    const interval = this.probeIntervalMs(p.trials ?? 0);
    // Nor before the next order probe is due, once the back-off has grown past the first ones (a
    // home with one account, whose order probe decides): a lift there would send the order at once,
    // between the order probes, and bring the pause back, a refused order more per read.
    if (p.strikes >= MAINTENANCE_BACKOFF_MS.length && p.retryAtMono > mono && p.retryAtMono <= mono + MAX_PROBE_MS) {
      this.#meta.setJson(this.#key, { ...p, probeAtMono: p.retryAtMono } satisfies PauseState);
      this.#read = null;
      this.#trialRead = null;
      return { lifted: false, pause: p, reason: `the next order probe is due in ${Math.round((p.retryAtMono - mono) / 1000)} s` };
    }
    if (p.seenAtMono !== undefined && p.seenAtMono <= mono && mono - p.seenAtMono < interval) {
      this.#meta.setJson(this.#key, { ...p, probeAtMono: p.seenAtMono + interval } satisfies PauseState);
      this.#read = null;
      this.#trialRead = null;
      return { lifted: false, pause: p, reason: `an order met ${p.code} ${Math.round((mono - p.seenAtMono) / 1000)} s ago` };
    }
    const trial: TrialState = { kind: 'maintenance', code: p.code, detail: p.detail, since: p.since, liftedAt: this.#clock.now(), trials: p.trials ?? 0, untilMono: mono + TRIAL_KEEP_MS };
    this.#meta.setJson(trialKey(this.#account), trial);
    this.#meta.delete(this.#key);
    this.#read = null;
    this.#trialRead = null;
    return { lifted: true, pause: p };
  }

  /**
   * Something went through: the pause (or the trial) is over for everyone. Returns the pause that
   * ended, if any (a trial's as the pause it lifted).
   */
  clear(): PauseState | null {
    const ended = this.current;
    // An order or read that went through (a row sent before the operator's pause, followed to its
    // end) says nothing about the operator's word: only resume() ends it.
    if (ended?.kind === 'operator') return null;
    if (ended) this.#meta.delete(this.#key);
    const t = ended ? null : this.trial;
    if (t) this.#meta.delete(trialKey(this.#account));
    // What ended, and when: the views then say "sending since …" from the store, rather than
    // quoting the last read probe's words ("… still paused") about a pause that is over.
    const over = ended ?? t;
    if (over) this.#meta.setJson(lastPauseKey(this.#account), { kind: over.kind, code: over.code, detail: over.detail, since: over.since, endedAt: this.#clock.now() } satisfies EndedPause);
    this.#read = null;
    this.#trialRead = null;
    return ended ?? (t ? { kind: t.kind, code: t.code, detail: t.detail, since: t.since, retryAtMono: 0, strikes: 0, trials: t.trials } : null);
  }

  /**
   * The operator's pause (`topup account pause`): no order leaves for this account until resume().
   * It takes the place of a supplier's pause in force (one state per account). Returns false when
   * the account was already paused by the operator (nothing changed).
   */
  hold(detail: string): boolean {
    const cur = this.current;
    if (cur?.kind === 'operator') return false;
    const mono = this.#clock.mono();
    this.#meta.setJson(this.#key, { kind: 'operator', code: OPERATOR_PAUSE_CODE, detail, since: this.#clock.now(), retryAtMono: mono, strikes: 0 } satisfies PauseState);
    // A trial a read probe began is over too: the operator decides now.
    this.#meta.delete(trialKey(this.#account));
    this.#read = null;
    this.#trialRead = null;
    return true;
  }

  /**
   * Ends the operator's pause (`topup account resume`): the account's rows may be sent at once and
   * routing returns to it. Null when the account was not paused by the operator (a supplier's pause
   * is left alone: it ends by itself when the supplier answers).
   */
  resume(): PauseState | null {
    const cur = this.current;
    if (cur?.kind !== 'operator') return null;
    this.#meta.delete(this.#key);
    this.#meta.setJson(lastPauseKey(this.#account), { kind: cur.kind, code: cur.code, detail: cur.detail, since: cur.since, endedAt: this.#clock.now() } satisfies EndedPause);
    this.#read = null;
    this.#trialRead = null;
    return cur;
  }

  /** Keeps what the last read probe showed (console, `topup doctor`). */
  probed(ok: boolean, outcome: string): void {
    this.#meta.setJson(probeKey(this.#account), { at: this.#clock.now(), route: 'GET /balance', ok, outcome } satisfies ProbeRecord);
  }

  /** The pause as stored, for `topup status` in another process. */
  static read(meta: MetaStore, account = 'default'): PauseState | null {
    return meta.getJson<PauseState>(pauseKey(account)) ?? null;
  }

  /** The trial as stored (possibly expired: `untilMono` tells), for views in another process. */
  static readTrial(meta: MetaStore, account = 'default'): TrialState | null {
    return meta.getJson<TrialState>(trialKey(account)) ?? null;
  }

  /** The account's last pause that ended, for views. */
  static lastEnded(meta: MetaStore, account = 'default'): EndedPause | null {
    return meta.getJson<EndedPause>(lastPauseKey(account)) ?? null;
  }

  /** The last read probe of the account, for views. */
  static lastProbe(meta: MetaStore, account = 'default'): ProbeRecord | null {
    return meta.getJson<ProbeRecord>(probeKey(account)) ?? null;
  }
}

/** An account's pause as the views show it (console, `topup doctor`): why, since when, the last read probe and the next. */
export interface PauseView {
  account: string;
  pause: PauseState | null;
  /** A maintenance pause a read lifted, still on trial (the next order decides). */
  trial: TrialState | null;
  lastProbe: ProbeRecord | null;
  /** The last pause that ended (null: none recorded). */
  lastEnded: EndedPause | null;
  /** Milliseconds until the next read probe (null without a pause). */
  nextProbeInMs: number | null;
  /** One line for people. */
  text: string;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Reads the store only (another process may run the probes). */
export function pauseView(meta: MetaStore, account: string, clock: Clock = systemClock): PauseView {
  const pause = Pauses.read(meta, account);
  const t = Pauses.readTrial(meta, account);
  const mono = clock.mono();
  const trial = t && t.untilMono > mono && t.untilMono <= mono + TRIAL_KEEP_MS ? t : null;
  const lastProbe = Pauses.lastProbe(meta, account);
  const lastEnded = Pauses.lastEnded(meta, account);
  let nextProbeInMs: number | null = null;
  if (pause && pause.kind !== 'operator') {
    const at = pause.kind === 'account' ? pause.retryAtMono : (pause.probeAtMono ?? mono);
    // A time far ahead was written before a reboot: the next runner probes at once.
    nextProbeInMs = at - mono > MAX_PROBE_MS + 60_000 ? 0 : Math.max(0, at - mono);
  }
  // A probe older than the pause in force was about an earlier pause: quoting it ("… answered:
  // orders are tried again") as this pause's misled (a new-user trial, a second pause). A pause a
  // failed trial brought back keeps its first `since`, so the probe that lifted it is still its own.
  const own = lastProbe !== null && (pause === null || lastProbe.at >= pause.since);
  const probe = lastProbe && own ? `; last probed ${iso(lastProbe.at)} (${lastProbe.route}): ${lastProbe.ok ? '' : 'failed: '}${lastProbe.outcome}` : '; not probed yet';
  let text: string;
  if (pause?.kind === 'operator') {
    text = `paused by the operator since ${iso(pause.since)}${pause.detail ? ` (${pause.detail})` : ''}: no order is sent to it (rows already sent are still followed); topup account resume ${account} sends again`;
  } else if (pause) {
    const why = pause.kind === 'account' ? `account problem ${pause.code}: sending and calls stopped` : `maintenance ${pause.code}: orders paused by the API`;
    text = `${why} since ${iso(pause.since)}${pause.detail && pause.detail !== pause.code ? ` (${pause.detail})` : ''}${probe}; next probe in ${Math.ceil((nextProbeInMs ?? 0) / 1000)} s`;
  } else if (trial) {
    text = `sending on trial since ${iso(trial.liftedAt)}: the API answered a read after ${trial.code} (paused since ${iso(trial.since)}); the next order tells whether it is over${probe}`;
  } else {
    // Sending, and nothing else: the last read probe's words were about a pause that is over
    // ("sending; … still paused" said two things at once after a maintenance cleared: a new-user
    // trial). What ended, and when, comes from the store: the ended pause, or a trial that lapsed
    // with no order meeting the maintenance again.
    const lapsed = t && !trial && (lastEnded === null || lastEnded.endedAt < t.liftedAt) ? t : null;
    const why = (kind: PauseKind, code: string): string => (kind === 'account' ? `account problem ${code}` : kind === 'operator' ? 'paused by the operator' : `maintenance ${code}`);
    if (lastEnded && !lapsed) text = `sending since ${iso(lastEnded.endedAt)}; the last pause (${why(lastEnded.kind, lastEnded.code)}, from ${iso(lastEnded.since)}) ended then`;
    else if (lapsed) text = `sending since ${iso(lapsed.liftedAt)}; the last pause (${why('maintenance', lapsed.code)}, from ${iso(lapsed.since)}) was lifted then by a read probe, and no order met it again`;
    else text = 'sending';
  }
  return { account, pause, trial, lastProbe: own ? lastProbe : null, lastEnded, nextProbeInMs, text };
}
