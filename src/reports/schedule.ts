/**
 * The scheduled jobs of the daemon (node-cron), each switched by its TOPUP_*_CRON setting:
 * balance report, history export, reconciliation, low-balance check.
 *
 * - Jobs run one at a time, in this process, through the same rate scheduler as orders and
 *   at the lowest priority (Priority.report), so they share the account's call budget and
 *   give way to orders and polls.
 * - A missed schedule runs once at start-up: the next due time of each job is kept in `meta`;
 *   if the daemon was down when it came, the job runs now (once, however many were missed).
 *   A changed cron expression starts afresh rather than counting as missed.
 * - A failing job is logged and never stops the daemon or the other jobs.
 * - Cron expressions are read in TOPUP_TIME_ZONE (config.timeZone), as the days of the reports are.
 */
import cron, { type ScheduledTask } from 'node-cron';
import { coerceError } from '../kernel/errors.js';
import type { Runtime } from '../runtime.js';
import type { Notifier } from '../notify/notifier.js';
import { runBalanceReport } from './balance.js';
import { runHistoryExport } from './history.js';
import { runReconcile } from './reconcile.js';
import { runLowBalanceCheck } from './low-balance.js';

export type JobName = 'balance-report' | 'history-export' | 'reconcile' | 'low-balance';

export interface JobDef {
  name: JobName;
  cron: string | null;
  run: () => Promise<unknown>;
}

export interface ScheduledJobs {
  /** Jobs that are scheduled (switched on). */
  readonly names: JobName[];
  /** Resolves when every job queued so far (start-up catch-up included) has run. */
  idle(): Promise<void>;
  /**
   * Queues a job to run now (the console's "run now"), after any job already running, whether or
   * not it is scheduled; false when it cannot run here (low-balance without TOPUP_LOW_BALANCE_USD).
   */
  runNow(name: JobName, why: string): boolean;
  /** No new runs; waits (bounded) for the one running. */
  stop(graceMs?: number): Promise<void>;
}

interface ScheduleRecord {
  pattern: string;
  nextDue: number;
  /** The zone the pattern was read in (absent in records written before TOPUP_TIME_ZONE). */
  timeZone?: string;
}

export const scheduleKey = (name: JobName): string => `reports.${name}.schedule`;
export const lastRunKey = (name: JobName): string => `reports.${name}.lastRun`;
/** Wall ms of the job's last run that succeeded (the last run itself may have failed since). */
export const lastSuccessKey = (name: JobName): string => `reports.${name}.lastSuccess`;
export const JOB_NAMES: readonly JobName[] = ['balance-report', 'history-export', 'reconcile', 'low-balance'];

/** What the scheduled reports read and keep: the store's rows and meta (db: the history export writes its two meta records in one transaction), the unfinished batches (what each account has reserved; read only, never their leases), each account's client, settings, log, clock. */
type ReportParts = Pick<Runtime, 'accounts' | 'batches' | 'clock' | 'config' | 'db' | 'log' | 'meta' | 'rows'>;

export function defaultJobs(rt: ReportParts, notifier: Notifier): JobDef[] {
  const s = rt.config.schedules;
  return [
    { name: 'balance-report', cron: s.balanceReport.cron, run: () => runBalanceReport(rt) },
    { name: 'history-export', cron: s.historyExport.cron, run: () => runHistoryExport(rt) },
    { name: 'reconcile', cron: s.reconcile.cron, run: () => runReconcile(rt) },
    { name: 'low-balance', cron: rt.config.lowBalanceUsd === null ? null : s.lowBalance.cron, run: () => runLowBalanceCheck(rt, notifier) },
  ];
}

export function startScheduledJobs(rt: ReportParts, notifier: Notifier, jobs: JobDef[] = defaultJobs(rt, notifier)): ScheduledJobs {
  const log = rt.log.child({ component: 'reports' });
  const cronLog = {
    info: (m: string) => log.debug(m),
    warn: (m: string) => log.debug(m),
    error: (m: string | Error) => log.warn({ err: String(m) }, 'scheduler'),
    debug: () => {},
  };
  const tasks = new Map<JobName, ScheduledTask>();
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;

  const remember = (job: JobDef): void => {
    const next = tasks.get(job.name)?.getNextRun();
    if (next && job.cron) rt.meta.setJson(scheduleKey(job.name), { pattern: job.cron, nextDue: next.getTime(), timeZone: rt.config.timeZone } satisfies ScheduleRecord);
  };
  const runOne = async (job: JobDef, why: string): Promise<void> => {
    if (stopped) return;
    const started = rt.clock.now();
    try {
      const result = await job.run();
      rt.meta.setJson(lastRunKey(job.name), { at: started, ok: true });
      rt.meta.setJson(lastSuccessKey(job.name), started);
      log.info({ job: job.name, why, ms: rt.clock.now() - started, result }, `scheduled job ${job.name} done`);
    } catch (err) {
      const e = coerceError(err);
      rt.meta.setJson(lastRunKey(job.name), { at: started, ok: false, error: e.message });
      log.warn({ job: job.name, why, err: e.message }, `scheduled job ${job.name} failed; it runs again at its next time`);
    } finally {
      if (!stopped) remember(job);
    }
  };
  const enqueue = (job: JobDef, why: string): void => {
    chain = chain.then(() => runOne(job, why));
  };

  const now = rt.clock.now();
  for (const job of jobs) {
    if (!job.cron) continue;
    // Read in TOPUP_TIME_ZONE, not the process's TZ: "30 0 * * *" is 00:30 in the reseller's zone, the
    // zone the report days are in, so the export and reconciliation run just after the day they cover.
    const task = cron.schedule(job.cron, () => enqueue(job, 'schedule'), { name: job.name, noOverlap: true, logger: cronLog, timezone: rt.config.timeZone });
    tasks.set(job.name, task);
    const prev = rt.meta.getJson<ScheduleRecord>(scheduleKey(job.name));
    // A changed zone, like a changed expression, starts afresh: its old next time is not a missed run.
    if (prev && prev.pattern === job.cron && (prev.timeZone ?? rt.config.timeZone) === rt.config.timeZone && prev.nextDue <= now) {
      log.info({ job: job.name, due: new Date(prev.nextDue).toISOString() }, `missed schedule of ${job.name} while stopped: running it now`);
      enqueue(job, 'missed');
    } else {
      remember(job);
    }
  }
  log.info({ jobs: [...tasks.keys()], timeZone: rt.config.timeZone }, `scheduled jobs started (cron times in ${rt.config.timeZone})`);

  return {
    names: [...tasks.keys()],
    idle: () => chain,
    runNow(name, why) {
      const job = jobs.find((j) => j.name === name);
      if (!job || stopped || (name === 'low-balance' && rt.config.lowBalanceUsd === null)) return false;
      enqueue(job, why);
      return true;
    },
    async stop(graceMs = 3_000) {
      stopped = true;
      await Promise.all([...tasks.values()].map((t) => t.destroy()));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([chain, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    },
  };
}
