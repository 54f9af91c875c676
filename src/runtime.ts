/**
 * The parts one topup process works with, opened once: config, logger, store, rate scheduler,
 * API client, live catalog. Every command and the daemon start from here, so they share the
 * same database, the same call budget and the same settings.
 */
import { newOwnerId } from './store/owner.js';
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { openDb, type Db } from './store/db.js';
import { BatchStore } from './store/batches.js';
import { RowStore } from './store/rows.js';
import { MetaStore } from './store/meta.js';
import { RateScheduler, FixedWindowGate } from './dispatch/scheduler.js';
import { ResellerClient, type RouteName } from './api/client.js';
import { LiveCatalog } from './catalog/live-catalog.js';

export interface Runtime {
  config: Config;
  log: Logger;
  db: Db;
  batches: BatchStore;
  rows: RowStore;
  meta: MetaStore;
  scheduler: RateScheduler;
  client: ResellerClient;
  catalog: LiveCatalog;
  /** This process, as written in batch leases: host:pid:random. */
  owner: string;
  apiUrl: string;
  /** Calls made by this process, by route and by answer status, for progress and benchmarks. */
  callCounts: Record<string, number>;
  /** The API's clock from its last Date header, against ours, for the doctor's clock check. */
  lastServerDate: { server: number; local: number } | null;
  /** Listens to every API call of this process as it ends (route, status, duration): the runner's `call` events. */
  onCall(listener: CallListener): () => void;
  close(): Promise<void>;
}

export type CallListener = (call: { route: RouteName; status: number | undefined; ms: number }) => void;

/**
 * inbox/, jobs/ and outbox/ exist and are 0700: jobs/ and outbox/ hold the codes keys and cards
 * come with, and inbox/ the players' ids. A folder the user owns that others can read (a fresh
 * clone's folders are 0755, git's default) is tightened, and said once in the log; on the next
 * start there is nothing left to say. A folder someone else owns is left alone (topup doctor
 * warns about it).
 */
export function ensureHomeFolders(config: Config, log?: Logger): void {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  for (const dir of [config.inboxDir, config.jobsDir, config.outboxDir]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    const mode = st.mode & 0o777;
    if ((mode & 0o077) === 0 || (uid !== undefined && st.uid !== uid)) continue;
    chmodSync(dir, 0o700);
    log?.warn({ folder: dir, was: mode.toString(8), now: '700' }, `tightened ${dir} from mode ${mode.toString(8)} to 700: only you can read it (it holds order files and codes)`);
  }
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

export function openRuntime(config: Config, log: Logger, apiUrl: string): Runtime {
  ensureHomeFolders(config, log);
  const db = openDb(config.dbPath);
  const scheduler = new RateScheduler(db, config.rateLimits, config.rateMarginMs, config.requestTimeoutMs, { maxHoldMs: config.retryAfterMaxMs });
  const callCounts: Record<string, number> = {};
  const callListeners = new Set<CallListener>();
  const client = new ResellerClient({
    baseUrl: apiUrl,
    apiKey: config.apiKey,
    auth: config.authHeader,
    timeoutMs: config.requestTimeoutMs,
    retryAfterMaxMs: config.retryAfterMaxMs,
    ipFamily: config.ipFamily,
    onProblem: (route, problem) => problemOnce(log, route, problem),
    gate: config.rateWindowMode === 'fixed' ? new FixedWindowGate(config.rateLimits) : scheduler,
    onResponse: ({ route, status, ms, serverDate }: { route: RouteName; status: number | undefined; ms: number; serverDate?: string | undefined }) => {
      for (const l of callListeners) l({ route, status, ms });
      const server = serverDate ? Date.parse(serverDate) : NaN;
      if (!Number.isNaN(server)) runtime.lastServerDate = { server, local: Date.now() };
      callCounts[route] = (callCounts[route] ?? 0) + 1;
      const key = `status:${status ?? 'none'}`;
      callCounts[key] = (callCounts[key] ?? 0) + 1;
    },
  });
  const runtime: Runtime = {
    config,
    log,
    db,
    batches: new BatchStore(db),
    rows: new RowStore(db),
    meta: new MetaStore(db),
    scheduler,
    client,
    catalog: new LiveCatalog(client, config.catalogMaxAgeMs),
    owner: newOwnerId(),
    apiUrl,
    callCounts,
    lastServerDate: null,
    onCall(listener) {
      callListeners.add(listener);
      return () => void callListeners.delete(listener);
    },
    async close() {
      await client.close();
      db.close();
    },
  };
  return runtime;
}
