/**
 * The webhooks' durable outbox: the delivery columns of order_events (migration 12), and nothing
 * else. The events themselves are written by the store's triggers, in the transaction that changes
 * the order (so no change can be lost between the order and its webhook); this module only reads
 * them and records how their delivery goes. It never inserts or deletes an event and never writes
 * rows or batches: the feed (GET /api/v1/orders?since=) lists the same events whatever happens here.
 *
 * The rules (docs/webhooks.md):
 *  - in order per order: of an order's events (batch_id, idx), only the lowest one still `pending`
 *    may go; its later events wait until it is `delivered` or `failed` (or `none`). A failed event
 *    does not block its order for ever: once it is failed, the next one goes;
 *  - at least once: an event is claimed before it is posted, by a compare-and-set that pushes its
 *    next_attempt_at past the request's timeout (LEASE_MARGIN_MS more). Two deliverers never post
 *    the same event at once, and a process that dies mid-post leaves an event that simply comes
 *    due again when that lease ends: posted again, never lost;
 *  - retried by a back-off schedule (RETRY_SCHEDULE_MS, ±10% jitter so a receiver back from an
 *    outage is not hit by every event in the same second), for at least 24 h: an event is given up
 *    (`failed`) at the first failed attempt once GIVE_UP_AFTER_MS has passed since the event and it
 *    has had MIN_ATTEMPTS attempts (the schedule's span is ≥ 24 h then; a replayed event gets the
 *    attempts again);
 *  - a receiver back from an outage gets its backlog at once, not on each event's back-off: an
 *    answer (2xx) from a URL brings every event waiting out a back-off after failing there due now
 *    (receiverBack), and while a URL fails, one waiting event is tried every RECEIVER_PROBE_MS
 *    ahead of its slot (receiverProbe) so that a return is noticed within that time. Neither
 *    touches an event held by a claim (its wait is no longer than a claim's), so two deliverers
 *    still never post one event at once; the order rule still holds (only an order's head goes);
 *  - `none`: no URL applies (no TOPUP_ORDER_WEBHOOK_URL and no callbackUrl on the order). Nothing
 *    is posted; the feed still lists it. `topup webhooks replay` sends it once a URL is set.
 */
import { unsynced, type Db } from '../store/db.js';

export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'none'] as const;
export type Delivery = (typeof DELIVERY_STATES)[number];

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
/** The wait after the 1st, 2nd, … failed attempt; the last one repeats. */
export const RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([5 * S, 15 * S, M, 5 * M, 15 * M, 30 * M, H, 2 * H]);
/** An event is given up once this long has passed since it happened … */
export const GIVE_UP_AFTER_MS = 26 * H;
/** … and it has been tried at least this often: the schedule's waits between them add up to ≥ 24 h. */
export const MIN_ATTEMPTS = attemptsSpanning(24 * H);
/** A claim holds an event for the request's timeout and this much more (a slow write, a GC pause). */
export const LEASE_MARGIN_MS = 20 * S;
/**
 * While a receiver fails, one of its events waiting out a back-off is tried this often (ahead of its
 * slot): the back-off per event grows to 15 min, 30 min, 2 h, and a receiver back from an outage
 * was otherwise noticed only at the earliest of them (a new-user trial: 27 of 283 events delivered
 * in the first 60 s after the receiver came back).
 */
export const RECEIVER_PROBE_MS = 10 * S;
/** The jitter on each wait: ±10%. */
const JITTER = 0.1;

/** The wait after `attempts` failed attempts (1 → 5 s). */
export function backoffMs(attempts: number): number {
  return RETRY_SCHEDULE_MS[Math.min(Math.max(attempts, 1), RETRY_SCHEDULE_MS.length) - 1]!;
}

/** The fewest attempts whose waits between them (by the schedule, no jitter) add up to `span`. */
function attemptsSpanning(span: number): number {
  let n = 1;
  let total = 0;
  while (total < span) total += backoffMs(n++);
  return n;
}

