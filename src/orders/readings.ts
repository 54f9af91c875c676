/**
 * What the order desk judges an acceptance by, kept fresh without making a shop wait: the placer
 * (every account's catalog and the routing loads) and each account's balance reading. Each is
 * renewed in the background once it is older than its MAX_AGE while the one in hand goes on
 * serving, up to its STALE age: the reads go through the rate gate, and an acceptance must never
 * wait behind the orders queued there (the torture suite measured stalls of 3–7 s every 10 s when
 * it did). Only a first reading, or one past its stale age, is waited for, and those reads go first
 * in the gate (Priority.acceptance).
 */
import { coerceError } from '../kernel/errors.js';
import { Priority } from '../api/client.js';
import { roundCents } from '../kernel/money.js';
import type { Runtime } from '../runtime.js';
import { openPlacer, readCatalogs, type Placer } from '../claim/placement.js';
import type { OrderReads } from '../store/order-reads.js';

/** A balance read this recently is used as it is (minus what was spent since). */
const BALANCE_MAX_AGE_MS = 10_000;
/** Past this age a balance reading is not used: a new one is waited for (a 503 if it cannot be had). */
const BALANCE_STALE_MS = 300_000;
/**
 * The catalogs and routing loads an order is placed with are rebuilt this often at most. With
 * several accounts a rebuild reads every account's balance (routing preferences): calls taken from
 * the orders' rate budget, so not often.
 */
const PLACER_MAX_AGE_MS = 30_000;
/** A placer older than this is not used: the catalog it holds may be too far from the supplier's. */
const PLACER_STALE_MS = 300_000;

export class Readings {
  readonly #rt: Runtime;
  readonly #reads: OrderReads;
  readonly #columns: readonly string[];
  /** The placer (every account's catalog and routing loads) and when its build began; rebuilt in the background every PLACER_MAX_AGE_MS. */
  #placer: { at: number; value: Placer } | null = null;
  /** The placer being built, if one is. */
  #building: Promise<Placer> | null = null;
  /** Per account, the last balance read and when (wall ms); one read in flight at a time. */
  readonly #balances = new Map<string, { usd: number; at: number }>();
  readonly #reading = new Map<string, Promise<void>>();

  constructor(rt: Runtime, reads: OrderReads, columns: readonly string[]) {
    this.#rt = rt;
    this.#reads = reads;
    this.#columns = columns;
  }

  /**
   * Reads the catalogs and the balance now, in the background: a daemon serving the API calls it
   * at start, so the first shop order after a (re)start does not wait for them (the torture suite:
   * the slowest acceptances were the first after each restart).
   */
  warm(): void {
    this.placer().catch(() => undefined);
    for (const a of this.#rt.accounts) void this.balance(a.id).catch(() => undefined);
  }

  /**
   * The placer to validate with. A placer older than PLACER_MAX_AGE_MS is rebuilt in the
   * background while the one in hand goes on serving (up to PLACER_STALE_MS): rebuilding reads
   * catalogs (and, with several accounts, balances) through the rate gate, and an acceptance must
   * never wait behind the orders queued there (the torture suite measured 3–7 s stalls every 10 s
   * while the gate was full). Only the first placer, or one past its stale age, is waited for.
   */
  async placer(): Promise<Placer> {
    const now = this.#rt.clock.now();
    const cur = this.#placer;
    if ((!cur || now - cur.at > PLACER_MAX_AGE_MS) && !this.#building) {
      const at = now;
      const building = readCatalogs(this.#rt, Priority.acceptance).then((c) => openPlacer(this.#rt, c, this.#columns));
      this.#building = building;
      building.then(
        (value) => void (this.#placer = { at, value }),
        (err: unknown) => this.#rt.log.warn({ err: coerceError(err).message }, 'order API: cannot read the catalogs; orders are checked against the last ones read'),
      ).finally(() => {
        if (this.#building === building) this.#building = null;
      });
    }
    if (cur && now - cur.at <= PLACER_STALE_MS) return cur.value;
    return this.#building ?? Promise.reject(new Error('no catalog read yet'));
  }

  /**
   * The account's balance reading for the acceptance check. One older than BALANCE_MAX_AGE_MS is
   * read again in the background while the last one goes on serving (less what was placed since
   * it, see #promisable), up to BALANCE_STALE_MS: the read waits its turn in the rate gate behind
   * queued orders, and acceptances must not (the torture suite: POST p99 6.3 s, stalls of 3–7 s
   * every 10 s). Only a first reading, or one past its stale age, is waited for; a 503 if it
   * cannot be had (then why, as a 503's detail).
   */
  async balance(account: string): Promise<string | undefined> {
    const rt = this.#rt;
    const now = rt.clock.now();
    const last = this.#balances.get(account);
    const age = last ? now - last.at : Number.POSITIVE_INFINITY;
    if (age <= BALANCE_MAX_AGE_MS) return undefined;
    let reading = this.#reading.get(account);
    if (!reading) {
      reading = (async () => {
        const at = rt.clock.now();
        const { balanceUsd } = await rt.accountOf(account).client.balance({ priority: Priority.acceptance });
        this.#balances.set(account, { usd: balanceUsd, at });
      })().finally(() => this.#reading.delete(account));
      this.#reading.set(account, reading);
      reading.catch((err: unknown) => rt.log.warn({ account, err: coerceError(err).message }, 'order API: cannot read the balance; orders are checked against the last reading'));
    }
    if (age <= BALANCE_STALE_MS) return undefined;
    try {
      await reading;
    } catch (err) {
      return `cannot read the balance of account ${account}: ${coerceError(err).message}; nothing was stored (send it again later, or with "queue": true to let it wait)`;
    }
    return undefined;
  }

  /**
   * USD each account can still promise, as of the group's transaction: its balance as last read,
   * less what was placed since that read, the rows in flight on it, and the unsent rows of every
   * batch holding money (as the funds gate sets them aside), the day's API batch always included.
   * Read once per group commit (the group's own acceptances are added as they are judged): a read of
   * every unfinished batch per order cost more than the order's own insert.
   */
  promisable(): (account: string) => number | undefined {
    const rt = this.#rt;
    const holding = rt.batches.unfinished().filter((b) => b.state === 'open' && !b.cancelRequested && (b.apiDay !== null || b.waitReason !== 'balance'));
    const memo = new Map<string, number | undefined>();
    return (account) => {
      if (memo.has(account)) return memo.get(account);
      const b = this.#balances.get(account);
      let v: number | undefined;
      if (b) {
        let promised = 0;
        for (const batch of holding) promised += rt.accounts.length === 1 ? rt.rows.unsentTotal(batch.id) : (rt.rows.unsentByAccount(batch.id).get(account) ?? 0);
        v = roundCents(b.usd - this.#reads.placedSince(account, b.at) - this.#reads.inFlightUsd(account) - promised);
      }
      memo.set(account, v);
      return v;
    };
  }
}
