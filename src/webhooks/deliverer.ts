/**
 * The webhook deliverer: runs in the daemon beside the runner and posts the due events of the
 * outbox (outbox.ts) to the shop, signed (signer.ts).
 *
 * It must never affect orders, so:
 *  - it has its own HTTP client (an undici Agent of its own): not the supplier's client, not its
 *    rate gate, not its connections. A receiver that hangs holds one of our sockets, never one the
 *    orders need;
 *  - nothing of the runner awaits it: it is started beside the runner and only reads the
 *    events the store's triggers wrote. Every error (of a post, of the database) is caught and
 *    recorded or logged; none escapes into the process;
 *  - a slow receiver holds one slot for at most the timeout; the other slots go on with other
 *    orders' events (CONCURRENCY, at most one event per order at a time: outbox.ts's order rule).
 *
 * Time comes from rt.clock and jitter from rt.entropy (test/unit/world.test.ts): a test moves a
 * virtual clock through a day of retries in a second. The request's own timeout is real time (it
 * bounds a real socket).
 *
 * A post: POST <url> with the event's JSON (OrderDesk.event: the same object the feed lists),
 * Content-Type: application/json, Topup-Signature, Topup-Event-Id, Topup-Event-Type and
 * User-Agent: topup-runner. 2xx is delivered; anything else (3xx: redirects are not followed, a
 * shop's URL must be the final one; 4xx; 5xx; a timeout; a reset; a refused connection) is
 * retried by the schedule.
 */
import { Agent, request } from 'undici';
import type { Clock } from '../kernel/clock.js';
import type { Entropy } from '../kernel/entropy.js';
import type { Logger } from '../kernel/log.js';
import type { Db } from '../store/db.js';
import type { OrderDesk } from '../orders/types.js';
import type { Runtime } from '../runtime.js';
import { LEASE_MARGIN_MS, RECEIVER_PROBE_MS, WebhookOutbox, type DueEvent } from './outbox.js';
import { SIGNATURE_HEADER, sign } from './signer.js';
import { originOf } from '../config/order-api-settings.js';

export const USER_AGENT = 'topup-runner';
/** Events posted at once (each of another order). */
export const CONCURRENCY = 8;
/** A request's whole time: connecting, the answer's headers and its body. */
export const TIMEOUT_MS = 10_000;
/** The shortest sleep between looks while events are pending and not due (a wake() cuts any sleep short). */
export const INTERVAL_MS = 1_000;
/** With no event pending, the next look is this far off unless something wakes the deliverer. */
export const IDLE_LOOK_MS = 60_000;
/**
 * The least time between two looks: wake() comes on every row that moves (thousands a second in a
 * large file's batch), and a look is a query; wakes within this gap are served by one look.
 */
const MIN_GAP_MS = 25;
/** How long a stop waits for posts in flight before it cuts them (each is then posted again later). */
const STOP_GRACE_MS = 2_000;
/** last_error's longest text. */
const ERROR_CHARS = 200;

export interface WebhookSettings {
  /** TOPUP_ORDER_WEBHOOK_URL: where events of orders without a callbackUrl go (null: nowhere). */
  url: string | null;
  /** TOPUP_ORDER_WEBHOOK_SECRET. */
  secret: string | null;
  /** TOPUP_ORDER_WEBHOOK_CODES: a completed order's codes are in the body. */
  codes: boolean;
  /** TOPUP_ORDER_WEBHOOK_ALLOW: the origins a stored callbackUrl may still be posted to (checked at each post; the daemon always gives it). */
  allow?: readonly string[];
}

export interface DelivererDeps {
  db: Db;
  clock: Clock;
  entropy: Entropy;
  log: Logger;
  settings: WebhookSettings;
  /** Builds an event's body (the desk: src/orders/desk.ts). */
  events: Pick<OrderDesk, 'event'>;
  /**
   * Resolves once every commit made before the call is on disk (the runtime's log sync,
   * store/wal-sync.ts). Intents are committed unsynced and their events are written by the same
   * commit (trigger rows_api_event_update): an event read from the outbox may not be on disk yet,
   * and posted before, a power cut would leave the order reading "accepted" after its client was
   * told "sent". So each post waits for it; a sync that failed fails the post (tried again later).
   */
  durable?: () => Promise<void>;
}

export interface DelivererOptions {
  concurrency?: number;
  timeoutMs?: number;
  intervalMs?: number;
}

