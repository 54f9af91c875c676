/**
 * The gauges read at scrape time: from the store (shared by every process on the home) and from
 * the runner's snapshot (this process). Each is one indexed query or an aggregate over the
 * unfinished batches, so a scrape every 15 s costs the daemon next to nothing.
 */
import { Gauge, type Registry } from 'prom-client';
import { Pauses } from '../account/pauses.js';
import { JOB_NAMES, lastRunKey, lastSuccessKey } from '../reports/schedule.js';
import { LAST_BACKUP_KEY, type BackupRecord } from '../store/backup.js';
import { replicaLag } from '../standby/litestream.js';
import { MIRROR_TROUBLE_KEY, type MirrorTrouble } from '../orders/journal.js';
import { BATCH_STATES } from '../store/batch-states.js';
import { ROW_STATES } from '../store/rows.js';
import type { RunnerView } from '../engine/events.js';
import type { Runtime } from '../runtime.js';
import type { Listing } from '../store/listing.js';
import type { SlowReads } from './slow-reads.js';

/** Each supplier account's freshest balance reading (null until its first). */
export type BalanceSource = () => readonly { account: string; reading: { usd: number; at: number } | null }[];

/** What the gauges read at scrape time. */
export interface GaugeDeps {
  rt: Pick<Runtime, 'account' | 'accounts' | 'clock' | 'config' | 'db' | 'meta' | 'rows'>;
  runner: Pick<RunnerView, 'snapshot'>;
  listing: Listing;
  balances: BalanceSource;
}

const WAIT_REASONS = ['balance', 'catalog', 'maintenance', 'account'] as const;

