/**
 * What the console's pages work with: the daemon's runtime and runner (read: snapshot(), events,
 * the store), and the console's own parts. Built once in app.ts.
 */
import { systemClock } from '../kernel/clock.js';
import type { OrderDesk, PlayerCheckDesk } from '../orders/types.js';
import type { Context } from 'hono';
import type { Runtime } from '../runtime.js';
import type { RunnerView } from '../engine/events.js';
import type { ScheduledJobs } from '../reports/schedule.js';
import type { Notifier } from '../notify/notifier.js';
import type { Listing } from '../store/listing.js';
import type { AuditOutcome, AuditStore } from '../store/audit.js';
import { recordBalance } from '../store/pictures.js';
import type { ConsoleSettings } from '../config/console-settings.js';
import type { BalanceWatch } from './balance-watch.js';
import type { RecentErrors } from './recent.js';
import type { LiveFeed } from './live.js';
import { accountPauses, type FiguresCache } from './figures.js';
import type { Uploads } from './uploads.js';
import type { ConsoleEnv, Sessions } from './auth.js';
import type { PageCtx } from './layout.js';
import type { RunningSandbox } from '../sandbox/index.js';

export interface ConsoleDeps {
  rt: Runtime;
  runner: RunnerView;
  /** The scheduled jobs (null: not started in this process). */
  jobs: ScheduledJobs | null;
  notifier: Notifier;
  settings: ConsoleSettings;
  /** The built-in sandbox this daemon started (no TOPUP_API_URL): its balance is in the badge. */
  sandbox?: RunningSandbox | null;
  /** The daemon's order desk (one per daemon: it wakes the runner and the webhook deliverer); made here when absent. */
  desk?: OrderDesk & PlayerCheckDesk;
}

/**
 * The console's parts. Actions go through the operator actions of ops/ with the daemon's runtime:
 * an action that must hold a batch takes a lease of its own and gives back only that one
 * (ops/lease.ts), so the batches the daemon's runner drives are never let go.
 */
export interface Services extends ConsoleDeps {
  listing: Listing;
  audit: AuditStore;
  /** Each account's balance: the freshest reading, read again when older than 5 min (balance-watch.ts). */
  balance: BalanceWatch;
  recent: RecentErrors;
  live: LiveFeed;
  figures: FiguresCache;
  uploads: Uploads;
  sessions: Sessions;
}

export type Ctx = Context<ConsoleEnv>;

/** Who is acting, as written in the audit table and in review resolutions. */
export function actorOf(c: Ctx, svc: Services): string {
  const s = c.get('session');
  const who = s.name || (s.via === 'bearer' ? 'token' : svc.sessions.tokenRequired ? 'operator' : 'local');
  return `${who} (console)`;
}

export function pageCtx(c: Ctx, svc: Services): PageCtx {
  return {
    path: c.req.path,
    sandbox: svc.rt.config.sandbox,
    sandboxBalanceUsd: sandboxBalance(svc),
    readOnly: svc.settings.readOnly,
    tokenRequired: svc.sessions.tokenRequired,
    actor: actorOf(c, svc),
    csrf: c.get('csrfToken'),
    reviewRows: svc.listing.countInState('review'),
    // The banner: every account's pause in force, each named (not only the first account's).
    pauses: accountPauses(svc.rt),
    storeDown: svc.runner.snapshot({ batches: false }).storeDown,
    now: systemClock.now(),
  };
}

/**
 * The built-in sandbox's balance, read from its state file on every page: `topup sandbox balance
 * --add` in another process changes it, and the badge shows that at the next page.
 */
function sandboxBalance(svc: Services): number | null {
  if (!svc.sandbox) return null;
  try {
    const usd = svc.sandbox.admin.account({ apiKey: svc.rt.config.apiKey }).balanceUsd;
    // This read is a reading of the account's balance like any other: the Overview's Money section
    // shows the freshest reading, so it shows this one too. Before, after `topup sandbox balance
    // --add` the badge showed the new balance and Money the old one, two balances at once (issue 33).
    const account = svc.rt.accounts.find((a) => a.setting.key === svc.rt.config.apiKey)?.id ?? svc.rt.account.id;
    const now = systemClock.now();
    svc.balance.record(account, usd, now);
    recordBalance(svc.rt.db, account, usd, now);
    return usd;
  } catch {
    return null;
  }
}

export function record(
  c: Ctx,
  svc: Services,
  action: string,
  outcome: AuditOutcome,
  fields: { batchId?: string | null; line?: number | null; detail?: string | null } = {},
): void {
  svc.audit.record({ at: systemClock.now(), actor: actorOf(c, svc), address: c.get('address'), action, outcome, ...fields });
}
