/**
 * /metrics in the Prometheus text format (prom-client), every name prefixed `topup_`. Labels
 * come from small fixed sets (row state, route, window, job …), never a batch, a file, a player
 * or an order: a label per batch would grow without end and leak what players buy.
 *
 * Two kinds of figures:
 *  - read from the store at scrape time (rows by state, batches, waits, the rate windows, pauses,
 *    jobs), so what another process on the home does (a `topup submit`) counts at once;
 *  - counted from this daemon's runner and notifier events (rows finished, USD spent and
 *    refunded, API calls, 429s, durations, notification failures): counters since this process
 *    started, as Prometheus expects counters to be (rate() copes with restarts).
 * The catalogue with each metric's meaning is in docs/notes/console.md.
 *
 * The API-call, rate and pause figures carry an `account` label: the supplier account's name from
 * accounts.toml, `default` for a home without it (a small fixed set, like the others).
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { Pauses } from '../account/pauses.js';
import type { RouteName } from '../api/client.js';
import type { RowMoved, RunnerView } from '../engine/events.js';
import type { Notifier } from '../notify/notifier.js';
import type { Batch } from '../store/batches.js';
import { FINAL_ROW_STATES } from '../store/rows.js';
import { rowMoney } from '../store/cost.js';
import { storeGauges, type GaugeDeps } from './store-gauges.js';
import { SlowReads } from './slow-reads.js';
import { webhookGauges } from './webhook-gauges.js';
import { CHECK_COUNTED, CHECK_SOURCES, onCheckCounted } from '../api/player-check-counts.js';

const ACTIVE_TOTALS = ['topup_nodejs_active_handles_total', 'topup_nodejs_active_requests_total', 'topup_nodejs_active_resources_total'] as const;

const ROUTES: readonly RouteName[] = ['services', 'products', 'my-ip', 'balance', 'submit', 'order', 'history', 'player-check'];

export interface MetricsDeps extends GaugeDeps {
  runner: RunnerView;
  notifier: Notifier;
}

/** `2xx` … `5xx`, or `no_answer` when none came (timeout, connection lost). */
export function outcomeClass(status: number | undefined): string {
  return status === undefined ? 'no_answer' : `${Math.floor(status / 100)}xx`;
}

export class Metrics {
  readonly registry = new Registry();
  /**
   * What this process knows in memory about its store (topup_store_writable …), rendered even when
   * the store cannot be read: a gauge reading a deleted or unreadable store fails the whole
   * registry's rendering (a 500), and then the scrape must still say why.
   */
  readonly #memory = new Registry();
  readonly #deps: MetricsDeps;
  readonly #releasers: (() => void)[] = [];
  readonly #slow: SlowReads;