/** An error as last_error shows it: short, one line, the secret never in it. */
export function errorText(err: unknown, secret: string | null): string {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  let text: string;
  if (e?.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') text = 'timeout: no answer in time';
  else if (code === 'ECONNREFUSED') text = 'connection refused (ECONNREFUSED)';
  else if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') text = `connection reset (${code})`;
  else if (e?.name === 'AbortError') text = 'stopped before an answer (the daemon was stopping)';
  else text = `${code ? `${code}: ` : ''}${e?.message ?? String(err)}`;
  if (secret) text = text.split(secret).join('[REDACTED]');
  return text.replace(/\s+/g, ' ').slice(0, ERROR_CHARS);
}

/**
 * The daemon's deliverer: the home's settings (TOPUP_ORDER_WEBHOOK_*), the runtime's clock,
 * entropy and store, and the desk's event() for the bodies. Started; woken on every row move.
 */
export function startDeliverer(rt: Pick<Runtime, 'db' | 'clock' | 'entropy' | 'log' | 'config' | 'walSync'>, events: Pick<OrderDesk, 'event'>, opts: DelivererOptions = {}): Deliverer {
  const w = rt.config.orderApi.webhook;
  const wal = rt.walSync;
  return new Deliverer({ db: rt.db, clock: rt.clock, entropy: rt.entropy, log: rt.log.child({ component: 'webhooks' }), settings: { url: w.url, secret: w.secret, codes: w.codes, allow: w.allow }, events, ...(wal ? { durable: () => wal.durable() } : {}) }, opts).start();
}

export class Deliverer {
  readonly #d: DelivererDeps;
  readonly #outbox: WebhookOutbox;
  readonly #concurrency: number;
  readonly #timeoutMs: number;
  readonly #intervalMs: number;
  readonly #agent: Agent;
  /** Posts in flight, by order (batch_id:idx): never two of one order. */
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #stopping = new AbortController();
  #wakeUp: (() => void) | null = null;
  #woken = false;
  /** stop() was called: no new post starts. */
  #closing = false;
  #loop: Promise<void> | null = null;
  #lastLogged = { text: '', at: -Infinity };
  /**
   * URLs whose last attempt here failed, with when one of their events was last tried (wall ms of
   * rt.clock): each gets one event tried ahead of its back-off every RECEIVER_PROBE_MS, and its first
   * 2xx makes its whole backlog due (outbox.ts receiverBack).
   */
  readonly #failing = new Map<string, number>();
  /** Posts made by this deliverer (tests and the log). */
  posts = 0;

  constructor(deps: DelivererDeps, opts: DelivererOptions = {}) {
    this.#d = deps;
    this.#outbox = new WebhookOutbox(deps.db);
    this.#concurrency = opts.concurrency ?? CONCURRENCY;
    this.#timeoutMs = opts.timeoutMs ?? TIMEOUT_MS;
    this.#intervalMs = opts.intervalMs ?? INTERVAL_MS;
    // Our own connections, bounded in time at every step; never the supplier's client's.
    this.#agent = new Agent({
      connect: { timeout: this.#timeoutMs },
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      connections: this.#concurrency,
    });
  }

  /** Starts the loop: a look every interval, and at once on wake(). */
  start(): this {
    // URLs an earlier process left failing (events waiting out a back-off there): probed from the
    // start, not only after this process has seen one fail.
    try {
      for (const url of this.#outbox.failingUrls()) this.#failing.set(url, this.#d.clock.now());
    } catch (err) {
      this.#warn(`webhooks: could not read the outbox: ${errorText(err, this.#d.settings.secret)}`);
    }
    this.#loop ??= this.#run();
    return this;
  }

  /** Look for due events now (an order just changed). */
  wake(): void {
    this.#woken = true;
    this.#wakeUp?.();
  }

  /** The outbox it delivers from (for views in the same process). */
  get outbox(): WebhookOutbox {
    return this.#outbox;
  }

  /**
   * One look, then waits for every post it started and for those they make room for, until nothing
   * is due (at this clock's time) and nothing is in flight. Returns how many were posted. For tests
   * with a virtual clock; the loop does the same without waiting.
   */
  async tick(): Promise<number> {
    const before = this.posts;
    this.#fill();
    while (this.#inFlight.size > 0) {
      await Promise.allSettled([...this.#inFlight.values()]);
      this.#fill();
    }
    return this.posts - before;
  }

  /**
   * Stops: no new post starts; those in flight get STOP_GRACE_MS to finish, then are cut (recorded as
   * a failed attempt, posted again later). Every post has recorded its outcome when this resolves,
   * so the daemon may close the store after it.
   */
  async stop(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    const grace = new AbortController();
    await Promise.race([Promise.allSettled([...this.#inFlight.values()]), this.#d.clock.sleep(STOP_GRACE_MS, grace.signal).catch(() => undefined)]);
    grace.abort();
    this.#stopping.abort();
    this.#wakeUp?.();
    await Promise.allSettled([...this.#inFlight.values()]);
    await this.#loop;
    await this.#agent.close().catch(() => undefined);
  }

  async #run(): Promise<void> {
    const signal = this.#stopping.signal;
    while (!signal.aborted) {
      this.#woken = false;
      this.#fill();
      await this.#d.clock.sleep(MIN_GAP_MS, signal).catch(() => undefined);
      // A wake() during the gap is served now, not after the interval.
      if (signal.aborted || this.#woken) continue;
      const wait = new AbortController();
      const onStop = (): void => wait.abort();
      signal.addEventListener('abort', onStop, { once: true });
      this.#wakeUp = () => wait.abort();
      await this.#d.clock.sleep(this.#untilNextLook(), wait.signal).catch(() => undefined);
      signal.removeEventListener('abort', onStop);
      this.#wakeUp = null;
    }
  }

  /**
   * How long to sleep after a look: the interval while webhooks are on (a URL or an allow-list:
   * events may be pending, replayed from the console or another process, or due after a back-off);
   * IDLE_LOOK_MS while they are off, when every event is only marked `none` (a change in this
   * process wakes the loop anyway). An idle daemon without webhooks does not query the outbox every
   * second (the bench's idle figure: 0.06 CPU s per 30 s with it, target < 0.03).
   */
  #untilNextLook(): number {
    const on = this.#d.settings.url !== null || (this.#d.settings.allow?.length ?? 0) > 0;
    return Math.max(0, (on ? this.#intervalMs : IDLE_LOOK_MS) - MIN_GAP_MS);
  }

  #allowed(callbackUrl: string): boolean {
    const allow = this.#d.settings.allow;
    if (allow === undefined) return true; // a deliverer made without the list (tests): stored callbacks as they are
    try {
      return allow.includes(originOf(callbackUrl, 'callbackUrl'));
    } catch {
      return false;
    }
  }

  /** Starts posts for due events while there are free slots. Never throws. */
  #fill(): void {
    if (this.#closing) return;
    try {
      const { url, secret } = this.#d.settings;
      if (url === null) this.#outbox.markNone();
      const free = this.#concurrency - this.#inFlight.size;
      if (free <= 0) return;
      const now = this.#d.clock.now();
      this.#probeFailing(now);
      // A few more than the free slots: some may be of orders already in flight.
      for (const ev of this.#outbox.due(now, free + this.#inFlight.size)) {
        if (this.#inFlight.size >= this.#concurrency) break;
        const key = `${ev.batchId}:${ev.idx}`;
        if (this.#inFlight.has(key)) continue;
        // A callbackUrl is used only while TOPUP_ORDER_WEBHOOK_ALLOW still names its origin (an
        // adversarial review: an origin taken off the list went on receiving an order's events,
        // codes included, for 26 h): otherwise the home's URL, or nothing.
        const callback = ev.callbackUrl !== null && this.#allowed(ev.callbackUrl) ? ev.callbackUrl : null;
        const target = callback ?? url;
        if (target === null && ev.callbackUrl !== null) {
          this.#outbox.markOneNone(ev.id, `its callbackUrl's origin is not in TOPUP_ORDER_WEBHOOK_ALLOW any more, and TOPUP_ORDER_WEBHOOK_URL is unset: not posted`);
          continue;
        }
        if (target === null || secret === null) continue;
        this.#start(ev, target, secret, now);
      }
    } catch (err) {
      this.#warn(`webhooks: could not read the outbox: ${errorText(err, this.#d.settings.secret)}`);
    }
  }

  /** Claims one event (false: another deliverer took it, or it changed) and posts it in a slot. */
  #start(ev: DueEvent, target: string, secret: string, now: number): boolean {
    if (!this.#outbox.claim(ev.id, ev.nextAttemptAt, now + this.#claimSpanMs, target)) return false;
    if (this.#failing.has(target)) this.#failing.set(target, now);
    const key = `${ev.batchId}:${ev.idx}`;
    const post = this.#post(ev, target, secret).finally(() => {
      this.#inFlight.delete(key);
      // A slot is free: the next due event (maybe this order's next one) goes now.
      this.#fill();
    });
    this.#inFlight.set(key, post);
    return true;
  }

  /** How long a claim holds an event: the request's timeout and a margin (outbox.ts). */
  get #claimSpanMs(): number {
    return this.#timeoutMs + LEASE_MARGIN_MS;
  }

  /**
   * For each URL that failed and had no event tried for RECEIVER_PROBE_MS: its event whose back-off
   * ends first is tried now, ahead of its slot (one post per URL per interval while it stays down).
   * Only the URL that event was last tried at, and only while that is still where it goes.
   */
  #probeFailing(now: number): void {
    const secret = this.#d.settings.secret;
    if (secret === null) return;
    for (const [url, lastTry] of this.#failing) {
      if (now - lastTry < RECEIVER_PROBE_MS || this.#inFlight.size >= this.#concurrency) continue;
      // Tried now or not, the next look at this URL is an interval on.
      this.#failing.set(url, now);
      const ev = this.#outbox.receiverProbe(url, now, this.#claimSpanMs);
      if (!ev) {
        this.#failing.delete(url); // nothing of it waits any more
        continue;
      }
      if (this.#inFlight.has(`${ev.batchId}:${ev.idx}`)) continue;
      const callback = ev.callbackUrl !== null && this.#allowed(ev.callbackUrl) ? ev.callbackUrl : null;
      if ((callback ?? this.#d.settings.url) !== url) continue; // it would go elsewhere now: left to its schedule
      this.#start(ev, url, secret, now);
    }
  }

  /** One attempt of one event; records its outcome. Never throws. */
  async #post(ev: DueEvent, url: string, secret: string): Promise<void> {
    this.posts++;
    let status: number | null = null;
    let failure: unknown = null;
    try {
      await this.#d.durable?.();
      const event = this.#d.events.event(ev.id, { codes: this.#d.settings.codes });
      if (!event) throw new Error(`event evt_${ev.id} cannot be read (its order is gone)`);
      const body = JSON.stringify(event);
      const t = Math.floor(this.#d.clock.now() / 1000);
      const res = await request(url, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER.toLowerCase()]: sign(secret, body, t),
          'topup-event-id': event.id,
          'topup-event-type': event.type,
          'user-agent': USER_AGENT,
        },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(this.#timeoutMs), this.#stopping.signal]),
      });
      status = res.statusCode;
      // The answer's body is not read, only drained (bounded), so the connection can be reused.
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (status < 200 || status >= 300) failure = new Error(`HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed: set the final URL)' : ''}`);
    } catch (err) {
      failure = err;
    }
    try {
      const now = this.#d.clock.now();
      if (failure === null) {
        this.#outbox.delivered(ev.id, now, status!);
        // The receiver answers: whatever waits out a back-off after failing there is due now, not
        // at each event's own slot (up to 15 min, 30 min … later). Only after a failure seen here
        // or an event that had failed before, so a healthy receiver costs no extra write per post.
        if (this.#failing.delete(url) || ev.attempts > 0) {
          const back = this.#outbox.receiverBack(url, now, this.#claimSpanMs);
          if (back > 0) this.#d.log.info({ receiver: safeOrigin(url), events: back }, 'webhook receiver answers again: its waiting events are sent now');
          this.#fill();
        }
        return;
      }
      if (!this.#failing.has(url)) this.#failing.set(url, now);
      const error = errorText(failure, secret);
      const r = this.#outbox.attemptFailed(ev.id, now, { error, status }, this.#d.entropy.random());
      if (r?.delivery === 'failed') {
        this.#d.log.warn({ event: `evt_${ev.id}`, trxid: ev.trxid, attempts: ev.attempts + 1, err: error }, 'webhook given up after its retries: `topup webhooks replay --failed` sends it again');
      } else {
        this.#d.log.debug({ event: `evt_${ev.id}`, attempts: ev.attempts + 1, err: error }, 'webhook attempt failed; retried later');
      }
    } catch (err) {
      // The lease runs out and the event is posted again: at least once, never lost.
      this.#warn(`webhooks: could not record a delivery: ${errorText(err, secret)}`);
    }
  }

  /** A problem of the deliverer itself, logged at most once a minute while it lasts. */
  #warn(text: string): void {
    const now = this.#d.clock.mono();
    if (text === this.#lastLogged.text && now - this.#lastLogged.at < 60_000) return;
    this.#lastLogged = { text, at: now };
    this.#d.log.warn(text);
  }
}

/** A URL's origin for the log (a shop's path may carry a token); never throws. */
function safeOrigin(url: string): string {
  try {
    return originOf(url, 'webhook URL');
  } catch {
    return 'the webhook URL';
  }
}
