/**
 * `topup daemon`: wiring. Config → (built-in sandbox when no API URL) → runtime → runner, with
 * the inbox watcher feeding it, signals stopping it, and the scheduled jobs beside it.
 *
 * Every part is registered, as it starts, with what releases it (kernel/shutdown.ts); the stop releases
 * them last-first, on a normal end, a signal, or a failed start alike.
 *
 * Stop: the first SIGTERM/SIGINT stops taking new work, lets calls in flight finish (bounded),
 * releases the batch leases and exits 0. A second signal exits at once; that is as safe as a
 * crash, which the store is built for.
 */
import { secretsOf, type Config } from './config/config.js';
import { createLogger, type Logger } from './kernel/log.js';
import { openRuntime, type Runtime } from './runtime.js';
import { checkStoreAtStart } from './store/start-check.js';
import { storeDownUntilRestart, type StoreDown } from './dispatch/store-health.js';
import { resolveApi } from './account/endpoint.js';
import { Runner } from './engine/runner.js';
import { eventsAreExact, listSettledFiles, RENAMED_SETTLE_MS, watchInbox } from './intake/watch.js';
import { writerCheckReach } from './intake/writers.js';
import { Notifier } from './notify/notifier.js';
import { runDoctor } from './ops/doctor.js';
import { startScheduledJobs } from './reports/schedule.js';
import { canonicalZone, parseTimeZone, TimeZone } from './kernel/time-zone.js';
import { useRollupZone } from './store/rollup-zone.js';
import { Releasers, onStopSignals } from './kernel/shutdown.js';
import { adoptOrphans } from './claim/orphans.js';
import { startBackupSchedule, startStoreMark } from './ops/backup-job.js';
import { noteOrphansForRestore, restorePending } from './ops/restore-reconcile.js';
import { recoverFromJournal, journalFiles } from './orders/journal.js';
import { announceDaemon } from './store/presence.js';
import { clearDaemonStarting } from './kernel/starting-mark.js';
import { logProgress } from './commands/progress-log.js';
import { startBusyCheckpoints, startUpkeep } from './store/upkeep.js';
import type { ScheduledJobs } from './reports/schedule.js';
import { startConsole } from './console/server.js';
import { createOrderDesk } from './orders/desk.js';
import { startDeliverer } from './webhooks/deliverer.js';
import { startReplication, stopStrayReplicator, type Replication } from './standby/litestream.js';
import { ExitCode } from './kernel/exit-codes.js';

export function rootLogger(config: Config): Logger {
  return createLogger({
    level: config.logLevel,
    secrets: secretsOf(config),
    base: config.sandbox ? { mode: 'SANDBOX' } : {},
  });
}

/** The quick self-check at start, each check one log line. */
async function selfCheck(rt: Pick<Runtime, 'account' | 'accounts' | 'batches' | 'clock' | 'config' | 'db' | 'log' | 'meta'>, log: Logger): Promise<void> {
  const report = await runDoctor(rt, { quick: true });
  for (const c of report.checks) {
    const level = c.ok ? 'info' : c.fatal ? 'error' : 'warn';
    log[level]({ check: c.name, ok: c.ok }, `doctor: ${c.name}: ${c.detail}`);
  }
}

export interface DaemonOptions {
  once: boolean;
}

/**
 * The daily roll-ups follow TOPUP_TIME_ZONE (store/rollup-zone.ts): rebuilt from the rows, once,
 * when the zone changed. And a TZ of the process that differs is named: before TOPUP_TIME_ZONE,
 * cron schedules were read in the process's TZ; now they are read in TOPUP_TIME_ZONE only.
 */
function keyRollupsInZone(rt: Pick<Runtime, 'clock' | 'config' | 'db'>, log: Logger): void {
  const zone = TimeZone.of(rt.config.timeZone);
  const change = useRollupZone(rt.db, zone, rt.clock.now());
  if (change.rebuilt) log.info({ from: change.from, to: change.to, ms: change.ms }, `daily roll-ups rebuilt for the days of ${change.to} (they were ${change.from} days)`);
  const tz = process.env.TZ === undefined ? null : canonicalZone(process.env.TZ.replace(/^:/, ''));
  const norm = tz === null ? null : parseTimeZone(tz);
  if (norm !== null && norm !== zone.name) {
    log.warn({ TZ: process.env.TZ, timeZone: zone.name }, `TZ=${process.env.TZ} is set but TOPUP_TIME_ZONE is ${zone.name}: cron schedules and report days are in ${zone.name}; set TOPUP_TIME_ZONE=${norm} for days and schedules in that zone`);
  }
}