/** One event as the deliverer and the views see it. */
export interface OutboxEvent {
  id: number;
  batchId: string;
  idx: number;
  trxid: string;
  type: string;
  status: string;
  at: number;
  delivery: Delivery;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  lastStatus: number | null;
  deliveredAt: number | null;
  url: string | null;
}

/** A due event, with the order's own callback URL (null: the home's TOPUP_ORDER_WEBHOOK_URL). */
export interface DueEvent extends OutboxEvent {
  callbackUrl: string | null;
}

const COLUMNS = `e.id, e.batch_id AS batchId, e.idx, e.trxid, e.type, e.status, e.at, e.delivery, e.attempts,
  e.next_attempt_at AS nextAttemptAt, e.last_error AS lastError, e.last_status AS lastStatus, e.delivered_at AS deliveredAt, e.url`;

/** `evt_12` or `12` → 12; anything else → null. */
export function eventNumber(text: string): number | null {
  const m = /^(?:evt_)?(\d{1,15})$/i.exec(text.trim());
  return m ? Number(m[1]) : null;
}

export type ReplaySelection = { ids: number[] } | { failed: true } | { trxid: string } | { since: number };

export interface ReplayOutcome {
  /** Events set back to pending, due now. */
  replayed: number;
  /** Events selected that were pending already (they go by their schedule). */
  alreadyPending: number;
}

export class WebhookOutbox {
  readonly #db: Db;
  readonly #q;