/** `1000` → `1s`, `60000` → `1m`: the window as TOPUP_RATE_LIMITS writes it. */
export function windowLabel(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

export function storeGauges(registry: Registry, deps: GaugeDeps, slow: SlowReads, memory: Registry = registry): void {
  const { rt, runner, listing, balances } = deps;
  const r = [registry];
  const seconds = (ms: number): number => Math.max(0, ms) / 1000;

  new Gauge({
    name: 'topup_rows', help: 'Rows in the store by state (every batch, every process on this home)', labelNames: ['state'], registers: r,
    async collect() {
      const counts = new Map((await slow.query<{ state: string; n: number }>('rowsByState')).map((r) => [r.state, r.n]));
      for (const s of ROW_STATES) this.set({ state: s }, counts.get(s) ?? 0);
    },
  });
  new Gauge({
    name: 'topup_batches', help: 'Batches by state and the reason they wait (none when not waiting)', labelNames: ['state', 'wait_reason'], registers: r,
    collect() {
      this.reset();
      for (const s of BATCH_STATES) this.set({ state: s, wait_reason: 'none' }, 0);
      for (const b of listing.batchesByState()) this.inc({ state: b.state, wait_reason: b.wait ?? 'none' }, b.n);
    },
  });
  new Gauge({
    name: 'topup_batch_wait_longest_seconds', help: 'How long the unfinished batch that has waited longest for this reason has waited (0: none waits)', labelNames: ['reason'], registers: r,
    collect() {
      const since = listing.longestWaits();
      const now = rt.clock.now();
      for (const w of WAIT_REASONS) this.set({ reason: w }, since[w] === undefined ? 0 : seconds(now - since[w]));
    },
  });
  new Gauge({
    name: 'topup_oldest_pending_row_age_seconds', help: 'Age of the oldest row not yet at an end (pending, on its way or followed), counted from when its batch was claimed; 0 when none', registers: r,
    collect() {
      const since = listing.oldestLiveRowSince();
      this.set(since === null ? 0 : seconds(rt.clock.now() - since));
    },
  });
  new Gauge({
    name: 'topup_reserved_usd', help: 'USD the unfinished batches that hold money (not those waiting for balance) still have to spend on rows not sent yet', registers: r,
    collect() {
      this.set(rt.rows.reservedUsd());
    },
  });
  new Gauge({
    name: 'topup_waiting_for_balance_usd', help: 'USD of the rows not sent yet of the batches waiting for balance (nothing is set aside for them: not in topup_reserved_usd)', registers: r,
    collect() {
      this.set(rt.rows.waitingForBalanceUsd());
    },
  });
  const mode = rt.config.sandbox ? 'SANDBOX' : 'LIVE';
  // Per supplier account (label `account`, `default` without accounts.toml): each account's own
  // balance, never a sum (a home with several accounts has several balances).
  new Gauge({
    name: 'topup_balance_usd', help: 'Each supplier account\'s balance at its last reading (absent until the first)', labelNames: ['mode', 'account'], registers: r,
    collect() {
      this.reset();
      for (const b of balances()) if (b.reading) this.set({ mode, account: b.account }, b.reading.usd);
    },
  });
  new Gauge({
    name: 'topup_balance_age_seconds', help: 'Seconds since each supplier account\'s balance was last read (absent until its first reading)', labelNames: ['mode', 'account'], registers: r,
    collect() {
      this.reset();
      for (const b of balances()) if (b.reading) this.set({ mode, account: b.account }, seconds(rt.clock.now() - b.reading.at));
    },
  });
  // Per supplier account: each has its own rate budget, hold and pause (label `account`).
  new Gauge({
    name: 'topup_rate_window_calls', help: 'API calls started within each rate window, per supplier account (every process on this home)', labelNames: ['window', 'account'], registers: r,
    collect() {
      this.reset();
      for (const a of rt.accounts) for (const w of a.scheduler.windows) this.set({ window: windowLabel(w.windowMs), account: a.id }, a.scheduler.callsWithin(w.windowMs));
    },
  });
  new Gauge({
    name: 'topup_rate_window_limit', help: 'Calls allowed per rate window, per supplier account (given, or learned from 429s)', labelNames: ['window', 'account'], registers: r,
    collect() {
      this.reset();
      for (const a of rt.accounts) for (const w of a.scheduler.windows) this.set({ window: windowLabel(w.windowMs), account: a.id }, w.limit);
    },
  });
  new Gauge({
    name: 'topup_rate_hold_seconds', help: 'Seconds left of a Retry-After hold, per supplier account (0: none)', labelNames: ['account'], registers: r,
    collect() {
      for (const a of rt.accounts) this.set({ account: a.id }, seconds(a.scheduler.holdRemainingMs()));
    },
  });
  new Gauge({
    name: 'topup_calls_waiting', help: 'Calls of this process waiting for the rate budget, per supplier account', labelNames: ['account'], registers: r,
    collect() {
      for (const a of rt.accounts) this.set({ account: a.id }, a.scheduler.waiting);
    },
  });
  new Gauge({
    name: 'topup_orders_in_flight', help: 'Order requests of this process on their way', registers: r,
    collect() {
      this.set(runner.snapshot({ batches: false }).inFlight);
    },
  });
  new Gauge({
    name: 'topup_paused', help: 'Sending paused for this reason (1) or not (0), per supplier account: account problem, maintenance, operator (topup account pause)', labelNames: ['kind', 'account'], registers: r,
    collect() {
      for (const a of rt.accounts) {
        const p = Pauses.read(rt.meta, a.id);
        for (const k of ['account', 'maintenance', 'operator'] as const) this.set({ kind: k, account: a.id }, p?.kind === k ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'topup_pause_seconds', help: 'How long the current pause has lasted, per supplier account (0: none)', labelNames: ['kind', 'account'], registers: r,
    collect() {
      for (const a of rt.accounts) {
        const p = Pauses.read(rt.meta, a.id);
        for (const k of ['account', 'maintenance', 'operator'] as const) this.set({ kind: k, account: a.id }, p?.kind === k ? seconds(rt.clock.now() - p.since) : 0);
      }
    },
  });
  new Gauge({
    name: 'topup_job_last_success_timestamp_seconds', help: 'When each scheduled job last ran successfully (Unix seconds; absent: never)', labelNames: ['job'], registers: r,
    collect() {
      this.reset();
      for (const j of JOB_NAMES) {
        const at = rt.meta.getJson<number>(lastSuccessKey(j)) ?? (rt.meta.getJson<{ at: number; ok: boolean }>(lastRunKey(j))?.ok ? rt.meta.getJson<{ at: number }>(lastRunKey(j))!.at : undefined);
        if (at !== undefined) this.set({ job: j }, at / 1000);
      }
    },
  });
  new Gauge({
    name: 'topup_job_last_run_ok', help: 'Whether each scheduled job\'s last run succeeded (1) or failed (0); absent: never ran', labelNames: ['job'], registers: r,
    collect() {
      this.reset();
      for (const j of JOB_NAMES) {
        const last = rt.meta.getJson<{ ok: boolean }>(lastRunKey(j));
        if (last) this.set({ job: j }, last.ok ? 1 : 0);
      }
    },
  });
  // From this process's memory, not the store: the store is what cannot be written (dispatch/store-health.ts).
  new Gauge({
    name: 'topup_store_writable',
    help: 'Whether this daemon can write its store (1), or not (0: disk full, read-only or the file gone; sending is stopped until it can). Alert: deploy/prometheus/topup-alerts.yml TopupStoreUnwritable',
    labelNames: ['code'], registers: [memory],
    collect() {
      this.reset();
      const down = runner.snapshot({ batches: false }).storeDown;
      this.set({ code: down ? down.code : 'none' }, down ? 0 : 1);
    },
  });
  new Gauge({
    name: 'topup_store_unwritable_since_timestamp_seconds',
    help: 'Since when the store cannot be written (Unix seconds); absent while it can',
    registers: [memory],
    collect() {
      this.reset();
      const down = runner.snapshot({ batches: false }).storeDown;
      if (down) this.set(down.since / 1000);
    },
  });
  // A warm standby's replica (a folder: docs/standby.md), read from Litestream's files there.
  const replicaDir = rt.config.standby.replica?.dir ?? '';
  if (replicaDir !== '') {
    new Gauge({
      name: 'topup_replica_lag_seconds',
      help: 'Seconds of store changes the Litestream replica lacks (the store\'s newest change minus the newest file Litestream shipped; 0 when caught up): what a takeover now would lose. Alert: deploy/prometheus/topup-alerts.yml TopupReplicaLagging',
      registers: [memory],
      collect() {
        this.reset();
        const lag = replicaLag(replicaDir, rt.config.dbPath).lagSeconds;
        if (lag !== null) this.set(lag);
      },
    });
    new Gauge({
      name: 'topup_api_journal_mirror_writable',
      help: 'Whether the last write of accepted order API orders beside the replica (<replica>/api-journal/) succeeded (1) or failed (0: a takeover, or a restore after this disk is lost, would not find the orders accepted since; topup doctor names the error)',
      registers: r,
      collect() {
        this.set(rt.meta.getJson<MirrorTrouble>(MIRROR_TROUBLE_KEY) ? 0 : 1);
      },
    });
    new Gauge({
      name: 'topup_replica_last_shipped_timestamp_seconds',
      help: 'When Litestream last wrote a WAL segment or snapshot into the replica (Unix seconds); absent: no generation yet',
      registers: [memory],
      collect() {
        this.reset();
        const at = replicaLag(replicaDir, rt.config.dbPath).shippedAt;
        if (at !== null) this.set(at / 1000);
      },
    });
  }
  new Gauge({
    name: 'topup_backup_last_success_timestamp_seconds',
    help: 'When the last backup that was written and verified was taken (Unix seconds; absent: never). Alert on its age (deploy/prometheus/topup-alerts.yml, TopupBackupOld)',
    registers: r,
    collect() {
      this.reset();
      const last = rt.meta.getJson<BackupRecord>(LAST_BACKUP_KEY);
      if (last) this.set(last.takenAt / 1000);
    },
  });
}