export async function runDaemon(config: Config, opts: DaemonOptions, log = rootLogger(config)): Promise<number> {
  const parts = new Releasers();
  // How long each part of the start took, in the "topup daemon started" line (trial s36 D7: ~38 s
  // after a kill -9 at load 15, with no line until the end). `process`: node's own start, loading
  // the modules and reading the settings, until here.
  const startMs: Record<string, number> = { process: Math.round(process.uptime() * 1000) };
  let phaseAt = performance.now();
  const phase = (name: string): void => {
    const t = performance.now();
    startMs[name] = Math.round(t - phaseAt);
    phaseAt = t;
  };
  try {
    const api = await resolveApi(config, log);
    phase('api');
    parts.add('sandbox', () => api.sandbox?.close());
    // A replicated store (TOPUP_REPLICA, docs/standby.md): a litestream left by a daemon killed
    // before is stopped first; the fence is claimed below, before replication starts.
    const replicated = config.standby.replica !== null;
    if (replicated) stopStrayReplicator(config.home, log);
    const rt = openRuntime(config, log, api.url, {}, { replicated });
    phase('store');
    parts.add('store and account', () => rt.close());
    // Checkpointed and checked before anything can send (store/start-check.ts): a store with damaged pages stops the start.
    checkStoreAtStart(rt.db, log, { replicated });
    // Litestream beside the daemon (standby/litestream.ts). Registered right after the store, so it
    // is stopped after every other part's last write and before the store closes: its SIGTERM
    // ships what is left to the replica.
    let replication: Replication | null = null;
    // A home taken over by another node stops here (E_FENCED), before it replicates or sends.
    rt.fence?.claim(rt.clock.now(), log);
    if (replicated) {
      replication = startReplication(config, log);
      parts.add('replication', () => replication?.stop());
    }
    // Batches the database lost are claimed again before anything else looks at jobs/. Never a
    // reason not to start: what cannot be looked at is said, and the daemon runs on.
    // (A store older than this home's mark was marked for the reconcile-first start by openRuntime.)
    const orphans = await adoptOrphans(rt).catch((err: unknown) => void log.error({ err: (err as Error).message }, 'could not look for batch folders the database does not know'));
    if (orphans) noteOrphansForRestore(rt.meta, orphans);
    phase('orphans');
    parts.add('store generation', startStoreMark(rt));
    keyRollupsInZone(rt, log);
    await selfCheck(rt, log);
    phase('checks');

    // The reconcile after a restore accepts the journal's API orders again at each of its tries
    // (the desk exists by the time the runner runs).
    let deskForJournal: Parameters<typeof recoverFromJournal>[1] | null = null;
    const runner = new Runner(rt, { once: opts.once, recoverJournal: async () => (deskForJournal ? recoverFromJournal(rt, deskForJournal) : null) });
    // Taken over while running (standby/fence.ts): no send from here on (the sender and the
    // dispatch stage ask the fence), the replication stops at once (the replica is the new
    // primary's now), and the daemon stops with exit 5.
    let fenced = false;
    rt.fence?.onFenced((why) => {
      fenced = true;
      log.error({ fence: rt.fence?.path }, why);
      void replication?.stop();
      runner.stop();
    });
    rt.fence?.onUnreadable((why) => log.error({ fence: rt.fence?.path }, `${why}: nothing is sent until it can be read`));
    const notifier = new Notifier(config, log);
    notifier.follow(runner);
    parts.add('notifications', () => notifier.flush());
    const signals = onStopSignals(
      (signal) => {
        log.info({ signal }, 'stopping: no new work, waiting for calls in flight');
        runner.stop();
      },
      (signal) => log.warn({ signal }, 'second signal: exiting now (state is safe on disk)'),
    );
    parts.add('signal handler', () => signals.off());
    // The heartbeat carries a stop until a restart (the disk failed a write or a sync): only this
    // process knows it, and `topup status` / `topup doctor` read it there. Written at once when it
    // happens (the runner's `store` event), and again at every beat should that write fail.
    const storeStopped = (): StoreDown | null => {
      const down = runner.snapshot({ batches: false }).storeDown;
      return down && storeDownUntilRestart(down.code) ? down : null;
    };
    const presence = announceDaemon(rt.meta, rt.owner, { once: opts.once, storeStopped });
    const beatOnStop = (down: StoreDown | null): void => {
      if (down && storeDownUntilRestart(down.code)) presence.beat();
    };
    runner.on('store', beatOnStop);
    parts.add('presence', () => {
      runner.off('store', beatOnStop);
      presence();
    });
    clearDaemonStarting(config.jobsDir);
    parts.add('progress log', logProgress(runner, rt.rows, log, { text: process.stdout.isTTY === true }));
    const idle = (): boolean => {
      const s = runner.snapshot();
      return s.batches.length === 0 && s.inFlight === 0 && s.queuedFiles === 0;
    };
    const upkeep = startUpkeep(rt.db, log, idle, () => rt.account.scheduler.prune(), undefined, !replicated);
    parts.add('upkeep', () => upkeep.stop());
    // The log folded into the database by a worker while the daemon works (store/upkeep.ts).
    // Started while rows move (each move a write), ended when none has for a while.
    if (!replicated) {
      let moves = 0;
      let seen = 0;
      const moved = (): void => void moves++;
      runner.on('row-moved', moved);
      const checkpoints = startBusyCheckpoints(rt.db, config.dbPath, log, () => seen !== (seen = moves));
      parts.add('checkpoint worker', async () => {
        runner.off('row-moved', moved);
        await checkpoints.stop();
      });
    }
    // The order API's webhooks (webhooks/deliverer.ts), beside the runner and never awaited by it;
    // woken when a row moves, so a change is posted at once. Stopped before the store closes.
    // One desk for the API and the deliverer: an accepted order wakes both (its first event at once).
    let deliverer: ReturnType<typeof startDeliverer> | null = null;
    const desk = createOrderDesk(rt, () => {
      runner.wake();
      deliverer?.wake();
    });
    deliverer = startDeliverer(rt, desk);
    deskForJournal = desk;
    // A store restored from an older copy, or deleted: the API orders it lacks are accepted again
    // from the journal (orders/journal.ts) before the runner starts (which then reconciles first).
    if (restorePending(rt.meta)) {
      await recoverFromJournal(rt, desk).catch((err: unknown) => void log.error({ err: (err as Error).message }, 'could not read the order API journal'));
    }
    // The API's first order after a (re)start need not wait for the catalog and the balance.
    if (config.console) desk.warm();
    // Only a move of an order API row makes an event (the trigger rows_api_event_update), and those
    // rows live in the API's day batches: a file's rows (hundreds a second at scale) do not wake it,
    // each wake being a look at the outbox (2 % of the main thread at 400 orders/s, issue 34). A
    // wake missed would cost a delay, never an event: the deliverer also looks on its own interval.
    const apiBatch = new Map<string, boolean>();
    const wakeDeliverer = ({ batchId }: { batchId: string }): void => {
      let api = apiBatch.get(batchId);
      if (api === undefined) {
        if (apiBatch.size > 10_000) apiBatch.clear();
        api = (rt.batches.get(batchId)?.apiDay ?? null) !== null;
        apiBatch.set(batchId, api);
      }
      if (api) deliverer?.wake();
    };
    runner.on('row-moved', wakeDeliverer);
    parts.add('webhook deliverer', async () => {
      runner.off('row-moved', wakeDeliverer);
      await deliverer?.stop();
    });

    let consoleUrl: string | undefined;
    // What the inbox can see of a file still being written (intake/watch.ts, writers.ts): said
    // once, so a reseller on a system where it sees less knows to rename files in.
    const [exact, writers] = await Promise.all([eventsAreExact(config.inboxDir), writerCheckReach()]);
    const short = Math.min(config.settleMs, RENAMED_SETTLE_MS);
    const rule = opts.once
      ? `a file is taken once it has gone ${config.settleMs} ms without a write${exact ? ` (after ${short} ms unchanged when its last write is older)` : ''}`
      : exact
        ? `a file renamed in is taken after ${short} ms unchanged, one written in place after ${config.settleMs} ms without a write`
        : `every file is taken after ${config.settleMs} ms without a write (this filesystem does not report every write, so a file renamed in cannot be told apart)`;
    log.info({ settleMs: config.settleMs, renamedInMs: short, exactEvents: exact, openForWriting: writers.reach }, `inbox: ${rule}; ${writers.detail}`);
    const inboxOpts = {
      settleMs: config.settleMs,
      onIgnored: (path: string, why: string) => log.info({ file: path, why }, 'ignored a file in the inbox'),
      onWaiting: (path: string, why: string) => log.info({ file: path, why }, 'a file in the inbox is not taken yet'),
    };
    if (opts.once) {
      for (const f of await listSettledFiles(config.inboxDir, inboxOpts)) runner.offerFile(f.path, f.hash);
    } else {
      // The watcher also lists the inbox every few seconds: an event can be missed, and a network
      // filesystem gives none for files written on the far side.
      const watcher = watchInbox(config.inboxDir, (path, settled) => runner.offerFile(path, settled.hash), inboxOpts);
      parts.add('inbox watcher', () => watcher.close());
      const jobs = startScheduledJobs(rt, notifier);
      parts.add('scheduled jobs', () => jobs.stop());
      const backups = startBackupSchedule(rt, { journalFiles: () => journalFiles(config.jobsDir, rt.clock.now()) });
      if (backups) parts.add('scheduled backups', backups);
      // The console (and /metrics): beside the runner, never for --once (it would vanish when the batches end).
      if (config.console) {
        const web = await startConsole({ rt, runner, jobs: jobs as ScheduledJobs, notifier, settings: config.console, sandbox: api.sandbox });
        if (web) {
          parts.add('console', () => web.close());
          consoleUrl = web.url;
        }
      }
    }
    // Every account's API, not only the first's (trial s35: a two-account home named only one).
    const apis = rt.accounts.length > 1 ? rt.accounts.map((a) => `${a.id} ${a.setting.url ?? 'SANDBOX'}`).join(', ') : config.sandbox ? 'SANDBOX' : config.apiUrl;
    phase('rest');
    log.info({ home: config.home, api: apis, once: opts.once, console: consoleUrl, startMs }, 'topup daemon started');
    await runner.run();
    await parts.releaseAll(log);
    if (fenced) {
      log.error('topup daemon stopped: this home was taken over by another node (exit 5)');
      return ExitCode.Locked;
    }
    log.info('topup daemon stopped');
    return 0;
  } finally {
    await parts.releaseAll(log);
  }
}