  constructor(db: Db) {
    this.#db = db;
    this.#q = {
      // The head of each order (its lowest pending event), when due. The outer scan walks the
      // partial index of pending events by due time; the NOT EXISTS walks one order's few events.
      due: db.prepare<[number, number]>(`SELECT ${COLUMNS}, r.callback_url AS callbackUrl
        FROM order_events e LEFT JOIN rows r ON r.batch_id = e.batch_id AND r.idx = e.idx
        WHERE e.delivery = 'pending' AND e.next_attempt_at <= ?
          AND NOT EXISTS (SELECT 1 FROM order_events p WHERE p.batch_id = e.batch_id AND p.idx = e.idx AND p.id < e.id AND p.delivery = 'pending')
        ORDER BY e.next_attempt_at, e.id LIMIT ?`),
      markNone: db.prepare(`UPDATE order_events SET delivery = 'none', last_error = 'no webhook URL applies (TOPUP_ORDER_WEBHOOK_URL unset, no callbackUrl)'
        WHERE delivery = 'pending' AND NOT EXISTS (SELECT 1 FROM rows r WHERE r.batch_id = order_events.batch_id AND r.idx = order_events.idx AND r.callback_url IS NOT NULL)`),
      noneOne: db.prepare<[string, number]>(`UPDATE order_events SET delivery = 'none', last_error = ? WHERE id = ? AND delivery = 'pending'`),
      claim: db.prepare<[number, string, number, number]>(`UPDATE order_events SET next_attempt_at = ?, attempts = attempts + 1, url = ?
        WHERE id = ? AND delivery = 'pending' AND next_attempt_at = ?`),
      delivered: db.prepare<[number, number, number]>(`UPDATE order_events SET delivery = 'delivered', delivered_at = ?, last_status = ?, last_error = NULL
        WHERE id = ? AND delivery = 'pending'`),
      failedAttempt: db.prepare<[string, number, string | null, number | null, number]>(`UPDATE order_events SET delivery = ?, next_attempt_at = ?, last_error = ?, last_status = ?
        WHERE id = ? AND delivery = 'pending'`),
      // Back-offs longer than a claim (`> ?`: now + the claim's span), of events last tried at this URL.
      back: db.prepare<[number, string, number]>(`UPDATE order_events SET next_attempt_at = ? WHERE delivery = 'pending' AND url = ? AND next_attempt_at > ?`),
      // The event at this URL whose back-off ends first, among order heads not held by a claim.
      probe: db.prepare<[string, number]>(`SELECT ${COLUMNS}, r.callback_url AS callbackUrl
        FROM order_events e LEFT JOIN rows r ON r.batch_id = e.batch_id AND r.idx = e.idx
        WHERE e.delivery = 'pending' AND e.url = ? AND e.next_attempt_at > ?
          AND NOT EXISTS (SELECT 1 FROM order_events p WHERE p.batch_id = e.batch_id AND p.idx = e.idx AND p.id < e.id AND p.delivery = 'pending')
        ORDER BY e.next_attempt_at, e.id LIMIT 1`),
      failingUrls: db.prepare(`SELECT DISTINCT url FROM order_events WHERE delivery = 'pending' AND last_error IS NOT NULL AND url IS NOT NULL`).pluck(),
      one: db.prepare<[number]>(`SELECT ${COLUMNS} FROM order_events e WHERE e.id = ?`),
      counts: db.prepare(`SELECT delivery, count(*) AS n FROM order_events GROUP BY delivery`),
      oldestPending: db.prepare(`SELECT ${COLUMNS} FROM order_events e WHERE e.delivery = 'pending' AND e.next_attempt_at >= 0 ORDER BY e.id LIMIT 1`),
      list: db.prepare<[string, number, number]>(`SELECT ${COLUMNS} FROM order_events e WHERE e.delivery = ? AND e.id < ? ORDER BY e.id DESC LIMIT ?`),
      lastError: db.prepare(`SELECT ${COLUMNS} FROM order_events e WHERE e.delivery = 'pending' AND e.next_attempt_at >= 0 AND e.last_error IS NOT NULL ORDER BY e.id DESC LIMIT 1`),
    };
  }

  /** Up to `limit` events that may be posted now (each the oldest pending event of its order). */
  due(now: number, limit: number): DueEvent[] {
    return this.#q.due.all(now, limit) as DueEvent[];
  }

  /**
   * With no TOPUP_ORDER_WEBHOOK_URL, the pending events of orders without a callbackUrl are marked
   * `none`: nothing will ever be posted for them, and they must not be counted as waiting.
   */
  markNone(): number {
    // Unsynced (db.ts): the deliverer runs it every 25 ms while orders come in, and each fully
    // synced commit of it held the event loop for an fsync (a profile of the order API at 500/s:
    // 3 % of the daemon's time, in front of every acceptance). A power cut can only undo the mark,
    // leaving those events pending: the next look marks them again. Nothing is posted on it.
    return unsynced(this.#db, () => this.#q.markNone.run().changes);
  }

  /** One event that will never be posted, and why (its order's callbackUrl is no longer allowed, no other URL applies). */
  markOneNone(id: number, why: string): boolean {
    return this.#q.noneOne.run(why.slice(0, 200), id).changes === 1;
  }

  /**
   * Takes event `id` for one attempt, if it is still pending with the next_attempt_at this process
   * read (`seen`): the attempt is counted and the event held until `until`. False: another
   * deliverer took it first, or it changed.
   */
  claim(id: number, seen: number, until: number, url: string): boolean {
    return this.#q.claim.run(until, url, id, seen).changes === 1;
  }

  delivered(id: number, now: number, status: number): void {
    this.#q.delivered.run(now, status, id);
  }

  /**
   * An attempt failed: the next one by the schedule, or `failed` when the event is old enough and
   * was tried often enough. `random` is in [0, 1) (rt.entropy). Returns what was recorded.
   */
  attemptFailed(id: number, now: number, why: { error: string; status: number | null }, random: number): { delivery: 'pending' | 'failed'; nextAttemptAt: number } | undefined {
    const ev = this.get(id);
    if (!ev || ev.delivery !== 'pending') return undefined;
    const error = why.error.slice(0, 200);
    if (now - ev.at >= GIVE_UP_AFTER_MS && ev.attempts >= MIN_ATTEMPTS) {
      this.#q.failedAttempt.run('failed', now, error, why.status, id);
      return { delivery: 'failed', nextAttemptAt: now };
    }
    let next = now + Math.round(backoffMs(ev.attempts) * (1 - JITTER + 2 * JITTER * random));
    // The last wait before the 26th hour ends at it: the event is given up on time, not up to 2 h late.
    const deadline = ev.at + GIVE_UP_AFTER_MS;
    if (now < deadline && next > deadline) next = deadline;
    this.#q.failedAttempt.run('pending', next, error, why.status, id);
    return { delivery: 'pending', nextAttemptAt: next };
  }

  /**
   * `url` answered 2xx: every event waiting out a back-off after failing there is due now (a
   * receiver back from an outage gets its backlog at once; the deliverer's concurrency paces it).
   * `claimSpanMs` is how long a claim holds an event (the request's timeout and LEASE_MARGIN_MS):
   * an event due later than that is waiting out a back-off, never held by a claim (a claim's hold is
   * never longer), so no event another deliverer is posting is made due. Returns how many.
   */
  receiverBack(url: string, now: number, claimSpanMs: number): number {
    return this.#q.back.run(now, url, now + claimSpanMs).changes;
  }

  /**
   * While `url` fails: its order head whose back-off ends first, if that is later than a claim's
   * span (so not held by one). The deliverer claims it with the next_attempt_at read here and
   * posts it ahead of its slot: the receiver's return is noticed within RECEIVER_PROBE_MS.
   */
  receiverProbe(url: string, now: number, claimSpanMs: number): DueEvent | undefined {
    return this.#q.probe.get(url, now + claimSpanMs) as DueEvent | undefined;
  }

  /** URLs with events waiting out a back-off after failing there (the deliverer probes them). */
  failingUrls(): string[] {
    return this.#q.failingUrls.all() as string[];
  }

  get(id: number): OutboxEvent | undefined {
    return this.#q.one.get(id) as OutboxEvent | undefined;
  }

  /** Events by delivery state (every state present, 0 when none). */
  counts(): Record<Delivery, number> {
    const out: Record<Delivery, number> = { pending: 0, delivered: 0, failed: 0, none: 0 };
    for (const r of this.#q.counts.all() as { delivery: Delivery; n: number }[]) out[r.delivery] = r.n;
    return out;
  }

  /** The oldest event still pending (its age is how far the receiver is behind), or undefined. */
  oldestPending(): OutboxEvent | undefined {
    return this.#q.oldestPending.get() as OutboxEvent | undefined;
  }

  /** The newest pending event with an error: what the receiver answered last. */
  lastPendingError(): OutboxEvent | undefined {
    return this.#q.lastError.get() as OutboxEvent | undefined;
  }

  /** Events in one delivery state, newest first, at most `limit`, below event `before` (paging). */
  list(delivery: Delivery, limit: number, before = Number.MAX_SAFE_INTEGER): OutboxEvent[] {
    return this.#q.list.all(delivery, before, limit) as OutboxEvent[];
  }

  /**
   * Sets the selected events back to pending, due now, with their attempts from 0 (so a replayed
   * event gets its full MIN_ATTEMPTS again). Delivered, failed and `none` events are replayed;
   * pending ones are left to their schedule (one may be in flight: a second post of it at the same
   * time would break "one at a time"). In one transaction.
   */
  replay(sel: ReplaySelection): ReplayOutcome {
    let where: string;
    let args: (string | number)[];
    if ('ids' in sel) {
      const ids = [...new Set(sel.ids)].slice(0, 10_000);
      if (ids.length === 0) return { replayed: 0, alreadyPending: 0 };
      where = `id IN (${ids.map(() => '?').join(',')})`;
      args = ids;
    } else if ('failed' in sel) {
      where = `delivery = 'failed'`;
      args = [];
    } else if ('trxid' in sel) {
      where = `trxid_fold(trxid) = trxid_fold(?)`; // the one trxid fold (kernel/identity.ts), as order_events_trxid
      args = [sel.trxid];
    } else {
      where = `id >= ?`;
      args = [sel.since];
    }
    return this.#db.transaction(() => {
      const alreadyPending = (this.#db.prepare(`SELECT count(*) AS n FROM order_events WHERE ${where} AND delivery = 'pending'`).get(...args) as { n: number }).n;
      const replayed = this.#db
        .prepare(`UPDATE order_events SET delivery = 'pending', attempts = 0, next_attempt_at = 0, delivered_at = NULL WHERE ${where} AND delivery <> 'pending'`)
        .run(...args).changes;
      return { replayed, alreadyPending };
    }).immediate();
  }
}
