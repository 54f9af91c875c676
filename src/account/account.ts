/**
 * One supplier account as one unit, the folder account/: its API client, the rate gate its calls
 * pass (rate-gate.ts), its live catalog (live-catalog.ts), its pauses (pauses.ts), the funds check
 * against the balance its client reads (funds.ts), the URL it talks to (endpoint.ts), and what this
 * process has seen of it (call counts, the server's clock). The runtime holds every account as
 * `rt.accounts` (`rt.account` is the first; what concerns a row uses `rt.accountOf(row.account)`);
 * nothing repeats their parts under other names.
 *
 * A home has one account (`default`, from TOPUP_API_URL / TOPUP_API_KEY) or several (accounts.toml,
 * config/accounts.ts); runtime.ts opens one unit per account. What the store shares between
 * processes is keyed by the account's name: the call log (api_calls.account), the Retry-After hold
 * and the pause (meta keys, `default` keeping the keys of homes from before), and every row names
 * the account it is on (rows.account).
 */
import type { Config } from '../config/config.js';
import type { Logger } from '../kernel/log.js';
import type { Db } from '../store/db.js';
import { recordBalance } from '../store/pictures.js';
import { MetaStore } from '../store/meta.js';
import { RateScheduler, FixedWindowGate } from './rate-gate.js';
import { Pauses } from './pauses.js';
import { ResellerClient, type ClientOptions, type RouteName, type CallOptions } from '../api/client.js';
import type { Balance } from '../api/schemas.js';
import { LiveCatalog } from './live-catalog.js';
import { systemClock, type Clock } from '../kernel/clock.js';
import type { Transport } from '../api/transport.js';
import type { AccountSetting } from '../config/accounts.js';

export interface BalanceSeen {
  usd: number;
  currency: string;
  /** Wall time it was read. */
  at: number;
}

/** The account's client, keeping the last balance it read (Account.lastBalance). */
class BalanceKeepingClient extends ResellerClient {
  readonly #seen: (b: Balance) => void;
  constructor(opts: ClientOptions, seen: (b: Balance) => void) {
    super(opts);
    this.#seen = seen;
  }

  override async balance(opts?: CallOptions): Promise<Balance> {
    const b = await super.balance(opts);
    this.#seen(b);
    return b;
  }
}

export type CallListener = (call: { route: RouteName; status: number | undefined; ms: number }) => void;

export interface Account {
  /** Its name in accounts.toml; `default` for a home with one account from TOPUP_API_URL. */
  readonly id: string;
  /** Its settings (the key among them: never shown). */
  readonly setting: OpenedAccountSetting;
  readonly apiUrl: string;
  readonly client: ResellerClient;
  /** The call log every process on the home shares, judged on the monotonic clock. */
  readonly scheduler: RateScheduler;
  readonly catalog: LiveCatalog;
  /** The account's pause (sending stopped or paused by the API), as every process on the home sees it. */
  pauses(clock?: Clock): Pauses;
  /** Calls made by this process, by route and by answer status, for progress and benchmarks. */
  readonly callCounts: Record<string, number>;
  /** The API's clock from its last Date header, against ours, for the doctor's clock check. */
  readonly lastServerDate: { server: number; local: number } | null;
  /**
   * The last balance this process read from the account (whoever asked: the funds gate, a batch's
   * balance after, a report, the console), with when: the console and /metrics show each account's
   * freshest reading without a call of their own.
   */
  readonly lastBalance: BalanceSeen | null;
  /** Listens to every API call of this process as it ends (route, status, duration). */
  onCall(listener: CallListener): () => void;
  close(): Promise<void>;
}

/**
 * An answer the client read around (a catalog row without a price skipped, a long Retry-After
 * cut short) is logged once per process and problem, not on every poll: a supplier's history
 * with one odd order would otherwise repeat the same line every few seconds.
 */
const PROBLEMS_KEPT = 1_000;
const seenProblems = new Set<string>();
function problemOnce(log: Logger, route: string, problem: string): void {
  const key = `${route}:${problem}`;
  if (seenProblems.has(key) || seenProblems.size >= PROBLEMS_KEPT) return;
  seenProblems.add(key);
  log.warn({ route, problem }, 'an answer from the API was read around a problem (logged once)');
}

/** What an account runs on: the clock of its timers and gate, and how its requests travel. */
export interface AccountWorld {
  clock: Clock;
  transport?: Transport;
}

/** An account's settings with its URL known (the in-process sandbox's, for a home without TOPUP_API_URL). */
export type OpenedAccountSetting = AccountSetting & { readonly url: string };

export function openAccount(config: Config, db: Db, log: Logger, setting: OpenedAccountSetting, world: AccountWorld = { clock: systemClock }): Account {
  const { clock } = world;
  const id = setting.name;
  const apiUrl = setting.url;
  // Limits not given (rate_limits / TOPUP_RATE_LIMITS) are learned from the account's 429s (learned-limits.ts).
  const scheduler = new RateScheduler(db, setting.rateLimits, config.rateMarginMs, config.requestTimeoutMs, { maxHoldMs: config.retryAfterMaxMs, clock, account: id, learn: !setting.rateLimitsGiven });
  const meta = new MetaStore(db);
  // An account problem is probed about every 6 polls (2 s … 1 min): often enough to resume soon,
  // rarely enough not to spend the budget on a key that was revoked.
  const probeMs = Math.min(Math.max(config.pollIntervalMs * 6, 2_000), 60_000);
  const callCounts: Record<string, number> = {};
  const listeners = new Set<CallListener>();
  let lastServerDate: Account['lastServerDate'] = null;
  let lastBalance: BalanceSeen | null = null;
  const client = new BalanceKeepingClient({
    baseUrl: apiUrl,
    apiKey: setting.key,
    auth: setting.authHeader,
    timeoutMs: config.requestTimeoutMs,
    retryAfterMaxMs: config.retryAfterMaxMs,
    ipFamily: setting.ipFamily,
    onProblem: (route, problem) => problemOnce(log, route, problem),
    gate: config.rateWindowMode === 'fixed' ? new FixedWindowGate(setting.rateLimits, clock) : scheduler,
    clock,
    ...(world.transport ? { transport: world.transport } : {}),
    onResponse: ({ route, status, ms, serverDate }: { route: RouteName; status: number | undefined; ms: number; serverDate?: string | undefined }) => {
      for (const l of listeners) l({ route, status, ms });
      const server = serverDate ? Date.parse(serverDate) : NaN;
      if (!Number.isNaN(server)) lastServerDate = { server, local: clock.now() };
      callCounts[route] = (callCounts[route] ?? 0) + 1;
      const key = `status:${status ?? 'none'}`;
      callCounts[key] = (callCounts[key] ?? 0) + 1;
    },
  }, (b) => {
    lastBalance = { usd: b.balanceUsd, currency: b.currency, at: clock.now() };
    // Balance over time and top-ups on the console (store/pictures.ts).
    recordBalance(db, id, b.balanceUsd, lastBalance.at);
  });
  return {
    id,
    setting,
    apiUrl,
    client,
    scheduler,
    catalog: new LiveCatalog(client, config.catalogMaxAgeMs, clock),
    pauses: (pauseClock: Clock = clock) => new Pauses(meta, probeMs, pauseClock, id),
    callCounts,
    get lastServerDate() {
      return lastServerDate;
    },
    get lastBalance() {
      return lastBalance;
    },
    onCall(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    close: () => client.close(),
  };
}