  constructor(deps: MetricsDeps) {
    this.#deps = deps;
    this.#slow = new SlowReads(deps.rt.db, deps.rt.config.dbPath);
    // Event-loop lag is sampled once a second, not every 10 ms (prom-client's default): that
    // timer woke an idle daemon 100 times a second, 0.18 s of CPU per 30 s idle (measured;
    // 0.01 s without it). A stalled loop still shows: the sample that waited reports the stall.
    collectDefaultMetrics({ register: this.registry, prefix: 'topup_', eventLoopMonitoringPrecision: 1_000 });
    // Three of prom-client's gauges end in `_total`, which the exposition format keeps for counters
    // (`promtool check metrics` exits 3 on them). Each is the sum of the gauge of the same name
    // without `_total` (by `type`), which stays: sum(topup_nodejs_active_handles) is the same figure.
    for (const name of ACTIVE_TOTALS) this.registry.removeSingleMetric(name);
    storeGauges(this.registry, deps, this.#slow, this.#memory);
    this.registry.registerMetric(this.apiOrders);
    for (const answer of ['accepted', 'same']) this.apiOrders.inc({ answer }, 0);
    webhookGauges(this.registry, deps.rt, this.#slow);
  }

  /** POST /api/v1/orders answered (orderapi/api.ts): accepted, same, or the refusal's code. */
  readonly apiOrders = new Counter({ name: 'topup_api_orders_total', help: 'Orders posted to the order API, by answer: accepted (202), same (200: the same trxid and body again), or the refusal\'s code', labelNames: ['answer'], registers: [] });

  get contentType(): string {
    return this.registry.contentType;
  }

  async render(): Promise<string> {
    const memory = await this.#memory.metrics();
    try {
      return `${await this.registry.metrics()}${memory}`;
    } catch {
      // (The store's trouble is said by the runner's own line, the banner and the notification.)
      return memory;
    }
  }

  /** Starts counting the runner's and the notifier's events. */
  follow(): void {
    const { rt, runner, notifier } = this.#deps;
    const r = [this.registry];
    const finished = new Counter({ name: 'topup_rows_finished_total', help: 'Rows that reached an end in this process, by outcome (completed, cancelled, rejected, invalid, skipped, review)', labelNames: ['outcome'], registers: r });
    const spent = new Counter({ name: 'topup_spent_usd_total', help: 'USD charged for rows that ended in this process (completed, or cancelled without a refund)', registers: r });
    const refunded = new Counter({ name: 'topup_refunded_usd_total', help: 'USD refunded on orders that ended cancelled in this process', registers: r });
    const calls = new Counter({ name: 'topup_api_calls_total', help: 'API calls of this process by route, outcome class (2xx, 3xx, 4xx, 5xx, no_answer) and supplier account', labelNames: ['route', 'outcome', 'account'], registers: r });
    const limited = new Counter({ name: 'topup_api_rate_limited_total', help: 'API calls answered 429 (rate limited), by route and supplier account', labelNames: ['route', 'account'], registers: r });
    const took = new Histogram({
      name: 'topup_api_request_duration_seconds', help: 'How long API calls took, from leaving to the end of the answer, by route and supplier account', labelNames: ['route', 'account'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: r,
    });
    const pauses = new Counter({ name: 'topup_pauses_total', help: 'Times sending was paused (account problem, maintenance), by supplier account', labelNames: ['kind', 'account'], registers: r });
    // Defined once in player-check-counts.ts: sources, outcomes, and what `cached` counts.
    const checks = new Counter({ name: 'topup_player_checks_total', help: 'Player-name checks (/pubgvvfy, /mlvfy) by source (file, api) and outcome: found, not_found, in_doubt, refused, rate_limited (a call\'s answer; for the order API also not admitted by the rate gate in time), cached (answered with no call)', labelNames: ['source', 'outcome'], registers: r });
    const notifyFailed = new Counter({ name: 'topup_notification_failures_total', help: 'Notifications given up on after their retries, by target (webhook, telegram)', labelNames: ['target'], registers: r });
    // Zero from the start, so alerts on increase() see a series before the first event.
    for (const s of FINAL_ROW_STATES) finished.inc({ outcome: s }, 0);
    for (const a of rt.accounts) {
      for (const k of ['account', 'maintenance']) pauses.inc({ kind: k, account: a.id }, 0);
      for (const route of ROUTES) limited.inc({ route, account: a.id }, 0);
    }
    for (const target of ['webhook', 'telegram']) notifyFailed.inc({ target }, 0);
    for (const source of CHECK_SOURCES) for (const outcome of CHECK_COUNTED) checks.inc({ source, outcome }, 0);

    const onMoved = (m: RowMoved): void => {
      if (!FINAL_ROW_STATES.includes(m.to)) return;
      finished.inc({ outcome: m.to });
      if (m.to !== 'completed' && m.to !== 'cancelled') return;
      // The row as its move left it (RETURNING): no read of the row per order.
      const money = rowMoney({ state: m.to, ...m.money });
      if (money.netCents) spent.inc(money.netCents / 100);
      if (money.refundedCents) refunded.inc(money.refundedCents / 100);
    };
    // Rows stored already at their end (invalid; skipped as a repeat, or as a file already done)
    // never move in the state machine, so no row-moved event tells of them: they are counted when
    // this process stores their batch (the intake's batch-changed, before the batch finishes), once.
    const stored = new Set<string>();
    const onBatch = (b: Batch): void => {
      if (b.finishedAt !== null) return void stored.delete(b.id);
      if (b.state === 'claimed' || stored.has(b.id)) return;
      stored.add(b.id);
      const counts = rt.rows.counts(b.id);
      if (counts.invalid > 0) finished.inc({ outcome: 'invalid' }, counts.invalid);
      if (counts.skipped > 0) finished.inc({ outcome: 'skipped' }, counts.skipped);
    };
    // Each account's own calls (the runner's `call` event does not say which account made it).
    const onCall = (account: string) => (c: { route: string; status: number | undefined; ms: number }): void => {
      calls.inc({ route: c.route, outcome: outcomeClass(c.status), account });
      if (c.status === 429) limited.inc({ route: c.route, account });
      took.observe({ route: c.route, account }, c.ms / 1000);
    };
    // The `pause` event names its account; without it (an older emitter), the account whose stored
    // pause is this kind and code and began last.
    const onPause = (kind: string, code: string, _detail?: string, named?: unknown): void => {
      let account = typeof named === 'string' ? named : undefined;
      if (account === undefined) {
        let since = -Infinity;
        for (const a of rt.accounts) {
          const p = Pauses.read(rt.meta, a.id);
          if (p && p.kind === kind && p.code === code && p.since >= since) {
            since = p.since;
            account = a.id;
          }
        }
      }
      pauses.inc({ kind, account: account ?? rt.account.id });
    };
    runner.on('row-moved', onMoved);
    runner.on('batch-changed', onBatch);
    const callReleasers = rt.accounts.map((a) => a.onCall(onCall(a.id)));
    runner.on('pause', onPause);
    this.#releasers.push(
      () => runner.off('row-moved', onMoved),
      () => runner.off('batch-changed', onBatch),
      ...callReleasers,
      () => runner.off('pause', onPause),
      notifier.onFailure((target) => notifyFailed.inc({ target })),
      onCheckCounted((source, outcome, n) => checks.inc({ source, outcome }, n)),
    );
  }

  async close(): Promise<void> {
    for (const release of this.#releasers.splice(0)) release();
    this.registry.clear();
    await this.#slow.close();
  }
}
